"""The Colab stand-in: an environment with Colab's versions of what the book touches.

Colab's runtime has PyTorch, NumPy, Matplotlib, Plotly, tqdm, tokenizers, the
classic Jupyter stack and ipywidgets 7 preinstalled, and not this book's
package. ``colab-packages.txt`` pins those versions (from Colab's published
package list; its header gives the source and date). :func:`build` makes a
virtual environment with them: Python 3.13 where this machine has it (Colab's
Python), else the newest Python found, with ``uv`` (seconds once its cache
holds the wheels; the first time it downloads PyTorch 2.11.0 from PyPI, the
CUDA build on Linux, about 3 GB, which runs on the CPU). pip is in it, as on
Colab, because the setup cell calls ``python -m pip``.

A kernel of that environment runs the notebooks' setup cell and the chapters
(``tests/colab/``); the package comes from a copy of this checkout
(:func:`clone`, given to the setup cell as ``TRANSFORMER_EDU_SOURCE``), so
nothing reaches GitHub.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = Path(__file__).with_name("colab-packages.txt")
#: Colab's Python (os-info.txt of the same snapshot).
COLAB_PYTHON = (3, 13)
#: The first download of the pinned wheels (PyTorch's CUDA build) takes long on a slow line.
INSTALL_TIMEOUT_S = 1800

sys.path.insert(0, str(REPO_ROOT / "tests" / "book"))
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import book_support as bs  # noqa: E402
import setup_cells  # noqa: E402


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares them (``Jupyter_Client`` -> ``jupyter-client``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned() -> dict[str, str]:
    """The pins of ``colab-packages.txt``: {canonical name: version}."""
    pins = {}
    for line in PACKAGES.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonical(name)] = version.strip()
    return pins


def python_version(python: Path | str) -> tuple[int, int, int] | None:
    try:
        out = subprocess.run(
            [str(python), "-c", "import sys; print(*sys.version_info[:3])"],
            capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return tuple(int(part) for part in out.stdout.split())


def candidate_pythons() -> list[Path]:
    """Interpreters this machine has: ``COLAB_PYTHON`` (an environment variable) first."""
    found = []
    if os.environ.get("COLAB_PYTHON"):
        found.append(Path(os.environ["COLAB_PYTHON"]))
    for minor in range(20, 9, -1):
        which = shutil.which(f"python3.{minor}")
        if which:
            found.append(Path(which))
    homes = [Path.home() / ".pyenv" / "versions", Path("/root/.pyenv/versions"),
             Path("/opt/hostedtoolcache/Python")]
    for home in homes:
        if home.is_dir():
            found += sorted(home.glob("3.*/bin/python3")) + sorted(home.glob("3.*/x64/bin/python3"))
    found.append(Path(sys.executable))
    return list(dict.fromkeys(found))


def find_python() -> tuple[Path, tuple[int, int, int]]:
    """Colab's Python (3.13) if this machine has it, else the newest one it has (3.10 at least)."""
    best = None
    for python in candidate_pythons():
        version = python_version(python)
        if version is None or version < (3, 10):
            continue
        if version[:2] == COLAB_PYTHON:
            return python, version
        if best is None or version > best[1]:
            best = (python, version)
    return best


def uv() -> str | None:
    return shutil.which("uv") or (
        str(Path(sys.executable).with_name("uv")) if Path(sys.executable).with_name("uv").exists() else None
    )


def freeze(python: Path) -> dict[str, str]:
    """Every installed distribution of the environment: {canonical name: version}."""
    out = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True, text=True, timeout=300,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return {canonical(item["name"]): item["version"] for item in json.loads(out.stdout)}


@dataclass
class StandIn:
    """A built stand-in: its folder, interpreter, Python version and what it holds."""

    venv: Path
    python: Path
    version: tuple[int, int, int]
    before: dict[str, str]
    seconds: float
    log: list[str] = field(default_factory=list)

    @property
    def bin(self) -> Path:
        return self.python.parent

    def env(self, **extra: str) -> dict[str, str]:
        """The process environment of a kernel of the stand-in: its bin first on
        PATH, nothing of the repository (no PYTHONPATH), the inline backend."""
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "MPLBACKEND",
                           "TRANSFORMER_EDU_SOURCE", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR",
                           "JUPYTER_DATA_DIR"}
        }
        env["PATH"] = os.pathsep.join([str(self.bin), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        env.update(extra)
        return env


def build(venv: Path) -> StandIn:
    """Make the stand-in in ``venv`` (Python, the pins of colab-packages.txt, pip)."""
    import time

    tool = uv()
    if tool is None:
        raise RuntimeError("uv not found (requirements.txt installs it)")
    python, version = find_python()
    start = time.monotonic()
    log = []
    for command in (
        [tool, "venv", "--quiet", "--seed", "--python", str(python), str(venv)],
        [tool, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
         "-r", str(PACKAGES)],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        log.append(f"$ {' '.join(command)}\n{done.stdout}{done.stderr}")
        if done.returncode != 0:
            raise RuntimeError("\n".join(log)[-4000:])
    seconds = time.monotonic() - start
    python_in = venv / "bin" / "python"
    return StandIn(venv, python_in, version, freeze(python_in), seconds, log)


def clone(dest: Path) -> Path:
    """A copy of what ``pip install <clone>`` builds the package from (no git history,
    no build leftovers): pyproject.toml, README.md and transformer_edu/."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, dest / name)
    shutil.copytree(
        REPO_ROOT / "transformer_edu", dest / "transformer_edu",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    return dest


def kernel_manager(home: Path, python: Path, name: str = "colab-standin"):
    """A jupyter_client KernelManager that starts ``python``'s ipykernel."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = home / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab stand-in",
        "language": "python",
    }))
    return KernelManager(
        kernel_name=name, kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(home / "kernels")])
    )


def run_cells(sources: list[str], python: Path, env: dict, cwd: Path, timeout: int = 900,
              allow_errors: bool = True):
    """Run code cells, in order, on a fresh kernel of ``python``; return the executed notebook."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return run_notebook(notebook, python, env, cwd, timeout, allow_errors)


def run_notebook(notebook, python: Path, env: dict, cwd: Path, timeout: int = 900,
                 allow_errors: bool = False):
    """Run a notebook top to bottom on a fresh kernel of ``python`` (as nbval-lax
    does: every cell runs, an error stops the run and raises, outputs are not compared)."""
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook,
        km=kernel_manager(cwd, python),
        timeout=timeout,
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute(env=env)
    return notebook


def text_of(outputs: list) -> str:
    """Everything the outputs show as text (streams, plain text, error lines)."""
    parts = []
    for output in outputs:
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] == "error":
            parts.append("\n".join(output["traceback"]))
        else:
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def setup_source() -> str:
    """The setup cell every notebook must have (scripts/setup_cells.py)."""
    return setup_cells.setup_source()


def all_notebooks() -> list[Path]:
    """The 18 chapter notebooks: English, then Korean."""
    english = bs.chapter_notebooks()
    korean = [REPO_ROOT / "locales" / "ko" / "notebooks" / path.name for path in english]
    return [path for path in english + korean if path.exists()]
