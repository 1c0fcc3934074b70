"""Live explorers (transformer_edu.figures.live): the same states as the
precomputed explorers, drawn the same, recomputed from the reader's inputs."""

from __future__ import annotations

import base64
import itertools
import math

import numpy as np
import pytest
import torch

import transformer_edu as te
from transformer_edu import figures as ix
from transformer_edu import figures as pg
from transformer_edu.figures.attention_figures import _word_vectors
from transformer_edu.translation.translator import UnknownWordsError

pytest.importorskip("ipywidgets")


@pytest.fixture(scope="module")
def translator():
    from transformer_edu.translation.pretrained import pretrained_translator

    return pretrained_translator("cpu")


def combinations(explorer: ix.Explorer):
    for values in itertools.product(*(c.values for c in explorer.controls)):
        yield {c.name: v for c, v in zip(explorer.controls, values)}


def same_state(a: ix.State, b: ix.State) -> None:
    assert a.summary == b.summary
    assert [p.title for p in a.panels] == [p.title for p in b.panels]
    assert [p.data for p in a.panels] == [p.data for p in b.panels]
    assert [p.layout for p in a.panels] == [p.layout for p in b.panels]


def z_array(trace: dict) -> np.ndarray:
    return np.array(
        [[np.nan if v is None else v for v in row] for row in trace["z"]],
        dtype=float,
    )


def drawn_like(figure, state: ix.State) -> None:
    """The Matplotlib figure draws the numbers of the state's Plotly traces."""
    axes = [ax for ax in figure.axes if ax.get_label() != "<colorbar>"]
    assert len(axes) == len(state.panels)
    for ax, panel in zip(axes, state.panels):
        assert ax.get_title(loc="left") == panel.title
        for trace in panel.data:
            if trace["type"] == "heatmap":
                image = ax.images[0].get_array()  # row 0 = z's row 0
                drawn = np.ma.filled(image.astype(float), np.nan)
                expected = z_array(trace)
                np.testing.assert_array_equal(
                    np.isnan(drawn), np.isnan(expected)
                )
                np.testing.assert_allclose(
                    np.nan_to_num(drawn), np.nan_to_num(expected)
                )
                # row 0 at the top, as in the book
                bottom, top = ax.get_ylim()
                assert bottom > top
                ticks = panel.layout["xaxis"].get("ticktext")
                if ticks:
                    assert [
                        t.get_text() for t in ax.get_xticklabels()
                    ] == ticks
            elif trace["type"] == "scatter":
                ys = [list(line.get_ydata()) for line in ax.lines]
                assert trace["y"] in ys
            elif trace["type"] == "bar":
                heights = [
                    p.get_height() for p in ax.patches if p.get_height()
                ]
                assert sorted(heights) == pytest.approx(sorted(trace["y"]))


def test_live_and_precomputed_explorers_give_the_same_figure():
    explorer = ix.positional_explorer(
        d_models=(8, 16), max_len=12, positions=(0, 5), offsets=(1, 3),
        start_d_model=8,
    )  # fmt: skip
    live = explorer.live()
    for values in combinations(explorer):
        state = live.state(**values)
        same_state(state, explorer.state(**values))
        drawn_like(pg.render_state(state), explorer.state(**values))


def test_mask_playground_precomputed_is_its_live_mode():
    live = pg.mask_playground("a dog ran", seed=3)
    explorer = pg.Explorer.from_live(live, "mask-playground")
    assert [c.name for c in explorer.controls] == ["pads", "polarity"]
    for values in combinations(explorer):
        same_state(live.state(**values), explorer.state(**values))
    state = live.state(pads=1, causal=True)
    drawn_like(pg.render_state(state), state)


def test_live_controls_can_offer_values_the_book_did_not_precompute():
    live = pg.positional_playground()
    state = live.state(d_model=130, max_len=7, position=6, offset=0)
    table = te.sinusoidal_table(7, 130)
    np.testing.assert_allclose(
        z_array(state.panels[0].data[0]), table, atol=1e-6
    )
    with pytest.raises(ValueError, match="position"):
        live.state(max_len=5, position=9)
    with pytest.raises(ValueError, match="d_model must be even"):
        live.state(d_model=15)


def test_mask_state_pads_masks_and_flipped_polarity():
    tokens = "the cat sat on the mat"
    moved = {
        padding: pg.mask_state(tokens, 3, padding, False).summary
        for padding in (True, False)
    }
    assert "caused by the pads: 0.0000." in moved[True]
    assert "caused by the pads: 0.0000." not in moved[False]
    right = pg.mask_state(tokens, 2, True, True).panels[0].data[0]["z"]
    wrong = pg.mask_state(tokens, 2, True, True, "blocked").panels[0]
    for row, flipped in zip(right, wrong.data[0]["z"]):
        assert all((a is None) != (b is None) for a, b in zip(row, flipped))
    # the causal mask: nothing above the diagonal
    assert all(right[q][k] is None for q in range(8) for k in range(q + 1, 8))


def test_mask_state_runs_the_readers_attention_and_checks_what_it_returns():
    def mine(query, key, value, mask):
        return te.scaled_dot_product_attention(query, key, value, mask)

    assert (
        pg.mask_state("a b c", attention=mine).details
        == pg.mask_state("a b c").details
    )

    def output_only(query, key, value, mask):
        return te.scaled_dot_product_attention(query, key, value, mask)[0]

    with pytest.raises(
        TypeError, match=r"attention must return \(output, weights\)"
    ):
        pg.mask_state("a b c", attention=output_only)
    with pytest.raises(ValueError, match="tokens must hold at least one"):
        pg.mask_state("   ")
    with pytest.raises(ValueError, match="must not contain '<pad>'"):
        pg.mask_state("a <pad>")
    with pytest.raises(ValueError, match="pads must be in 0 … 8, got 9"):
        pg.mask_state("a b", pads=9)
    with pytest.raises(ValueError, match="polarity must be"):
        pg.mask_state("a b", polarity="true")


def test_a_word_keeps_its_vector_whatever_the_other_words():
    one = _word_vectors(["cat", "dog"], 8, 0)
    two = _word_vectors(["zebra", "cat"], 8, 0)
    assert torch.equal(one[0], two[1])


def test_heads_playground_draws_every_head_and_leaves_the_global_seed():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    state = pg.heads_state("a b c d", n_heads=8, causal=True)
    assert torch.equal(torch.rand(3), expected)
    assert len(state.panels) == 8
    assert state.details.count("head ") == 8
    with pytest.raises(ValueError, match="n_heads must divide d_model = 16"):
        pg.heads_state("a b", n_heads=3)


def test_the_widget_redraws_when_a_control_changes_and_shows_errors():
    live = pg.mask_playground("a b c")
    box = live.widget
    assert "tse-live" in box._dom_classes
    first = live.last_state.details
    live.set(causal=True)
    assert live.last_state.details != first
    assert live.values["causal"] is True
    live.set(tokens="")  # the text box emptied: a message, no figure
    assert live.last_state is None
    live.set(tokens="x y z w")
    assert live.last_state.summary.startswith("4 tokens")
    with pytest.raises(ValueError, match="unknown control"):
        live.set(colour="red")


def test_the_widget_holds_its_drawing_in_its_output_state():
    # Set as the Output widget's state, not printed inside `with output:`,
    # whose capture ipywidgets 7's front ends (Colab's, the classic
    # Notebook's) miss while the cell that makes the widget runs.
    live = pg.mask_playground("a b c")
    live.widget
    image, text = live._output.outputs
    assert image["output_type"] == "display_data"
    assert base64.b64decode(image["data"]["image/png"]).startswith(b"\x89PNG")
    assert text == {"output_type": "stream", "name": "stdout",
                    "text": printed(live.last_state) + "\n"}  # fmt: skip
    live.set(causal=True)
    assert live._output.outputs[1]["text"] == printed(live.last_state) + "\n"
    live.set(tokens="")
    (message,) = live._output.outputs
    assert message["text"].startswith("Nothing to draw: ")


def printed(state) -> str:
    return "\n".join([state.summary] + ([state.details] if state.details else []))


def test_live_explorer_checks_its_arguments():
    with pytest.raises(TypeError, match="states must be a function"):
        pg.LiveExplorer({}, title="t", description="d", controls=[])
    with pytest.raises(TypeError, match="controls must hold"):
        pg.LiveExplorer(pg.mask_state, title="t", description="d",
                        controls=["tokens"])  # fmt: skip
    with pytest.raises(ValueError, match="distinct names"):
        pg.LiveExplorer(pg.mask_state, title="t", description="d",
                        controls=[pg.Text("a", ""), pg.Toggle("a")])  # fmt: skip
    with pytest.raises(ValueError, match="both controls and fixed"):
        pg.LiveExplorer(pg.mask_state, title="t", description="d",
                        controls=[pg.Text("tokens", "a")],
                        fixed={"tokens": "b"})  # fmt: skip
    with pytest.raises(TypeError, match="value must be a bool"):
        pg.Toggle("causal", 1)
    with pytest.raises(TypeError, match="value must be a str"):
        pg.Text("tokens", 3)
    by_mapping = ix.Explorer(
        "x", title="t", description="d", controls=[],
        states={(): ix.State(ix.Panel({"data": []}), "s")},
    )  # fmt: skip
    with pytest.raises(TypeError, match="built from a mapping"):
        by_mapping.live()


def test_render_state_names_a_trace_it_cannot_draw():
    state = ix.State(ix.Panel({"data": [{"type": "pie"}]}, "p"), "s")
    with pytest.raises(ValueError, match="'pie' trace in panel 'p'"):
        pg.render_state(state)


def test_translation_state_masks_words_and_grammar(translator):
    masked = pg.translation_state(translator, "고양이가 생선을 먹었다")
    assert masked.summary.startswith(
        "고양이가 생선을 먹었다 → the cat ate the fish"
    )
    assert "predicts: the cat ate the fish <eos>" in masked.details
    assert "on <pad> keys (any layer, head, query): 0.0000" in masked.details
    open_pads = pg.translation_state(
        translator, "고양이가 생선을 먹었다", padding=False
    )
    weight = float(open_pads.details.split("query): ")[1].split()[0])
    assert weight > 0
    blind = pg.translation_state(
        translator, "고양이가 생선을 먹었다", causal=False
    )
    assert blind.details != masked.details
    decoder = blind.panels[1].data[0]["z"]
    assert decoder[0][1] is not None  # causal off: nothing blocked
    assert masked.panels[1].data[0]["z"][0][1] is None
    odd = pg.translation_state(translator, "생선을 고양이가 고양이가 먹었다")
    assert "Outside the grammar" in odd.summary and " → " in odd.summary
    with pytest.raises(UnknownWordsError, match="did you mean"):
        pg.translation_state(translator, "고양이가 피자를 먹었다")
    with pytest.raises(ValueError, match="layer must be in"):
        pg.translation_state(translator, "고양이가 생선을 먹었다", layer=9)


def test_translator_playground_beam_sizes_and_messages(translator):
    live = pg.translator_playground(translator)
    state = live.state(beam_size=4)
    assert "Minsu read the book in the park yesterday" in state.summary
    scores = state.panels[0].data[0]["x"]
    assert scores == sorted(scores, reverse=True) and len(scores) >= 2
    assert all(math.isfinite(s) and s <= 0 for s in scores)
    greedy = live.state(beam_size=1)
    assert "K = 1" in greedy.summary
    assert live.widget is not None  # builds and draws
    live.set(korean="고양이가 피자를 먹었다")
    assert live.last_state is None  # the translator's message instead
