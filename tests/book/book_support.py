"""Shared helpers for the book's tests (test_book, test_browser, test_colab_setup).

The book is built once per test session: both ``test_book.py`` and
``test_browser.py`` call :func:`build_book`, which runs Jupyter Book the first
time and returns the cached result after that.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
HTML_DIR = REPO_ROOT / "_build" / "html"
#: The English messages of every page (``*.pot``), extracted by the build.
GETTEXT_DIR = REPO_ROOT / "_build" / "gettext"
SETUP_COMMENT = "# Setup: installs the book's package when it is missing (Colab)"
#: The Chromium that the browser tests drive through Playwright (``CHROMIUM`` overrides Debian's).
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
#: Its flags: headless, no sandbox (containers), nothing fetched in the background.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: Every host name but localhost fails to resolve, for pages that must work offline. (Cheaper
#: than intercepting every request in Playwright; the failed requests are recorded from the
#: page's "requestfailed" events.)
OFFLINE_FLAG = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"
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
    # The Python of the torch-free environment the book was built in (None:
    # built in the test environment) and, if making one failed, why.
    python: str | None = None
    environment_error: str | None = None


def book_environment() -> tuple[Path | None, str | None]:
    """A new virtual environment with ``requirements-book.txt`` alone, what
    ``.ci/book`` installs: (its directory, None), or (None, why not).

    Made with uv (pip-compatible and fast; its cache makes a second
    environment take seconds). Without uv: (None, None).
    """
    import atexit
    import shutil
    import tempfile

    uv = shutil.which("uv")
    if uv is None:
        return None, None
    venv = Path(tempfile.mkdtemp(prefix="book-venv-"))
    atexit.register(shutil.rmtree, venv, ignore_errors=True)
    made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        return None, made.stderr[-3000:]
    install = subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
         "-r", str(REPO_ROOT / "requirements-book.txt")],
        capture_output=True, text=True, timeout=600,
    )
    if install.returncode != 0:
        return None, install.stderr[-3000:]
    return venv, None


@functools.cache
def build_book() -> BookBuild:
    """Build the book into ``_build/html`` (its Korean edition into
    ``_build/html/ko``) once per test session.

    The build runs as ``.ci/book`` runs it on a fresh machine: in a new
    virtual environment with ``requirements-book.txt`` alone (no torch), with
    the ``jupyter-book`` command, from the repository root, without
    ``PYTHONPATH``. ``test_book.py`` checks that environment has no torch and
    every test of the built book uses this one build. Without uv it builds in
    the test environment instead. ``--all`` rebuilds every page: an
    incremental build would not repeat the warnings of pages it skips, and
    ``-W`` must see them all.
    """
    import os

    import shutil

    venv, error = book_environment()
    if venv is not None:
        python = str(venv / "bin" / "python")
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv)
    else:
        python = sys.executable
        env = None
    jupyter_book = [python, "-c", "from jupyter_book.cli.main import main; main()", "build"]
    korean_config = REPO_ROOT / "_build" / "ko" / "_config.yml"
    # The steps of .ci/book: the English site, the Korean one into
    # _build/html/ko/, the English messages (*.pot) into _build/gettext/.
    steps = [
        [*jupyter_book, str(REPO_ROOT), "--all", "-W", "-n", "--keep-going"],
        [python, "book/_ext/editions.py", "ko-config", "_config.yml", str(korean_config)],
        [*jupyter_book, str(REPO_ROOT), "--config", str(korean_config),
         "--path-output", str(korean_config.parent), "--all", "-W", "-n", "--keep-going"],
        [*jupyter_book, str(REPO_ROOT), "--builder", "custom", "--custom-builder", "gettext",
         "--path-output", str(REPO_ROOT / "_build" / "i18n"), "-W", "--keep-going", "-q"],
    ]
    log, returncode = "", 0
    # As .ci/book: no Korean edition of an earlier build in the way.
    shutil.rmtree(HTML_DIR / "ko", ignore_errors=True)
    shutil.rmtree(korean_config.parent, ignore_errors=True)
    for index, command in enumerate(steps):
        result = subprocess.run(
            command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900, env=env
        )
        log += result.stdout + result.stderr
        returncode = result.returncode
        if returncode:
            break
        if index == 2:
            shutil.move(korean_config.parent / "_build" / "html", HTML_DIR / "ko")
        if index == 3:
            shutil.rmtree(GETTEXT_DIR, ignore_errors=True)
            shutil.move(REPO_ROOT / "_build" / "i18n" / "_build" / "gettext", GETTEXT_DIR)
            (GETTEXT_DIR / "sphinx.pot").unlink(missing_ok=True)
    return BookBuild(
        returncode,
        log,
        HTML_DIR,
        python=str(venv / "bin" / "python") if venv is not None else None,
        environment_error=error,
    )


def html_path(page: str) -> Path:
    """Return the built HTML file of a toc entry such as ``notebooks/01_attention``."""
    return HTML_DIR / f"{page}.html"


def colab_url(config: dict, notebook: Path) -> str:
    """Return the Colab address the launch button of ``notebook`` must have."""
    repo = config["repository"]["url"].removeprefix("https://github.com/")
    branch = config["repository"]["branch"]
    relative = notebook.relative_to(REPO_ROOT).as_posix()
    return f"https://colab.research.google.com/github/{repo}/blob/{branch}/{relative}"


# --------------------------------------------------------------------------- #
# A test page of explorers                                                     #
# --------------------------------------------------------------------------- #

FIXTURE_PAGE = "explorers"


def explorer_fixture_outputs() -> list:
    """The package's explorers (one per chapter that has one) and a generic
    explorer with every kind of control and Korean labels, as explorers."""
    import plotly.graph_objects as go

    from transformer_edu import figures as ix
    from transformer_edu.translation.pretrained import pretrained_translator

    words = ["고양이가", "생선을", "먹었다"]

    def bars(word: str, scale: float) -> "ix.State":
        fig = go.Figure(go.Bar(x=words, y=[scale * (i + 1) / 3 for i in range(3)]))
        return ix.State(
            ix.Panel(fig, title=f"{word}: × {scale:g}", height=260),
            summary=f"Bars scaled by {scale:g}, {word} chosen.",
        )

    generic = ix.Explorer(
        "test-generic-explorer",
        title="Every kind of control",
        description="Three bars, one per Korean word, scaled by the controls.",
        controls=[
            ix.Select("word", words, label="word"),
            ix.Slider("scale", [0.5, 1.0, 2.0], label="scale", start=1.0),
        ],
        states=bars,
    )
    return [
        ix.mask_explorer(),
        ix.positional_explorer(),
        ix.beam_explorer(
            pretrained_translator("cpu"),
            "고양이가 생선을 먹었다",
            reference="the cat ate the fish",
            beam_sizes=(1, 2, 4),
            alphas=(0.0, 0.6),
            start_beam_size=2,
            start_alpha=0.6,
        ),
        generic,
    ]


def build_explorer_fixture(directory: Path) -> BookBuild:
    """Build a one-page book of explorers in ``directory`` with the book's
    configuration, extension and styles (a page of the real book would need
    re-executed notebooks)."""
    import shutil

    import nbformat

    directory.mkdir(parents=True, exist_ok=True)
    for name in ("book", "node_modules", "transformer_edu"):
        (directory / name).symlink_to(REPO_ROOT / name)
    shutil.copyfile(REPO_ROOT / "_config.yml", directory / "_config.yml")
    (directory / "_toc.yml").write_text(f"format: jb-book\nroot: {FIXTURE_PAGE}\n", encoding="utf-8")
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells.append(nbformat.v4.new_markdown_cell(
        "# Explorers\n\nEvery explorer of the package, for the browser test."
    ))
    for explorer in explorer_fixture_outputs():
        cell = nbformat.v4.new_code_cell(f"explorer  # {explorer.id}")
        cell.outputs = [nbformat.v4.new_output("display_data", data=explorer._repr_mimebundle_())]
        notebook.cells.append(cell)
    nbformat.write(notebook, directory / f"{FIXTURE_PAGE}.ipynb")
    command = [
        sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
        "build", str(directory), "--all", "-W", "-n", "--keep-going",
    ]
    result = subprocess.run(command, cwd=directory, capture_output=True, text=True, timeout=600)
    return BookBuild(result.returncode, result.stdout + result.stderr, directory / "_build" / "html")
