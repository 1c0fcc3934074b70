"""Every notebook's setup cell is the one of scripts/setup_cells.py, at the package's version.

The cell installs ``transformer_edu`` at the notebook's release
(``git+<repository>@v<version>``), so a notebook saved to Drive or downloaded
from the site keeps getting the package it was written for. Here:

* each of the 20 notebooks (English and Korean) has exactly that cell, with
  the version of ``pyproject.toml``, which is ``transformer_edu.__version__``
  and the tag that ``.github/workflows/release.yml`` makes;
* the cell's ways of failing, run in a kernel of this interpreter with the
  repository out of reach (nothing is installed: every install here fails):
  an unreachable git address or a missing folder stops the cell with one line
  that says what failed and what to do, without a traceback; a package of
  another release gets a one-line note; on Colab, a failed font install gets
  a one-line note. A second look at the same cell where the package is
  importable at the notebook's version prints nothing.

``test_colab_standin.py`` runs the cell for real, in Colab's versions.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if __package__:
    from . import colab_support as cs
else:
    import colab_support as cs

import transformer_edu

NOTEBOOKS = cs.all_notebooks()
IDS = [path.relative_to(cs.REPO_ROOT).as_posix() for path in NOTEBOOKS]
VERSION = cs.setup_cells.pyproject_version()


def test_every_chapter_has_an_english_and_a_korean_notebook():
    assert len(NOTEBOOKS) == 2 * len(cs.bs.chapter_notebooks()) == 20


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_setup_cell_is_the_one_of_scripts_setup_cells(path):
    notebook = cs.bs.read_notebook(path)
    cell = cs.bs.setup_cell(notebook)
    assert cell is not None, f"{path.name}: no setup cell"
    first_code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    assert cell is first_code, f"{path.name}: the setup cell is not the first code cell"
    assert cell["source"] == cs.setup_source(), (
        f"{path.name}: its setup cell is not scripts/setup_cells.py's: "
        "run `python scripts/setup_cells.py`"
    )
    assert cell.get("outputs") == [], f"{path.name}: the setup cell has stored output"


def test_the_version_is_one_release_everywhere():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION), VERSION
    assert transformer_edu.__version__ == VERSION
    source = cs.setup_source()
    assert f'VERSION = "{VERSION}"' in source
    # the install names the release's tag, never a moving branch
    assert 'f"git+{REPO_URL}@v{VERSION}"' in source
    assert f'REPO_URL = "{cs.bs.read_config()["repository"]["url"]}"' in source


def test_release_workflow_tags_the_version_the_cells_name():
    workflow = (cs.REPO_ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "pyproject.toml" in workflow
    assert 'tag="v${version}"' in workflow  # the cell installs git+…@v<version>
    assert "scripts/setup_cells.py --check" in workflow


def test_setup_cell_installs_with_pip_defaults_only():
    # A plain `pip install` upgrades a dependency only where the installed one
    # is below a floor (--upgrade-strategy only-if-needed, pip's default).
    source = cs.setup_source()
    assert re.search(r'"pip", "install", "-q", "--no-color", source\s*\)', source)
    assert "--upgrade" not in source and "-U" not in source.split()


def test_setup_cell_fits_the_page():
    assert all(len(line) <= 79 for line in cs.setup_source().splitlines())


# --------------------------------------------------------------------------- #
# How the cell fails: in a kernel of this interpreter, the repository hidden   #
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def bare_env(tmp_path_factory):
    """This interpreter's kernel without the repository on its path."""
    home = tmp_path_factory.mktemp("setup-cell")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "TRANSFORMER_EDU_SOURCE", "MPLBACKEND"}
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INDEX"] = "1"  # nothing here may be downloaded or installed
    probe = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('transformer_edu'))"],
        env=env, cwd=home, capture_output=True, text=True, timeout=120,
    )
    if probe.stdout.strip() != "None":
        pytest.skip(
            "transformer_edu is installed into the test environment; run the "
            "tests with PYTHONPATH instead of `pip install -e .`"
        )
    return home, env


def run_setup_cell(home, env, before: str = "") -> list:
    cells = ([before] if before else []) + [cs.setup_source()]
    notebook = cs.run_cells(cells, Path(sys.executable), env, home, timeout=300)
    return notebook.cells[-1].outputs


def one_error_line(outputs) -> str:
    assert [o["output_type"] for o in outputs] == ["error"], outputs
    (error,) = outputs
    assert error["ename"] == "SetupError"
    assert len(error["traceback"]) == 1, error["traceback"]
    (line,) = error["traceback"]
    assert "\n" not in line and "Traceback" not in line
    return line


def test_unreachable_git_address_stops_with_one_line(bare_env, tmp_path):
    home, env = bare_env
    address = f"git+file://{tmp_path}/no-such-repository@v{VERSION}"
    line = one_error_line(run_setup_cell(home, dict(env, TRANSFORMER_EDU_SOURCE=address)))
    assert line.startswith(f"SetupError: pip could not install transformer_edu from {address} (fatal:")
    assert "pip install -e ." in line and "TRANSFORMER_EDU_SOURCE" in line


def test_missing_folder_stops_with_one_line(bare_env, tmp_path):
    home, env = bare_env
    folder = tmp_path / "not-a-clone"
    folder.mkdir()
    line = one_error_line(run_setup_cell(home, dict(env, TRANSFORMER_EDU_SOURCE=str(folder))))
    assert f"from {folder} (ERROR: " in line
    assert "run this cell again" in line


def test_another_release_gets_a_one_line_note(bare_env, tmp_path):
    home, env = bare_env
    package = tmp_path / "old" / "transformer_edu"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "0.0.1"\n', encoding="utf-8")
    outputs = run_setup_cell(home, dict(env, PYTHONPATH=str(package.parent)))
    assert [o["output_type"] for o in outputs] == ["stream"], outputs
    assert outputs[0]["text"] == (
        f"note: transformer_edu 0.0.1 is installed here, this notebook is for {VERSION}: "
        f"to match, pip install git+https://github.com/transformer-step-by-step/book@v{VERSION} "
        "and restart the kernel.\n"
    )


def test_the_notebooks_release_gets_no_output(bare_env):
    home, env = bare_env
    outputs = run_setup_cell(home, dict(env, PYTHONPATH=str(cs.REPO_ROOT)))
    assert outputs == []


# What Colab looks like to the cell: google.colab imported, no Nanum folder, and
# an apt-get that fails (a fake one on PATH).
FAKE_COLAB = """\
import os, sys, types
sys.modules["google.colab"] = types.ModuleType("google.colab")
_isdir = os.path.isdir
os.path.isdir = lambda path: False if "nanum" in str(path) else _isdir(path)
"""


def test_failed_font_install_on_colab_gets_a_one_line_note(bare_env, tmp_path):
    home, env = bare_env
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    apt = bin_dir / "apt-get"
    apt.write_text("#!/bin/sh\necho 'E: Unable to locate package fonts-nanum' >&2\nexit 100\n")
    apt.chmod(0o755)
    env = dict(env, PYTHONPATH=str(cs.REPO_ROOT), PATH=f"{bin_dir}{os.pathsep}{env['PATH']}")
    outputs = run_setup_cell(home, env, before=FAKE_COLAB)
    assert [o["output_type"] for o in outputs] == ["stream"], outputs
    assert outputs[0]["text"] == (
        "note: apt-get could not install fonts-nanum, so Korean labels in figures "
        "will show as boxes; everything else works.\n"
    )
