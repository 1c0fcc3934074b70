"""Run chapter notebooks on a fresh kernel and store their outputs: the one way to do it.

Usage (from anywhere; paths are relative to the current folder)::

    python scripts/execute_notebooks.py notebooks/01_attention.ipynb [more.ipynb ...]
    python scripts/execute_notebooks.py --all            # every chapter of _toc.yml
    python scripts/execute_notebooks.py --widgets-only notebooks/*.ipynb   # no run (see below)

Each notebook runs top to bottom with nbclient on a fresh ``python3`` kernel,
with the working folder ``notebooks/``, the repository first on
``PYTHONPATH`` (the package is used from the checkout), ``PYTHONHASHSEED=0``,
no GPU (``CUDA_VISIBLE_DEVICES=""``, so stored outputs come from the CPU;
``--allow-gpu`` lifts it) and a time limit per cell (``--timeout``, 600 s).
A cell that raises stops the run and leaves the notebook file untouched.
Consecutive prints are stored as one stream output (as Jupyter shows them),
and the cells' metadata keeps no execution timings, so a run that reproduces
the outputs leaves no diff.

Widget outputs. A stored ipywidgets output is only a pointer to a widget model
(``application/vnd.jupyter.widget-view+json``): Colab and the HTML book never
render it, and Jupyter shows "Loading widget..." or "Error displaying widget"
wherever the model is not at hand. Widget state saved in the notebook's
metadata would only make dead controls look alive (they do nothing until the
cell runs again), and its random model ids change on every run. So every
widget output is replaced by a short plain-text output, derived from the
widget, that says what running the cell gives:

* an explorer (``ipywidgets.interact`` or any box of controls)::

    Interactive controls: pad tokens, padding mask, causal mask, query.
    Run this cell in Jupyter or Colab to use them.

* a tqdm progress bar (``tqdm.auto``): the bar in its final state, as text::

    copy task: 100%|██████████| 12/12 [00:07<00:00,  1.55epoch/s]

  and, for a loop that ended before its total, the bar where it stopped and
  "(stopped early)": never a stuck 0 %, never a red bar.

The widget state is dropped from the notebook's metadata. A fresh run makes a
live widget again, not this text, so such a cell's output cannot be compared
by nbval: the script tags every cell whose output it rewrote
``nbval-ignore-output`` unless the cell already starts with
``# NBVAL_IGNORE_OUTPUT`` (and says so). A chapter author writes nothing
special in a widget cell. ``tests/book/test_execute_notebooks.py`` checks that no
stored output is a widget pointer and that every rewritten cell is ignored by
nbval.

Figures. Every stored PNG is re-encoded as an indexed (256-colour) PNG
when that leaves the picture as it was: on average every channel within half
a level (of 255) of the original, and no pixel off by more than a fifth of
the range (only a few anti-aliased edge pixels move at all). The book's
figures are flat colours, text and colormaps of at most 256 entries, so the
file shrinks to about a third (the book's pages must stay light:
tests/book/test_browser.py). Images a palette would change (photographs, smooth
gradients) are kept as they are.

``--widgets-only`` applies the same rewriting to the stored outputs without
running anything and leaves everything else as it is: for instance after a
merge brought in outputs saved another way. It reads the widget state those
outputs were saved with; where there is none, it writes a generic text.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import html
import io
import os
import re
import sys
import time
import unicodedata
from pathlib import Path

import nbformat

REPO_ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
IGNORE_COMMENT = "# NBVAL_IGNORE_OUTPUT"
IGNORE_TAG = "nbval-ignore-output"
#: Output metadata key that marks a text written in place of a widget.
MARK = "execute_notebooks"
WIDTH = 79
RUN_IT = "Run this cell in Jupyter or Colab to use them."
RUN_IT_ONE = "Run this cell in Jupyter or Colab to use it."

# Widget models that hold no control a reader could change.
PASSIVE = {
    "OutputModel",
    "HTMLModel",
    "HTMLMathModel",
    "LabelModel",
    "ImageModel",
    "VideoModel",
    "AudioModel",
    "FloatProgressModel",
    "IntProgressModel",
    "ValidModel",
}


def chapter_notebooks() -> list[Path]:
    """Return the chapter notebooks named in ``_toc.yml``, in book order."""
    import yaml

    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [chapter["file"] for part in toc["parts"] for chapter in part["chapters"]]
    return [REPO_ROOT / f"{name}.ipynb" for name in files if name.startswith("notebooks/")]


# --------------------------------------------------------------------------- #
# Widgets to text                                                              #
# --------------------------------------------------------------------------- #


def _children(model: dict) -> list[str]:
    """Model ids of a box's children (``"IPY_MODEL_<id>"`` references)."""
    return [
        ref.removeprefix("IPY_MODEL_")
        for ref in model.get("state", {}).get("children", [])
        if isinstance(ref, str)
    ]


def _walk(model_id: str, state: dict, seen: set | None = None) -> list[dict]:
    """The model and every model inside it, depth first, in display order."""
    seen = set() if seen is None else seen
    if model_id in seen or model_id not in state:
        return []
    seen.add(model_id)
    model = state[model_id]
    found = [model]
    for child in _children(model):
        found.extend(_walk(child, state, seen))
    return found


def _plain(value: str) -> str:
    """Text of a widget's HTML value (tqdm pads with figure spaces)."""
    text = html.unescape(re.sub(r"<[^>]*>", "", value or ""))
    return text.replace("\u2007", " ").replace("\xa0", " ")


def _progress_text(model_id: str, state: dict) -> str | None:
    """The text of a tqdm bar (an HBox of HTML, a progress bar and HTML), or None."""
    model = state.get(model_id, {})
    children = [state.get(child) for child in _children(model)]
    if model.get("model_name") != "HBoxModel" or len(children) != 3 or None in children:
        return None
    left, bar, right = children
    if (left["model_name"], right["model_name"]) != ("HTMLModel", "HTMLModel") or bar[
        "model_name"
    ] not in {"FloatProgressModel", "IntProgressModel"}:
        return None
    from tqdm.std import Bar

    value = float(bar["state"].get("value", 0))
    low = float(bar["state"].get("min", 0))
    high = float(bar["state"].get("max", 100))
    fraction = 0.0 if high <= low else min(max((value - low) / (high - low), 0.0), 1.0)
    text = f"{_plain(left['state'].get('value', ''))}|{format(Bar(fraction, 10), '')}|"
    text += _plain(right["state"].get("value", ""))
    if value < high and bar["state"].get("bar_style") == "danger":
        # tqdm paints a bar red when its loop ends before the total (a `break`:
        # an exception would have stopped this script).
        text += " (stopped early)"
    return text.strip()


def _control_name(model: dict) -> str | None:
    name = model.get("model_name", "")
    if name in PASSIVE or name.endswith(("BoxModel", "LayoutModel", "StyleModel")):
        return None
    if "description" not in model.get("state", {}):
        return None
    description = _plain(model["state"].get("description", "")).strip()
    if description:
        return description
    kind = re.sub(r"(?<!^)(?=[A-Z])", " ", name.removesuffix("Model")).lower()
    return f"a {kind}"


def width(text: str) -> int:
    """Display columns of ``text``: wide characters (Hangul) count two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def wrap(text: str, limit: int = WIDTH) -> str:
    """Wrap ``text`` at spaces so no line is wider than ``limit`` display columns."""
    lines, line = [], ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if line and width(candidate) > limit:
            lines.append(line)
            line = word
        else:
            line = candidate
    lines.append(line)
    return "\n".join(lines)


def widget_text(model_id: str, state: dict) -> str:
    """The plain text that stands in for a stored widget view."""
    progress = _progress_text(model_id, state)
    if progress is not None:
        return progress
    if model_id not in state:
        return f"Interactive widget.\n{RUN_IT_ONE}"
    names = []
    for model in _walk(model_id, state):
        name = _control_name(model)
        if name and name not in names:
            names.append(name)
    if not names:
        return f"Interactive widget.\n{RUN_IT_ONE}"
    label = "Interactive control" if len(names) == 1 else "Interactive controls"
    run_it = RUN_IT if len(names) > 1 else RUN_IT_ONE
    return wrap(f"{label}: {', '.join(names)}.") + "\n" + run_it


def widget_state(notebook) -> dict:
    """{model id: model} saved in the notebook's metadata (empty when none was saved)."""
    saved = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {})
    return dict(saved.get("state", {}))


def is_nbval_ignored(cell) -> bool:
    return cell.source.lstrip().startswith(IGNORE_COMMENT) or IGNORE_TAG in cell.metadata.get(
        "tags", []
    )


def replace_widget_outputs(notebook, state: dict | None = None) -> list[str]:
    """Replace every widget output by its text; drop the saved state. Return notes."""
    state = widget_state(notebook) if state is None else state
    notes = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        rewritten = False
        for number, output in enumerate(cell.get("outputs", [])):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            text = widget_text(view.get("model_id", ""), state)
            cell.outputs[number] = nbformat.v4.new_output(
                "display_data",
                data={"text/plain": text},
                metadata={
                    MARK: {
                        "widget": state.get(view.get("model_id"), {}).get("model_name", "unknown")
                    }
                },
            )
            rewritten = True
        if rewritten and not is_nbval_ignored(cell):
            cell.metadata.setdefault("tags", []).append(IGNORE_TAG)
            notes.append(
                f"cell {index}: tagged {IGNORE_TAG} (a fresh run shows a live widget, "
                "not the stored text)"
            )
    notebook.metadata.pop("widgets", None)
    return notes


#: Largest change of one channel of one pixel a re-encoded PNG may make (of 255).
PNG_TOLERANCE = 48
#: Largest mean change over all pixels and channels (of 255).
PNG_MEAN_TOLERANCE = 0.5


def compact_png(data: bytes) -> bytes:
    """``data`` as an indexed 256-colour PNG, or unchanged when that is not
    smaller, when it would move the mean channel value by more than
    :data:`PNG_MEAN_TOLERANCE` or any one by more than :data:`PNG_TOLERANCE`,
    or when the image has transparency."""
    from PIL import Image, ImageChops, ImageStat

    image = Image.open(io.BytesIO(data))
    if image.mode not in ("RGB", "RGBA"):
        return data
    if image.mode == "RGBA":
        if image.getextrema()[3][0] < 255:
            return data  # transparent pixels: keep the alpha channel
        image = image.convert("RGB")
    palette = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    difference = ImageChops.difference(image, palette.convert("RGB"))
    largest = max(high for _, high in difference.getextrema())
    mean = sum(ImageStat.Stat(difference).mean) / 3
    if largest > PNG_TOLERANCE or mean > PNG_MEAN_TOLERANCE:
        return data
    out = io.BytesIO()
    palette.save(out, "PNG", optimize=True, dpi=image.info.get("dpi", (72, 72)))
    return out.getvalue() if out.tell() < len(data) else data


def compact_images(notebook) -> int:
    """Re-encode every stored PNG output with :func:`compact_png`; return the bytes saved."""
    saved = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            encoded = output.get("data", {}).get("image/png")
            if not encoded:
                continue
            try:
                data = base64.b64decode("".join(encoded) if isinstance(encoded, list) else encoded)
            except (binascii.Error, ValueError):
                continue
            smaller = compact_png(data)
            if smaller is not data:
                output["data"]["image/png"] = base64.b64encode(smaller).decode("ascii")
                saved += len(data) - len(smaller)
    return saved


def strip_timings(notebook) -> None:
    """Drop the per-cell execution timestamps that change on every run."""
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)


# --------------------------------------------------------------------------- #
# Running                                                                      #
# --------------------------------------------------------------------------- #


def environment(allow_gpu: bool) -> dict:
    """The kernel's environment: the checkout on PYTHONPATH, fixed hashing, CPU only."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in [str(REPO_ROOT), env.get("PYTHONPATH", "")] if part
    )
    env["PYTHONHASHSEED"] = "0"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    # ipykernel picks its inline backend unless MPLBACKEND says otherwise.
    env.pop("MPLBACKEND", None)
    if not allow_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def execute(path: Path, timeout: int, allow_gpu: bool):
    """Run a notebook on a fresh kernel; return it with its new outputs."""
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO_ROOT / "notebooks")}},
        record_timing=False,
        coalesce_streams=True,
        store_widget_state=True,
    )
    client.execute(env=environment(allow_gpu))
    return notebook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to run")
    parser.add_argument("--all", action="store_true", help="every chapter of _toc.yml")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (600)")
    parser.add_argument("--allow-gpu", action="store_true", help="let the kernel see GPUs")
    parser.add_argument(
        "--widgets-only",
        action="store_true",
        help="do not run: only rewrite the stored widget outputs as text and compact the figures",
    )
    args = parser.parse_args(argv)
    paths = chapter_notebooks() if args.all else [path.resolve() for path in args.notebooks]
    if not paths:
        parser.error("name notebooks to run, or --all")
    for path in paths:
        if not path.is_file():
            parser.error(f"no such notebook: {path}")
    for path in paths:
        start = time.perf_counter()
        if args.widgets_only:
            notebook = nbformat.read(path, as_version=4)
        else:
            print(f"{path.name}: running ...", flush=True)
            notebook = execute(path, args.timeout, args.allow_gpu)
            strip_timings(notebook)
        notes = replace_widget_outputs(notebook)
        saved = compact_images(notebook)
        nbformat.write(notebook, path)
        print(f"{path.name}: written in {time.perf_counter() - start:.1f} s"
              f" (figures {saved / 1000:.0f} kB smaller)")
        for note in notes:
            print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
