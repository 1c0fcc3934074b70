"""Shared helpers for the book's tests (test_book, test_browser, test_colab_setup).

The book is built once per test session: both ``test_book.py`` and
``test_browser.py`` call :func:`build_book`, which runs Jupyter Book the first
time and returns the cached result after that.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
HTML_DIR = REPO_ROOT / "_build" / "html"
SETUP_COMMENT = "# Setup: installs the book's package when it is missing (Colab)"
REPO_URL_LINE = re.compile(r'^REPO_URL\s*=\s*"([^"]*)"\s*$', re.MULTILINE)


def read_config() -> dict:
    """Return ``_config.yml`` as a dictionary."""
    return yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))


def toc_files() -> list[str]:
    """Return every file of ``_toc.yml`` (without suffix), the root first."""
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc["parts"]:
        files.extend(chapter["file"] for chapter in part["chapters"])
    return files


def chapter_notebooks() -> list[Path]:
    """Return the path of every chapter notebook named in ``_toc.yml``, present or not."""
    return [REPO_ROOT / f"{name}.ipynb" for name in toc_files() if name.startswith("notebooks/")]


def chapter_number(path: Path) -> int:
    """Return the chapter number encoded in a notebook's name (``03_...`` -> 3)."""
    return int(path.name.split("_", 1)[0])


def read_notebook(path: Path) -> dict:
    """Return a notebook as plain JSON (cells with ``source`` joined into strings)."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if isinstance(cell["source"], list):
            cell["source"] = "".join(cell["source"])
    return notebook


def setup_cell(notebook: dict) -> dict | None:
    """Return the notebook's setup cell: tagged ``setup`` or starting with the setup comment."""
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        if "setup" in tags or cell["source"].lstrip().startswith(SETUP_COMMENT):
            return cell
    return None


def repo_url_in(cell: dict) -> str | None:
    """Return the ``REPO_URL = "..."`` literal of a setup cell, or None."""
    match = REPO_URL_LINE.search(cell["source"])
    return match.group(1) if match else None


@dataclass(frozen=True)
class BookBuild:
    """The outcome of one ``jupyter-book build``."""

    returncode: int
    log: str
    html_dir: Path


@functools.cache
def build_book() -> BookBuild:
    """Build the book into ``_build/html`` once per test session.

    ``--all`` rebuilds every page: an incremental build would not repeat the
    warnings of pages it skips, and ``-W`` must see them all.
    """
    command = [
        sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
        "build", str(REPO_ROOT),
        "--all", "-W", "-n", "--keep-going",
    ]
    result = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900
    )
    return BookBuild(result.returncode, result.stdout + result.stderr, HTML_DIR)


def html_path(page: str) -> Path:
    """Return the built HTML file of a toc entry such as ``notebooks/01_attention``."""
    return HTML_DIR / f"{page}.html"


def colab_url(config: dict, notebook: Path) -> str:
    """Return the Colab address the launch button of ``notebook`` must have."""
    repo = config["repository"]["url"].removeprefix("https://github.com/")
    branch = config["repository"]["branch"]
    relative = notebook.relative_to(REPO_ROOT).as_posix()
    return f"https://colab.research.google.com/github/{repo}/blob/{branch}/{relative}"
