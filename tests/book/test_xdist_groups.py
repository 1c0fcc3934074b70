"""The suite's split between pytest-xdist workers (the root ``conftest.py``)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys

import nbformat

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
        for path in (bs.REPO_ROOT / "tests").rglob("test_*.py")
        if re.search(r"\bbuild_book\(", path.read_text(encoding="utf-8"))
    }
    assert users, "no test builds the book"
    assert users <= root.BOOK_FILES, sorted(users - root.BOOK_FILES)


def test_longest_groups_come_first_and_chapters_before_the_rest():
    groups = [
        "tests/unit/test_attention.py",
        "notebooks/02_multi_head_attention.ipynb",
        "tests/colab",
        "notebooks/07_training.ipynb",
        "book",
        "notebooks/01_attention.ipynb",
        "tests/book/test_jupyterlab.py",
    ]
    assert sorted(groups, key=root.rank) == [
        "book",
        "tests/colab",
        "tests/book/test_jupyterlab.py",
        "notebooks/07_training.ipynb",
        "notebooks/01_attention.ipynb",
        "notebooks/02_multi_head_attention.ipynb",
        "tests/unit/test_attention.py",
    ]


def test_the_colab_tests_share_one_group():
    # tests/colab/conftest.py builds the stand-in once per session: one worker.
    for nodeid in ("tests/colab/test_setup_cells.py::test_x", "tests/colab/test_classic_notebook.py::t[a]"):
        assert root.group_of(nodeid) == "tests/colab"
    assert root.group_of("tests/book/test_book.py::test_x") == "book"
    assert root.group_of("tests/unit/test_masks.py::test_x") == "tests/unit/test_masks.py"


def test_ci_runs_the_groups_with_loadgroup_in_order():
    # The scheduler of conftest.py answers --dist loadgroup only, and the
    # longest-first order holds only without xdist's reordering.
    test_command = (bs.REPO_ROOT / ".ci" / "test").read_text(encoding="utf-8")
    assert "--dist loadgroup" in test_command
    assert "--no-loadscope-reorder" in test_command


def test_a_notebooks_cells_run_on_one_worker(tmp_path):
    # A notebook whose every cell after the first needs the first cell's
    # variables, beside a test file, run as .ci/test runs the suite on two
    # workers. Split cells fail with NameError; the -v report also says where
    # each cell ran (pytest 9.2 prints the node id as chapter::ipynb).
    shutil.copy(bs.REPO_ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    cells = 12
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import os\npid = os.getpid()\nseen = 1")] + [
        nbformat.v4.new_code_cell("assert os.getpid() == pid\nseen += 1") for _ in range(cells - 1)
    ]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(notebook, tmp_path / "notebooks" / "chapter.ipynb")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_other.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('i', range(12))\ndef test_other(i):\n    pass\n",
        encoding="utf-8",
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "tests", "notebooks", "--nbval", "--nbval-current-env",
         "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder",
         "-v", "-o", "console_output_style=classic"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    report = result.stdout + result.stderr
    workers = {
        int(cell): worker
        for worker, cell in re.findall(r"\[(gw\d+)\][^\n]*?PASSED notebooks/chapter(?:\.|::)ipynb::Cell (\d+)", report)
    }
    assert result.returncode == 0, report[-4000:]
    assert sorted(workers) == list(range(cells)), report[-4000:]
    assert len(set(workers.values())) == 1, f"cells split between workers: {workers}"
    other = set(re.findall(r"\[(gw\d+)\][^\n]*?PASSED tests/test_other\.py", report))
    assert len(other) == 1, f"one test file, one worker: {other}"


class _Cell:
    def __init__(self, tags):
        self.metadata = {"tags": tags} if tags is not None else {}


class _Item:
    """What the hook reads of an nbval cell item (or of a test function: no ``cell``)."""

    def __init__(self, nodeid, tags=None, notebook=True):
        self.nodeid = nodeid
        if notebook:
            self.cell = _Cell(tags)
            self.options = {"check": True, "skip": False}


def test_device_dependent_outputs_are_compared_on_a_cpu_and_not_on_cuda(monkeypatch):
    def collect(on_cuda):
        monkeypatch.setattr(root, "_runs_on_cuda", lambda: on_cuda)
        items = [_Item("notebooks/06_decoder.ipynb::Cell 5", [root.DEVICE_TAG]),
                 _Item("notebooks/06_decoder.ipynb::Cell 6", ["hide-input"]),
                 _Item("notebooks/06_decoder.ipynb::Cell 7"),
                 _Item("tests/unit/test_model.py::test_x", notebook=False)]
        root.pytest_collection_modifyitems(object(), items)  # not an xdist worker: no reordering
        return [item.options["check"] for item in items[:3]]

    assert collect(on_cuda=False) == [True, True, True]
    assert collect(on_cuda=True) == [False, True, True]  # only the tagged cell, and it still runs


def test_only_cells_whose_output_names_the_device_are_tagged():
    # The tag hides a cell's output from nbval on a GPU: keep it to the cells measured to
    # differ there (CONTRIBUTING.md, "On a GPU"), not a blanket over a chapter.
    tagged = {
        f"{path.name}::{index}"
        for path in bs.chapter_notebooks()
        for index, cell in enumerate(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        if root.DEVICE_TAG in cell.metadata.get("tags", [])
    }
    assert tagged == {"06_decoder.ipynb::5"}
