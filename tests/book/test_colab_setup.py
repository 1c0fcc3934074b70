"""A chapter's setup cell works the way it will on Colab.

Colab has PyTorch, NumPy, Matplotlib, Plotly, ipywidgets and friends, but not
this book's package. The test imitates that with a fresh virtual environment
that sees the running interpreter's packages but not the repository (the test
command puts the repository on ``PYTHONPATH``; here that variable is removed
and everything runs from a folder outside the repository). The running
interpreter is often itself a virtual environment, whose packages
``--system-site-packages`` would not show (it shows the *base* interpreter's),
so the new environment gets a ``.pth`` file that adds the running
interpreter's site directories instead.
The setup cell of chapter 1 must then install ``transformer_edu`` from the
repository (``TRANSFORMER_EDU_SOURCE`` replaces the GitHub address) without
touching PyTorch, and the whole chapter must run in a kernel of that
environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import nbformat
import pytest

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

CHAPTER_ONE = bs.chapter_notebooks()[0]
PROBE = (
    "import importlib.util, json, sys\n"
    "spec = importlib.util.find_spec('transformer_edu')\n"
    "import torch\n"
    "print(json.dumps({'transformer_edu': spec.origin if spec else None,\n"
    "                  'torch_version': torch.__version__, 'torch_file': torch.__file__,\n"
    "                  'prefix': sys.prefix}))\n"
)


def colab_like_env(venv_dir: Path) -> dict:
    """The process environment of the virtual environment, without the repository on it."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    }
    bin_dir = venv_dir / ("Scripts" if os.name == "nt" else "bin")
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(venv_dir)
    env["MPLBACKEND"] = "agg"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def see_running_packages(python: Path) -> None:
    """Let the environment of ``python`` import what this interpreter has installed.

    A ``.pth`` file in its site-packages calls ``site.addsitedir`` on this
    interpreter's site directories (purelib and platlib: a virtual
    environment's own when the tests run in one), after the environment's
    own; their ``.pth`` files are processed too, as on a real system.
    """
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout.strip()
    running = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    line = "import site; " + "; ".join(f"site.addsitedir({path!r})" for path in running)
    (Path(own) / "running_interpreter.pth").write_text(line + "\n", encoding="utf-8")


def probe(python: Path, env: dict, cwd: Path) -> dict:
    result = subprocess.run(
        [str(python), "-c", PROBE], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """A fresh virtual environment over the interpreter's packages, and where to run in it."""
    if not CHAPTER_ONE.exists():
        pytest.skip("chapter 1 not written yet")
    home = tmp_path_factory.mktemp("colab")
    venv_dir = home / "venv"
    venv.EnvBuilder(with_pip=True, symlinks=os.name != "nt").create(venv_dir)
    python = venv_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    see_running_packages(python)
    env = colab_like_env(venv_dir)
    before = probe(python, env, home)
    if before["transformer_edu"] is not None:
        pytest.skip(
            "transformer_edu is installed into the running interpreter "
            f"({before['transformer_edu']}), so no environment built on it can "
            "imitate Colab; run the tests with PYTHONPATH instead of `pip install -e .`"
        )
    return {"home": home, "venv": venv_dir, "python": python, "env": env, "before": before}


@pytest.fixture(scope="module")
def installed(colab):
    """Run chapter 1's setup cell in the environment; return the probe after it."""
    cell = bs.setup_cell(bs.read_notebook(CHAPTER_ONE))
    assert cell is not None, "chapter 1 has no setup cell"
    script = colab["home"] / "setup_cell.py"
    script.write_text(cell["source"], encoding="utf-8")
    env = dict(colab["env"], TRANSFORMER_EDU_SOURCE=str(bs.REPO_ROOT))
    result = subprocess.run(
        [str(colab["python"]), str(script)],
        env=env, cwd=colab["home"], capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return probe(colab["python"], colab["env"], colab["home"])


def test_fresh_environment_lacks_the_package_but_has_torch(colab):
    assert colab["before"]["transformer_edu"] is None
    assert Path(colab["before"]["prefix"]).resolve() == colab["venv"].resolve()
    assert colab["before"]["torch_version"]


def test_setup_cell_installs_the_package_into_the_environment(colab, installed):
    origin = Path(installed["transformer_edu"]).resolve()
    assert colab["venv"].resolve() in origin.parents, f"transformer_edu found at {origin}"
    assert bs.REPO_ROOT not in origin.parents
    imported = subprocess.run(
        [str(colab["python"]), "-c", "import transformer_edu; print(transformer_edu.__file__)"],
        env=colab["env"], cwd=colab["home"], capture_output=True, text=True, timeout=300,
    )
    assert imported.returncode == 0, imported.stderr[-3000:]
    assert Path(imported.stdout.strip()).resolve() == origin


def test_setup_cell_leaves_torch_alone(colab, installed):
    assert installed["torch_version"] == colab["before"]["torch_version"]
    assert installed["torch_file"] == colab["before"]["torch_file"]
    assert colab["venv"].resolve() not in Path(installed["torch_file"]).resolve().parents


def test_setup_cell_does_nothing_once_installed(colab, installed):
    cell = bs.setup_cell(bs.read_notebook(CHAPTER_ONE))
    env = dict(colab["env"], TRANSFORMER_EDU_SOURCE=str(colab["home"] / "does-not-exist"))
    result = subprocess.run(
        [str(colab["python"]), "-c", cell["source"]],
        env=env, cwd=colab["home"], capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_chapter_one_runs_in_the_environment(colab, installed):
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    kernels = colab["home"] / "kernels"
    spec_dir = kernels / "colab-venv"
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [str(colab["python"]), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab-like virtual environment",
        "language": "python",
    }))
    manager = KernelManager(
        kernel_name="colab-venv",
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]),
    )
    notebook = nbformat.read(CHAPTER_ONE, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import sys, transformer_edu\nprint(sys.prefix)\nprint(transformer_edu.__file__)"
    ))
    client = NotebookClient(
        notebook,
        km=manager,
        timeout=900,
        resources={"metadata": {"path": str(colab["home"])}},
    )
    client.execute(env=colab["env"])  # raises CellExecutionError on the first failing cell

    errors = [
        output for cell in notebook.cells if cell.cell_type == "code"
        for output in cell.outputs if output.output_type == "error"
    ]
    assert errors == []
    prefix, package = notebook.cells[-1].outputs[0]["text"].split()
    assert Path(prefix).resolve() == colab["venv"].resolve()
    assert colab["venv"].resolve() in Path(package).resolve().parents
