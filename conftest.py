"""How the suite is split between pytest-xdist workers (``.ci/test`` runs
``pytest -n <cores> --dist loadgroup``).

This file sits at the repository root so that it also sees nbval's items
(``notebooks/*.ipynb``). Every item gets an ``xdist_group``:

* ``book``: every test of the built book (``test_book.py``, ``test_browser.py``,
  ``test_notebook_markdown.py``, ``test_live_translator.py``). ``book_support.build_book`` caches the build
  in its process, so one worker must run them all: the book is built once.
* the notebook's path, for nbval's cells: a chapter's cells share one kernel,
  in order, on one worker.
* the test file's path for every other test (like ``--dist loadfile``), so a
  module's fixtures (a JupyterLab server, a trained model) are made once.

Under xdist the groups are then ordered longest first (the book group and the
JupyterLab run of every chapter, the two longest, start at once on the two
workers; ``--no-loadscope-reorder`` keeps this order, which xdist would
otherwise sort by number of tests). Without ``-n`` nothing is reordered and the
marks do nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# Tests that use book_support.build_book (one build per process; a test in
# tests/test_xdist_groups.py finds them).
BOOK_FILES = {
    "tests/test_book.py",
    "tests/test_browser.py",
    "tests/test_notebook_markdown.py",
    "tests/test_live_translator.py",
}
# Longest first, by serial runs' --durations (roughly: the book build and its
# browser test 4-5 min, every chapter in JupyterLab 5 min, the Colab test, a
# fresh environment running Chapter 1, 1 min; Chapter 7 the longest nbval),
# then nbval of each chapter, then the rest.
FIRST = ["book", "tests/test_jupyterlab.py", "tests/test_colab_setup.py"]
ROOT = Path(__file__).resolve().parent


def group_of(item: pytest.Item) -> str:
    path = Path(str(item.path)).resolve()
    try:
        name = path.relative_to(ROOT).as_posix()
    except ValueError:
        name = path.as_posix()
    return "book" if name in BOOK_FILES else name


def rank(group: str) -> tuple[int, str]:
    if group in FIRST:
        return FIRST.index(group), ""
    if group.endswith(".ipynb"):
        # Chapter 7 trains and runs longest; the others in chapter order.
        return len(FIRST), "" if group.endswith("07_training.ipynb") else group
    return len(FIRST) + 1, group


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(item)))
    if hasattr(config, "workerinput"):  # an xdist worker
        # Stable: the items of one group (nbval's cells) keep their order.
        items.sort(key=lambda item: rank(group_of(item)))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): run on one pytest-xdist worker together")
