"""How the suite is split between pytest-xdist workers (``.ci/test`` runs
``pytest -n <cores> --dist loadgroup``).

This file sits at the repository root so that it also sees nbval's items
(``notebooks/*.ipynb``). Every test belongs to one group (:func:`group_of`), and
a group runs whole on one worker:

* ``book``: every test of the built book (``test_book.py``, ``test_browser.py``,
  ``test_notebook_markdown.py``, ``test_live_translator.py``). ``book_support.build_book`` caches the build
  in its process, so one worker must run them all: the book is built once.
* the notebook's path, for nbval's cells: a chapter's cells share one kernel,
  in order, on one worker.
* ``tests/colab``: every test of the Colab stand-in (``tests/colab/``), which
  share one environment built for the session (its conftest.py).
* the test file's path for every other test (like ``--dist loadfile``), so a
  module's fixtures (a JupyterLab server, a trained model) are made once.

Under ``--dist loadgroup`` the scheduler below reads the group from each
test's node id. We do not rely on xdist's own ``xdist_group`` marks: xdist
3.8 passes them to its scheduler by appending ``@group`` to the node id in the
worker, and from pytest 9.2 on (structured node ids) that write is ignored, so
the marks silently stop grouping (pytest-xdist issue 1386) and a chapter's
cells land on two workers, where the second kernel never ran the imports.
``tests/book/test_xdist_groups.py`` runs a notebook under ``-n 2`` and fails if its
cells are split.

The groups are then ordered longest first (the book group and the Colab
stand-in, the two longest, start at once on the two workers;
``--no-loadscope-reorder`` keeps this order, which xdist would otherwise sort
by number of tests). Without ``-n`` nothing is reordered.

Outputs that depend on the device
---------------------------------
A chapter's stored outputs are the CPU's. Where a GPU runs the chapter (the
training and decoding of Chapters 7 and 8 use CUDA when it is there), a few
cells print numbers that the GPU's kernels round differently. Such a cell
carries the tag ``output-depends-on-device`` in its metadata: on a machine
where PyTorch sees CUDA, nbval still runs it and every assert in it must hold,
but its output is not compared. Everywhere else it is compared like any cell.
"""

from __future__ import annotations

import pytest

# Tests that use book_support.build_book (one build per process; a test in
# tests/book/test_xdist_groups.py finds them).
BOOK_FILES = {
    "tests/book/test_book.py",
    "tests/book/test_browser.py",
    "tests/book/test_notebook_markdown.py",
    "tests/book/test_live_translator.py",
    "tests/book/test_korean_edition.py",
}
# Longest first, by serial runs' --durations (roughly: the book build and its
# browser test of both editions 8-9 min; the Colab stand-in, its setup cell and
# three notebooks in the classic Notebook, 4-5 min; JupyterLab, 2-3 min;
# Chapter 7 the longest nbval), then nbval of each chapter, then the rest.
FIRST = ["book", "tests/colab", "tests/book/test_jupyterlab.py"]
COLAB_DIR = "tests/colab/"


def group_of(nodeid: str) -> str:
    """The group of a test: ``book``, or the file (test module or notebook) it is in.

    Args:
        nodeid: pytest's node id, relative to the repository root
            (``notebooks/01_attention.ipynb::Cell 3``).
    """
    path = nodeid.split("::", 1)[0]
    if path in BOOK_FILES:
        return "book"
    return "tests/colab" if path.startswith(COLAB_DIR) else path


def rank(group: str) -> tuple[int, str]:
    """Sort key of a group: the longest first, then chapters in order, then the rest."""
    if group in FIRST:
        return FIRST.index(group), ""
    if group.endswith(".ipynb"):
        # Chapter 7 trains and runs longest; the others in chapter order.
        return len(FIRST), "" if group.endswith("07_training.ipynb") else group
    return len(FIRST) + 1, group


DEVICE_TAG = "output-depends-on-device"


def _runs_on_cuda() -> bool:
    import torch  # only when a tagged cell is collected

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tagged = [item for item in items if DEVICE_TAG in getattr(getattr(item, "cell", None), "metadata", {}).get("tags", ())]
    if tagged and _runs_on_cuda():
        for item in tagged:
            item.options["check"] = False  # nbval: run the cell, do not compare its output
    if hasattr(config, "workerinput"):  # an xdist worker
        # Every worker sorts the same way, so their collections still agree.
        # Stable: the items of one group (nbval's cells) keep their order.
        items.sort(key=lambda item: rank(group_of(item.nodeid)))


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # a hook of pytest-xdist, absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """xdist's scope scheduler with this file's groups as the scopes."""

        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return GroupScheduling(config, log)
