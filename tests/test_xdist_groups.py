"""The suite's split between pytest-xdist workers (the root ``conftest.py``)."""

from __future__ import annotations

import importlib.util
import re

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

_spec = importlib.util.spec_from_file_location("root_conftest", bs.REPO_ROOT / "conftest.py")
root = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(root)


def test_every_test_file_of_the_built_book_is_in_the_book_group():
    # build_book caches the build in its process: a test file that uses it
    # outside the group would build the book a second time on another worker.
    users = {
        path.relative_to(bs.REPO_ROOT).as_posix()
        for path in (bs.REPO_ROOT / "tests").glob("test_*.py")
        if re.search(r"\bbuild_book\(", path.read_text(encoding="utf-8"))
    }
    assert users, "no test builds the book"
    assert users <= root.BOOK_FILES, sorted(users - root.BOOK_FILES)


def test_longest_groups_come_first_and_chapters_before_the_rest():
    groups = [
        "tests/test_attention.py",
        "notebooks/02_multi_head_attention.ipynb",
        "tests/test_colab_setup.py",
        "notebooks/07_training.ipynb",
        "book",
        "notebooks/01_attention.ipynb",
        "tests/test_jupyterlab.py",
    ]
    assert sorted(groups, key=root.rank) == [
        "book",
        "tests/test_jupyterlab.py",
        "tests/test_colab_setup.py",
        "notebooks/07_training.ipynb",
        "notebooks/01_attention.ipynb",
        "notebooks/02_multi_head_attention.ipynb",
        "tests/test_attention.py",
    ]
