"""scripts/execute_notebooks.py stores outputs every front end can show.

A stored ipywidgets output is a pointer to a widget model: Colab and the book
never render it, and Jupyter shows "Loading widget..." or "Error displaying
widget" wherever the model is missing. The script replaces each by plain text
(what running the cell shows; a tqdm bar in its final state) and tags the cell
for nbval. These tests check the conversion, run it for real on a small
notebook, and hold every stored chapter to the convention.
"""

from __future__ import annotations

import importlib.util
import json

import nbformat
import pytest

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

_spec = importlib.util.spec_from_file_location(
    "execute_notebooks", bs.REPO_ROOT / "scripts" / "execute_notebooks.py"
)
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)

NOTEBOOKS = sorted((bs.REPO_ROOT / "notebooks").glob("*.ipynb"))


def model(name: str, **state) -> dict:
    return {"model_name": name, "state": state}


def ref(model_id: str) -> str:
    return f"IPY_MODEL_{model_id}"


def tqdm_state(value: float, total: float, style: str, left: str, right: str) -> dict:
    return {
        "box": model("HBoxModel", children=[ref("left"), ref("bar"), ref("right")]),
        "left": model("HTMLModel", value=left, description=""),
        "bar": model(
            "FloatProgressModel", value=value, max=total, min=0.0, bar_style=style, description=""
        ),
        "right": model("HTMLModel", value=right, description=""),
    }


def test_finished_tqdm_bar_becomes_its_final_text():
    state = tqdm_state(
        12,
        12,
        "success",
        "copy\u2007task:\u2007100%",
        "\u200712/12\u2007[00:07&lt;00:00,\u2007\u20071.55epoch/s]",
    )
    assert (
        ex.widget_text("box", state)
        == "copy task: 100%|██████████| 12/12 [00:07<00:00,  1.55epoch/s]"
    )


def test_tqdm_bar_of_a_loop_that_stopped_early_says_so_and_is_not_zero():
    state = tqdm_state(6, 8, "danger", "\u200775%", "\u20076/8\u2007[00:30&lt;00:10]")
    text = ex.widget_text("box", state)
    assert text.startswith("75%|███████▌  | 6/8")
    assert text.endswith("(stopped early)")


def test_explorer_lists_its_controls_and_what_to_do():
    state = {
        "root": model(
            "VBoxModel",
            children=[ref("k"), ref("mask"), ref("who"), ref("out")],
            _dom_classes=["widget-interact"],
        ),
        "k": model("IntSliderModel", description="pad tokens", value=2),
        "mask": model("CheckboxModel", description="padding mask", value=True),
        "who": model("DropdownModel", description="", index=0),
        "out": model("OutputModel", outputs=[]),
        "style": model("SliderStyleModel", description_width=""),
    }
    text = ex.widget_text("root", state)
    assert text == (
        "Interactive controls: pad tokens, padding mask, a dropdown.\n"
        "Run this cell in Jupyter or Colab to use them."
    )


def test_widget_without_saved_state_gets_a_generic_text():
    assert ex.widget_text("missing", {}) == (
        "Interactive widget.\nRun this cell in Jupyter or Colab to use it."
    )


def test_long_lists_of_controls_wrap_to_the_column():
    names = [f"설정 {i}" for i in range(30)]
    state = {"root": model("VBoxModel", children=[ref(n) for n in names])}
    state.update({n: model("IntSliderModel", description=n) for n in names})
    text = ex.widget_text("root", state)
    assert all(ex.width(line) <= ex.WIDTH for line in text.splitlines())
    assert "설정 29" in text


def notebook_with_widget(source: str, state: dict) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                ex.WIDGET_VIEW: {"model_id": "box", "version_major": 2, "version_minor": 0},
                "text/plain": "HBox(children=...)",
            },
        ),
        nbformat.v4.new_output("stream", name="stdout", text="done\n"),
    ]
    notebook.cells.append(cell)
    notebook.metadata["widgets"] = {
        ex.WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}
    }
    return notebook


def test_replacing_tags_cells_for_nbval_and_drops_the_state():
    state = tqdm_state(1, 1, "success", "100%", " 1/1")
    notebook = notebook_with_widget("for _ in tqdm(range(1)):\n    pass", state)
    notes = ex.replace_widget_outputs(notebook)
    cell = notebook.cells[0]
    assert ex.WIDGET_VIEW not in json.dumps(notebook)
    assert "widgets" not in notebook.metadata
    assert cell.outputs[0].data["text/plain"].startswith("100%|")
    assert cell.outputs[1].text == "done\n"
    assert cell.metadata["tags"] == [ex.IGNORE_TAG]
    assert len(notes) == 1


def test_cells_that_nbval_already_ignores_are_not_tagged():
    notebook = notebook_with_widget("# NBVAL_IGNORE_OUTPUT\nshow()", {})
    assert ex.replace_widget_outputs(notebook) == []
    assert "tags" not in notebook.cells[0].metadata


def test_script_runs_a_notebook_and_stores_text_for_its_widgets(tmp_path):
    """A real run: nbclient's saved widget state is what the conversion reads."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import ipywidgets\n"
            "from tqdm.auto import tqdm\n"
            "for _ in tqdm(range(3), desc='steps'):\n"
            "    pass"
        ),
        nbformat.v4.new_code_cell(
            "def show(n=2, flag=True):\n"
            "    print(n * 2 if flag else n)\n"
            "ipywidgets.interact(show, n=(0, 4), flag=ipywidgets.Checkbox(description='double'));"
        ),
        nbformat.v4.new_code_cell("import os\nprint(os.getcwd().endswith('notebooks'))"),
    ]
    path = tmp_path / "tiny.ipynb"
    nbformat.write(notebook, path)
    assert ex.main([str(path), "--timeout", "120"]) == 0
    stored = nbformat.read(path, as_version=4)
    assert ex.WIDGET_VIEW not in json.dumps(stored)
    assert "widgets" not in stored.metadata
    texts = [
        output.data["text/plain"]
        for cell in stored.cells
        for output in cell.outputs
        if ex.MARK in output.get("metadata", {})
    ]
    assert texts[0].startswith("steps: 100%|██████████| 3/3")
    assert texts[1].startswith("Interactive controls: n, double.")
    assert stored.cells[0].metadata["tags"] == [ex.IGNORE_TAG]
    assert stored.cells[2].outputs[0].text == "True\n"
    assert all("execution" not in cell.metadata for cell in stored.cells)


# --------------------------------------------------------------------------- #
# The stored chapters follow the convention                                    #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_no_stored_output_is_a_widget_pointer(notebook):
    data = json.loads(notebook.read_text(encoding="utf-8"))
    pointers = [
        index
        for index, cell in enumerate(data["cells"])
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
        if ex.WIDGET_VIEW in output.get("data", {})
    ]
    assert pointers == [], (
        f"cells {pointers} store widget pointers that Colab and Jupyter cannot show; "
        f"run `python scripts/execute_notebooks.py {notebook.relative_to(bs.REPO_ROOT)}`"
    )
    assert "widgets" not in data["metadata"], (
        "saved widget state: run scripts/execute_notebooks.py"
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_cells_with_widget_text_are_ignored_by_nbval(notebook):
    stored = nbformat.read(notebook, as_version=4)
    for index, cell in enumerate(stored.cells):
        if cell.cell_type == "code" and any(
            ex.MARK in output.get("metadata", {}) for output in cell.outputs
        ):
            assert ex.is_nbval_ignored(cell), (
                f"cell {index} shows widget text but nbval compares it"
            )


# --------------------------------------------------------------------------- #
# Figures: stored PNGs are compacted without changing the picture            #
# --------------------------------------------------------------------------- #


def _figure_png(kind: str) -> bytes:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    if kind == "heatmap":
        ax.imshow(np.random.default_rng(0).random((8, 8)), cmap="viridis")
        ax.set_title("attention weights")
    else:  # a smooth two-dimensional gradient: more colours than a palette holds
        y, x = np.mgrid[0:1:300j, 0:1:400j]
        ax.imshow(np.stack([x, y, (x + y) / 2], axis=-1))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def test_a_figure_is_compacted_to_a_palette_with_the_same_pixels():
    import io

    from PIL import Image, ImageChops, ImageStat

    original = _figure_png("heatmap")
    compact = ex.compact_png(original)
    assert len(compact) < 0.6 * len(original)
    before, after = Image.open(io.BytesIO(original)), Image.open(io.BytesIO(compact))
    assert after.mode == "P" and after.size == before.size
    difference = ImageChops.difference(before.convert("RGB"), after.convert("RGB"))
    assert max(high for _, high in difference.getextrema()) <= ex.PNG_TOLERANCE
    assert sum(ImageStat.Stat(difference).mean) / 3 <= ex.PNG_MEAN_TOLERANCE


def test_an_image_a_palette_would_change_is_kept_as_it_is():
    original = _figure_png("gradient")
    assert ex.compact_png(original) is original


def test_compact_images_rewrites_the_stored_png_and_counts_the_bytes():
    import base64

    original = _figure_png("heatmap")
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("plot()")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "image/png": base64.b64encode(original).decode(), "text/plain": "<Figure>"})]
    notebook.cells.append(cell)
    saved = ex.compact_images(notebook)
    stored = base64.b64decode(notebook.cells[0].outputs[0]["data"]["image/png"])
    assert saved == len(original) - len(stored) > 0


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_stored_figures_are_compacted(notebook):
    import base64

    nb = nbformat.read(notebook, as_version=4)
    loose = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            encoded = output.get("data", {}).get("image/png")
            if encoded:
                data = base64.b64decode("".join(encoded) if isinstance(encoded, list) else encoded)
                if ex.compact_png(data) is not data:
                    loose.append(index)
    assert not loose, (
        f"{notebook.name}: cells {loose} store PNGs that compact_png would shrink; "
        "run scripts/execute_notebooks.py (or --widgets-only) on it"
    )
