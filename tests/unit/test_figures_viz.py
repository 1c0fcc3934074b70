"""Tests of the book's figures: transformer_edu.figures.viz and the explorers' panels."""

from __future__ import annotations

import json
import re
import warnings
from unittest import mock

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import transformer_edu as te  # noqa: E402
from transformer_edu import figures  # noqa: E402
from transformer_edu.figures import viz  # noqa: E402

TOKENS = ["the", "cat", "sat"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _weights(lq: int, lk: int) -> torch.Tensor:
    return torch.rand(lq, lk, generator=torch.Generator().manual_seed(0)).softmax(-1)


# ---------------------------------------------------------------- viz


@pytest.mark.parametrize("found", ["NanumGothic", None], ids=["korean font", "no korean font"])
def test_use_book_style_lists_the_korean_font_after_dejavu_sans(found):
    with mock.patch.object(viz, "korean_font", return_value=found):
        assert viz.use_book_style() == found
    families = ["DejaVu Sans"] + ([found] if found else [])
    assert matplotlib.rcParams["font.family"] == families
    assert matplotlib.rcParams["font.sans-serif"] == families + ["sans-serif"]
    assert matplotlib.rcParams["figure.figsize"][0] == viz.BOOK_WIDTH
    viz.use_book_style()


def test_the_korean_font_found_is_one_matplotlib_knows():
    korean = viz.korean_font()
    if korean is None:
        pytest.skip("no font with Hangul glyphs is installed")
    assert korean in {f.name for f in matplotlib.font_manager.fontManager.ttflist}


def test_korean_tokens_draw_without_glyph_warnings():
    viz.use_book_style()
    with warnings.catch_warnings(record=True) as caught:
        ax = viz.attention_heatmap(_weights(2, 2), ["나는", "학교에"], ["학교에", "간다"])
        ax.figure.canvas.draw()
    assert not [w for w in caught if "Glyph" in str(w.message)]


def test_without_a_korean_font_the_style_falls_back_silently():
    with mock.patch.object(viz, "korean_font", return_value=None):
        assert viz.use_book_style() is None
    assert matplotlib.rcParams["font.family"] == ["DejaVu Sans"]
    with warnings.catch_warnings(record=True) as caught:
        ax = viz.attention_heatmap(_weights(2, 2), ["나는", "학교에"])
        ax.figure.canvas.draw()
    assert not [w for w in caught if "Glyph" in str(w.message)]
    viz.use_book_style()


PHONE_COLUMN_PX = 340
"""Width of a cell's image on a 390 px phone (the browser test measures it)."""


def test_figure_text_stays_at_least_9_css_px_on_a_phone():
    viz.use_book_style()
    assert matplotlib.rcParams["figure.figsize"][0] == viz.BOOK_WIDTH
    fig = viz.attention_grid(torch.rand(2, 3, 3).softmax(-1), TOKENS, ncols=2, annotate=True, suptitle="s")
    ax = viz.line_plot([1, 2, 4], {"a": [1, 2, 3], "b": [3, 2, 1]}, title="t", xlabel="x", ylabel="y")
    texts = [t for f in (fig, ax.figure) for t in f.findobj(matplotlib.text.Text) if t.get_text()]
    assert len(texts) > 20
    smallest = min(t.get_fontsize() for t in texts)
    assert smallest >= viz.MIN_FONT_PT
    # A BOOK_WIDTH figure is scaled to the phone's column: its smallest text in CSS px.
    scale = PHONE_COLUMN_PX / (viz.BOOK_WIDTH * viz.DPI)
    assert smallest / 72 * viz.DPI * scale >= 9.0
    assert matplotlib.rcParams["savefig.dpi"] == 2 * viz.DPI


def test_inline_figures_are_retina_pngs_in_ipython():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        viz.use_book_style()
        formatter = shell.display_formatter.formatters["image/png"]
        fig, ax = plt.subplots(figsize=(2, 1))
        data, metadata = formatter(fig)
        import base64
        import io

        from PIL import Image

        png = base64.b64decode(data) if isinstance(data, str) else data
        pixels = Image.open(io.BytesIO(png)).size[0]
        # a retina PNG: twice the pixels of the width at which it is shown
        assert abs(pixels - 2 * metadata["width"]) <= 2
    finally:
        InteractiveShell.clear_instance()


def test_attention_heatmap_puts_the_tokens_on_the_axes():
    keys = ["a", "b", "c", "d"]
    ax = viz.attention_heatmap(_weights(3, 4), TOKENS, keys, title="t")
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_xticklabels()] == keys
    assert ax.get_title() == "t"
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("query", "key")


def test_attention_heatmap_defaults_keys_to_queries_and_drops_unit_dimensions():
    ax = viz.attention_heatmap(_weights(3, 3)[None, None], TOKENS)
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS


def test_attention_heatmap_annotates_each_cell():
    weights = torch.tensor([[0.25, 0.75], [1.0, 0.0]])
    ax = viz.attention_heatmap(weights, ["x", "y"], annotate=True)
    assert sorted(t.get_text() for t in ax.texts) == ["0.00", "0.25", "0.75", "1.00"]


@pytest.mark.parametrize(
    "shape, queries, keys",
    [((3, 4), TOKENS, ["a", "b", "c"]), ((2, 3), TOKENS, TOKENS), ((3, 3), ["a"], None)],
)
def test_attention_heatmap_names_both_sizes_when_tokens_do_not_match(shape, queries, keys):
    with pytest.raises(ValueError) as error:
        viz.attention_heatmap(_weights(*shape), queries, keys)
    message = str(error.value)
    assert str(shape) in message
    assert "query_tokens" in message and "key_tokens" in message


def test_attention_heatmap_rejects_a_batch_of_maps():
    with pytest.raises(ValueError, match=r"2-D \(Lq, Lk\)"):
        viz.attention_heatmap(torch.rand(2, 3, 3), TOKENS)


def test_attention_heatmap_rejects_a_string_of_tokens():
    with pytest.raises(TypeError, match="split"):
        viz.attention_heatmap(_weights(3, 3), "the cat sat")


def test_attention_heatmap_greys_out_blocked_cells():
    mask = te.causal_mask(3)  # (1, 1, 3, 3), True = may attend
    ax = viz.attention_heatmap(_weights(3, 3), TOKENS, mask=mask)
    mesh = ax.collections[0]
    hidden = np.ma.getmaskarray(mesh.get_array()).reshape(3, 3)
    assert np.array_equal(hidden, ~mask[0, 0].numpy())


def test_attention_grid_draws_one_titled_panel_per_head():
    weights = torch.rand(1, 4, 3, 3).softmax(-1)
    fig = viz.attention_grid(weights, TOKENS, ncols=2, titles=["a", "b", "c", "d"])
    titled = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titled == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="titles has 2 entries but weights has 4 heads"):
        viz.attention_grid(weights, TOKENS, titles=["a", "b"])
    with pytest.raises(ValueError, match=r"3-D \(H, Lq, Lk\)"):
        viz.attention_grid(torch.rand(3, 3), TOKENS)


def test_matrix_heatmap_centres_signed_values_at_zero():
    ax = viz.matrix_heatmap(torch.tensor([[-2.0, 1.0], [0.5, 0.0]]), signed=True)
    low, high = ax.collections[0].get_clim()
    assert (low, high) == (-2.0, 2.0)
    with pytest.raises(ValueError, match="row_labels has 3 tokens"):
        viz.matrix_heatmap(torch.zeros(2, 2), row_labels=["a", "b", "c"])


def test_line_plot_draws_one_labelled_curve_per_entry():
    ax = viz.line_plot([1, 2, 4], {"a": [1, 2, 3], "b": [3, 2, 1]}, xlabel="x", logx=True)
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
    with pytest.raises(ValueError, match="curve 'c' has 2 values but x has 3"):
        viz.line_plot([1, 2, 3], {"c": [1, 2]})


def test_plotly_colorscale_matches_the_colour_map_ends():
    scale = viz.plotly_colorscale()
    assert scale[0] == [0.0, "#ffffff"] and scale[-1][0] == 1.0


# ---------------------------------------------------------------- text width


@pytest.mark.parametrize(
    "text, width",
    [("cat", 3), ("고양이", 6), ("고양이가 a", 10), ("", 0), ("e\u0301", 1), ("ａ", 2)],
)
def test_text_width_counts_hangul_as_two_columns(text, width):
    assert viz.text_width(text) == width


def test_pad_aligns_korean_and_english_columns():
    rows = [viz.pad(ko, 10) + "|" for ko in ("고양이가", "the cat", "개")]
    assert {viz.text_width(row) for row in rows} == {11}
    assert viz.pad("ab", 5, "right") == "   ab"
    assert viz.pad("ab", 5, "center") == " ab  "
    assert viz.pad("고양이가 생선을", 4) == "고양이가 생선을"  # wider: unchanged


def test_text_width_and_pad_reject_bad_input():
    with pytest.raises(TypeError, match="text must be a str"):
        viz.text_width(3)
    with pytest.raises(ValueError, match="one line"):
        viz.text_width("a\tb")
    with pytest.raises(ValueError, match="width must be at least 0, got -1"):
        viz.pad("a", -1)
    with pytest.raises(ValueError, match="align must be"):
        viz.pad("a", 3, "middle")


# ---------------------------------------------------------------- mask explorer


@pytest.fixture(scope="module")
def explorer() -> figures.Explorer:
    return figures.mask_explorer("the cat sat on the mat", max_pad=3, start_pad=2)


def _z(explorer, pads: int, panel: int = 0, query: int = -1) -> np.ndarray:
    trace = explorer.state(pads=pads, query=query).panels[panel].data[0]
    return np.array(trace["z"], dtype=float)  # None → nan


def test_mask_explorer_has_a_button_per_pad_count_and_query():
    fig = figures.mask_explorer("the cat sat on the mat", max_pad=3, start_pad=2)
    pads, query = fig.controls
    assert pads.labels == ["0 pads", "1 pad", "2 pads", "3 pads"] and pads.start == 2
    assert query.labels == ["none", "the", "cat", "sat", "on", "the", "mat"]
    assert query.start == -1
    html = fig.html()
    assert html.count('class="tse-option"') == 4 + 7
    assert html.count('aria-pressed="true"') == 2


def test_mask_explorer_pad_buttons_change_the_plotted_data(explorer):
    zs = [json.dumps(figures.rounded(_z(explorer, n))) for n in range(4)]
    assert len(set(zs)) == 4
    for n_pad in range(4):
        panels = explorer.state(pads=n_pad).panels
        assert len(panels) == 4
        for panel in panels:
            assert len(panel.data[0]["z"]) == 6 + n_pad
            labels = "the cat sat on the mat".split() + ["<pad>"] * n_pad
            assert panel.layout["xaxis"]["ticktext"] == labels


def test_mask_explorer_blocks_the_masked_cells(explorer):
    z_no, z_pad, z_causal, z_both = (_z(explorer, 3, panel) for panel in range(4))
    n_real, length = 6, 9
    assert not np.isnan(z_no).any()
    assert np.isnan(z_pad[:, n_real:]).all() and not np.isnan(z_pad[:, :n_real]).any()
    upper = np.triu(np.ones((length, length), dtype=bool), k=1)
    assert np.isnan(z_causal[upper]).all() and not np.isnan(z_causal[~upper]).any()
    assert np.isnan(z_both[:, n_real:]).all() and np.isnan(z_both[upper]).all()
    for z in (z_no, z_pad, z_causal, z_both):  # every query's weights still sum to 1
        assert np.allclose(np.nansum(z, axis=1), 1.0, atol=1e-3)


def test_mask_explorer_matches_the_package(explorer):
    for panel, allowed in enumerate((None, "padding", "causal", "both")):
        blocked = np.isnan(_z(explorer, 1, panel))
        expected = np.zeros_like(blocked)
        if allowed in ("padding", "both"):
            ids = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
            expected |= ~te.padding_mask(ids)[0, 0].expand(7, 7).numpy()
        if allowed in ("causal", "both"):
            expected |= ~te.causal_mask(7)[0, 0].numpy()
        assert np.array_equal(blocked, expected)


def test_mask_explorer_reports_that_masked_pads_leave_real_outputs_unchanged(explorer):
    titles = [panel.title for panel in explorer.state(pads=3).panels]
    moved = [float(re.search(r"moved ([0-9.]+)", t).group(1)) for t in titles]
    assert moved[0] > 0.1  # no mask: the pads pull the real tokens' outputs away
    assert moved[1:] == [0.0, 0.0, 0.0]  # pads after the sentence are invisible to causal queries too
    assert f"no mask {moved[0]:.4f}, padding mask 0.0000" in explorer.state(pads=3).summary


def test_mask_explorer_query_buttons_outline_a_row(explorer):
    assert all(not p.layout["shapes"] for p in explorer.state(query=-1).panels)
    shapes = [p.layout["shapes"] for p in explorer.state(query=2).panels]
    assert all(len(s) == 1 and (s[0]["y0"], s[0]["y1"]) == (1.5, 2.5) for s in shapes)
    assert "'sat'" in explorer.state(query=2).summary
    # the query buttons leave the data alone
    assert explorer.state(pads=1, query=2).panels[0].data == explorer.state(pads=1).panels[0].data


def test_mask_explorer_validates_its_arguments():
    with pytest.raises(ValueError, match="start_pad"):
        figures.mask_explorer(max_pad=2, start_pad=3)
    with pytest.raises(ValueError, match="sentence"):
        figures.mask_explorer(sentence="  ")
    with pytest.raises(ValueError, match="explorer_id"):
        figures.mask_explorer(explorer_id="1 bad")


def test_mask_explorer_html_is_deterministic(explorer):
    again = figures.mask_explorer("the cat sat on the mat", max_pad=3, start_pad=2)
    assert explorer.html() == again.html()
    assert explorer.text() == again.text()


def test_wrap_counts_hangul_as_two_columns():
    text = "in the clause '고양이가 먹었다', 먹다 needs an object with 을/를 such as '생선을'"
    lines = viz.wrap(text, 40, indent="  ").split("\n")
    assert all(viz.text_width(line) <= 40 for line in lines) and len(lines) > 2
    assert all(line.startswith("  ") for line in lines)
    assert " ".join(line.strip() for line in lines) == text  # only spaces became breaks
    assert textwrap_fill_is_wider(text)
    assert viz.wrap("a " + "가" * 30 + " b", 20) == "a\n" + "가" * 30 + "\nb"  # a long word stays whole
    with pytest.raises(ValueError, match="width must be at least 3 \\(wider than the indent '  '\\), got 2"):
        viz.wrap("x", 2, indent="  ")
    with pytest.raises(TypeError, match="text must be a str"):
        viz.wrap(3)


def textwrap_fill_is_wider(text):
    import textwrap

    return any(viz.text_width(line) > 40 for line in textwrap.fill(text, 40).split("\n"))
