"""The setup cell in a stand-in for Colab: Colab's versions, the cell run as a reader runs it.

The stand-in (``colab_support.build``) is a fresh environment with the
versions of Colab's published package list that the book touches
(``colab-packages.txt``: PyTorch 2.11.0, NumPy 2.1.3, Matplotlib 3.10.0,
Plotly 5.24.1, tqdm, tokenizers, ipywidgets 7.7.1, widgetsnbextension 3.6.10,
notebook 6.5.7, ipykernel 6.17.1) on Python 3.13 where the machine has it.
Starting from that clean state, the notebooks' setup cell (one text in all 20
notebooks: ``test_setup_cells.py``) runs in a kernel of the stand-in with
``TRANSFORMER_EDU_SOURCE`` set to a copy of this checkout (GitHub is never
asked). Then:

* the cell printed nothing and raised nothing;
* no package that was there before it changed version (added packages are
  allowed: Colab lacks onnxruntime and sacrebleu);
* ``transformer_edu`` is installed, into the stand-in, at this release;
* run again, the cell does nothing (it would fail if it tried to install).

Every chapter then runs in the stand-in, through the classic Notebook's
front end: ``test_classic_notebook.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

if __package__:
    from . import colab_support as cs
else:
    import colab_support as cs


def test_standin_has_colabs_versions_and_not_the_package(standin):
    pins = cs.pinned()
    assert {name: standin.before.get(name) for name in pins} == pins
    assert "transformer-edu" not in standin.before
    assert "pip" in standin.before  # the setup cell calls python -m pip, as on Colab


def test_standin_runs_colabs_python_where_the_machine_has_it(standin):
    python, version = cs.find_python()
    assert standin.version == version
    if version[:2] != cs.COLAB_PYTHON:
        print(f"note: no Python 3.13 here; the stand-in runs Python {'.'.join(map(str, version))}")
    assert version >= (3, 11)


def test_setup_cell_prints_nothing_and_raises_nothing(installed):
    assert installed["outputs"] == [], cs.text_of(installed["outputs"])


def test_setup_cell_changes_no_preinstalled_package(standin, installed):
    changed = {
        name: (version, installed["after"].get(name))
        for name, version in standin.before.items()
        if installed["after"].get(name) != version
    }
    assert changed == {}, f"the setup cell changed (before, after): {changed}"
    added = sorted(set(installed["after"]) - set(standin.before))
    print(f"added by the setup cell: {', '.join(added)}")
    assert {"transformer-edu", "onnxruntime", "sacrebleu"} <= set(added)


def test_setup_cell_installs_this_release_into_the_standin(standin, installed):
    assert installed["after"]["transformer-edu"] == cs.setup_cells.pyproject_version()
    where = subprocess.run(
        [str(standin.python), "-c", "import transformer_edu as t; print(t.__file__, t.__version__)"],
        env=standin.env(), cwd=installed["home"], capture_output=True, text=True, timeout=300,
    )
    assert where.returncode == 0, where.stderr[-3000:]
    path, version = where.stdout.split()
    assert standin.venv.resolve() in Path(path).resolve().parents
    assert cs.REPO_ROOT not in Path(path).resolve().parents
    assert version == cs.setup_cells.pyproject_version()


def test_setup_cell_does_nothing_once_installed(standin, installed, tmp_path):
    env = standin.env(TRANSFORMER_EDU_SOURCE=str(tmp_path / "does-not-exist"))
    notebook = cs.run_cells([cs.setup_source()], standin.python, env, tmp_path, timeout=300)
    assert notebook.cells[0].outputs == []
    assert cs.freeze(standin.python) == installed["after"]
