"""The notebooks fit the book's page and follow its conventions.

- Code cells are ``ruff format`` clean (``[tool.ruff]`` in pyproject.toml:
  line length 79; the book's column shows 85 characters of code at 1366 px)
  and no code line is longer than 79 characters (ruff cannot break long
  strings and comments: wrap them by hand).
- Printed outputs (streams, and plain text where it is what the page shows)
  are at most 80 display columns wide; a Hangul syllable counts two
  (``viz.text_width``; pad Korean columns with ``viz.pad``).
- Every image output has alt text: cell metadata
  ``{"mystnb": {"image": {"alt": "what the figure shows"}}}``.
- Images are 2x PNGs (``viz.use_book_style()`` in a notebook) no wider than
  ``viz.BOOK_WIDTH``, so they are sharp and still readable on a phone.
- Exercise solutions (code cells starting with ``# Solution``) are tagged
  ``hide-cell``: the book hides their code and output behind one toggle
  (``hide-input`` would leave the answer showing).

Each test names the cells to fix. Run ``ruff format notebooks/`` to format.
"""

from __future__ import annotations

import base64
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from transformer_edu.figures import viz

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

CODE_COLUMNS = 79
OUTPUT_COLUMNS = 80
NOTEBOOKS = bs.chapter_notebooks()
IDS = [path.stem for path in NOTEBOOKS]
# What the book shows instead of text/plain when an output has it.
RICHER = ("text/html", "text/markdown", "text/latex", "image/", "application/vnd.jupyter.widget-view+json")
FILE_NAME = re.compile(r"^\S+\.(png|jpe?g|svg|gif)$|^[0-9a-f]{16,}|/", re.IGNORECASE)


def notebook(path: Path) -> dict:
    if not path.exists():
        pytest.skip(f"chapter {bs.chapter_number(path)} not written yet")
    return bs.read_notebook(path)


def code_cells(nb: dict):
    """(index among all cells, cell) of every code cell."""
    return [(i, cell) for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"]


def text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_code_cells_are_ruff_formatted(path):
    notebook(path)
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--diff", str(path)],
        cwd=bs.REPO_ROOT, capture_output=True, text=True,
    )
    cells = sorted(set(re.findall(r"^--- .*:cell (\d+)$", result.stdout, re.MULTILINE)), key=int)
    assert result.returncode == 0, (
        f"{path.name}: {len(cells)} code cells are not `ruff format` clean "
        f"(ruff's cell numbers: {', '.join(cells)}); run `ruff format {path}`"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_code_lines_fit_79_columns(path):
    long = [
        f"cell {i} line {n}: {len(line)} chars"
        for i, cell in code_cells(notebook(path))
        for n, line in enumerate(cell["source"].splitlines(), start=1)
        if len(line) > CODE_COLUMNS
    ]
    assert not long, f"{path.name}: {len(long)} code lines over {CODE_COLUMNS} characters: {long[:8]}"


def shown_text(output: dict) -> str | None:
    """The text the book shows for an output, or None if it shows something else."""
    if output["output_type"] == "stream":
        return text(output["text"])
    if output["output_type"] in ("execute_result", "display_data"):
        data = output.get("data", {})
        if "text/plain" in data and not any(m.startswith(RICHER) for m in data):
            return text(data["text/plain"])
    return None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_printed_outputs_fit_80_display_columns(path):
    wide = []
    for i, cell in code_cells(notebook(path)):
        for output in cell.get("outputs", []):
            shown = shown_text(output)
            for line in (shown or "").splitlines():
                width = viz.text_width(line.expandtabs(8).replace("\r", ""))
                if width > OUTPUT_COLUMNS:
                    wide.append(f"cell {i}: {width} columns: {line[:40]!r}…")
    assert not wide, f"{path.name}: {len(wide)} output lines over {OUTPUT_COLUMNS} columns: {wide[:6]}"


def images(cell: dict) -> list[tuple[dict, str]]:
    return [
        (output, mime)
        for output in cell.get("outputs", [])
        for mime in output.get("data", {})
        if mime.startswith("image/")
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_image_has_meaningful_alt_text(path):
    bad = []
    for i, cell in code_cells(notebook(path)):
        if not images(cell):
            continue
        alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
        if not isinstance(alt, str) or len(alt.split()) < 4 or FILE_NAME.search(alt.strip()):
            bad.append(f"cell {i}: alt={alt!r}")
    assert not bad, (
        f"{path.name}: {len(bad)} image cells without a meaningful "
        f'metadata.mystnb.image.alt (a sentence saying what the figure shows): {bad[:8]}'
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_images_are_sharp_and_fit_the_column(path):
    from PIL import Image

    bad = []
    limit = 1.1 * viz.BOOK_WIDTH * viz.DPI  # savefig's tight bounding box may add a little
    for i, cell in code_cells(notebook(path)):
        for output, mime in images(cell):
            if mime != "image/png":
                continue
            width = output.get("metadata", {}).get(mime, {}).get("width")
            pixels = Image.open(io.BytesIO(base64.b64decode(text(output["data"][mime])))).size[0]
            if width is None or abs(pixels - 2 * width) > 2:
                bad.append(f"cell {i}: {pixels} px, not a 2x PNG (shown width {width})")
            elif width > limit:
                bad.append(f"cell {i}: {width} px wide, over {limit:.0f} (viz.BOOK_WIDTH)")
    assert not bad, f"{path.name}: {len(bad)} images: {bad[:8]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_solutions_hide_their_code_and_output(path):
    bad = [
        f"cell {i}: tags {cell.get('metadata', {}).get('tags', [])}"
        for i, cell in code_cells(notebook(path))
        if cell["source"].lstrip().startswith("# Solution")
        and "hide-cell" not in cell.get("metadata", {}).get("tags", [])
    ]
    assert not bad, f"{path.name}: solution cells not tagged hide-cell: {bad}"
