"""The notebooks' setup cell: one text, written into every chapter from here.

Every chapter notebook, English and Korean, starts its code with the same
setup cell (:data:`TEMPLATE`, with the package's version from
``pyproject.toml``). It

* installs ``transformer_edu`` when it cannot be imported (Colab), at the
  release the notebook was written for: ``git+<repository>@v<version>``, the
  git tag that ``.github/workflows/release.yml`` makes when the version in
  ``pyproject.toml`` changes (``TRANSFORMER_EDU_SOURCE`` replaces that address
  with a folder holding a clone, a wheel, or any other pip source);
* leaves what the runtime has alone: a plain ``pip install`` upgrades no
  package that already satisfies the package's floors, and those floors are at
  or below Colab's versions (``tests/colab/colab-packages.txt``), so Colab's
  PyTorch, NumPy, ipywidgets 7, Matplotlib, Plotly and tqdm stay as they are;
* when the install fails (offline, say), stops with one line saying what
  failed and what to do, and no traceback (IPython prints what an exception's
  ``_render_traceback_`` returns instead of the traceback);
* says in one line when the package it finds is another release than the
  notebook's;
* on Colab, installs a font with Hangul for the figures' Korean labels, and
  says in one line when that fails (the labels would show as boxes).

Usage::

    python scripts/setup_cells.py          # write the cell into notebooks/*.ipynb,
                                           # then remake the Korean notebooks
    python scripts/setup_cells.py --check  # exit 1 if a notebook's cell differs

Only the cell's source changes: it has no stored output, so no notebook needs
to run again. ``tests/colab/test_setup_cells.py`` fails if a notebook's setup
cell is not this text with the current version.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGLISH = ROOT / "notebooks"
KOREAN = ROOT / "locales" / "ko" / "notebooks"
#: The first line of every setup cell (tests/book/book_support.py finds the cell by it).
FIRST_LINE = "# Setup: installs the book's package when it is missing (Colab)"

TEMPLATE = '''\
# Setup: installs the book's package when it is missing (Colab), at this
# notebook's release, leaving the packages already there (PyTorch, ipywidgets,
# ...) as they are; on Colab, also a font with Hangul for the figures.
import importlib.util
import os
import subprocess
import sys

REPO_URL = "https://github.com/transformer-step-by-step/book"
VERSION = "@VERSION@"  # the release of transformer_edu this notebook is for


class SetupError(Exception):
    def _render_traceback_(self):  # IPython shows this line, not a traceback
        return [f"SetupError: {self}"]


def run_quietly(*command):
    return subprocess.run(command, capture_output=True, check=False, text=True)


if importlib.util.find_spec("transformer_edu") is None:
    source = os.environ.get(
        "TRANSFORMER_EDU_SOURCE", f"git+{REPO_URL}@v{VERSION}"
    )
    pip = run_quietly(
        sys.executable, "-m", "pip", "install", "-q", "--no-color", source
    )
    if pip.returncode != 0:
        reasons = [
            line.strip()
            for line in pip.stderr.splitlines()
            if line.strip().startswith(("fatal:", "ERROR:"))
        ]
        raise SetupError(
            f"pip could not install transformer_edu from {source}"
            f" ({reasons[0] if reasons else 'pip gave no reason'})."
            " Offline? In a clone of the book run `pip install -e .`, or set"
            " TRANSFORMER_EDU_SOURCE to a clone's folder or a wheel, then run"
            " this cell again."
        )
    importlib.invalidate_caches()
if "google.colab" in sys.modules and not os.path.isdir(
    "/usr/share/fonts/truetype/nanum"
):  # matplotlib needs a Hangul font for Korean labels; Colab has none
    apt = run_quietly("apt-get", "-qq", "install", "-y", "fonts-nanum")
    if apt.returncode != 0:
        print(
            "note: apt-get could not install fonts-nanum, so Korean labels in"
            " figures will show as boxes; everything else works."
        )
import transformer_edu

if transformer_edu.__version__ != VERSION:
    print(
        f"note: transformer_edu {transformer_edu.__version__} is installed"
        f" here, this notebook is for {VERSION}: to match, pip install"
        f" git+{REPO_URL}@v{VERSION} and restart the kernel."
    )
'''

VERSION_LINE = re.compile(r'^version\s*=\s*"([^"]+)"\s*$', re.MULTILINE)


def pyproject_version() -> str:
    """The ``version`` of ``[project]`` in pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = VERSION_LINE.search(text)
    if match is None:
        raise ValueError("pyproject.toml has no version = \"...\" line")
    return match.group(1)


def setup_source(version: str | None = None) -> str:
    """The setup cell's source for ``version`` (default: pyproject.toml's)."""
    return TEMPLATE.replace("@VERSION@", version or pyproject_version()).rstrip("\n")


def setup_index(notebook: dict) -> int | None:
    """The index of the notebook's setup cell (the code cell starting with the setup comment)."""
    for index, cell in enumerate(notebook["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.lstrip().startswith(FIRST_LINE):
            return index
    return None


def notebooks() -> list[Path]:
    """The chapter notebooks this script writes (the English ones)."""
    return sorted(ENGLISH.glob("[0-9][0-9]_*.ipynb"))


def dumps(notebook: dict) -> str:
    """A notebook as nbformat writes it (scripts/execute_notebooks.py stores them so)."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def apply(path: Path, source: str) -> bool:
    """Put ``source`` into the notebook's setup cell; True if the file changed."""
    text = path.read_text(encoding="utf-8")
    notebook = json.loads(text)
    index = setup_index(notebook)
    if index is None:
        raise ValueError(f"{path}: no code cell starts with {FIRST_LINE!r}")
    notebook["cells"][index]["source"] = source.splitlines(keepends=True)
    new = dumps(notebook)
    if new != text:
        path.write_text(new, encoding="utf-8")
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only check, write nothing")
    args = parser.parse_args(argv)
    source = setup_source()
    if args.check:
        wrong = []
        for path in notebooks() + sorted(KOREAN.glob("[0-9][0-9]_*.ipynb")):
            notebook = json.loads(path.read_text(encoding="utf-8"))
            index = setup_index(notebook)
            if index is None or "".join(notebook["cells"][index]["source"]) != source:
                wrong.append(path.relative_to(ROOT))
        for path in wrong:
            print(f"{path}: setup cell out of step: run scripts/setup_cells.py")
        return 1 if wrong else 0
    changed = [path.name for path in notebooks() if apply(path, source)]
    print(f"setup cell ({pyproject_version()}) written into {len(changed)} notebook(s)")
    # The Korean notebooks copy the English code cells.
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "translate_notebooks.py")]).returncode


if __name__ == "__main__":
    sys.exit(main())
