"""The beam-search explorer of Chapter 8 (figures.beam_explorer_figure)."""

from __future__ import annotations

import pytest
import torch

import transformer_edu as te
from transformer_edu import data, decoding, figures
from transformer_edu.translation.translator import Translator, UnknownWordsError

SENTENCE = "고양이가 생선을 먹었다"

# Beam search on tiny models runs far faster on one thread (conftest.py).
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def translator() -> Translator:
    """A small random model: the figure must agree with the decoders whatever the weights."""
    pairs = data.toy_translation_splits(0, n_train=200, n_valid=5, n_test=5)["train"]
    src_vocab = data.Vocab.build([src for src, _ in pairs] + [SENTENCE])
    tgt_vocab = data.Vocab.build([tgt for _, tgt in pairs])
    torch.manual_seed(0)
    config = te.TransformerConfig(len(src_vocab), len(tgt_vocab), d_model=16, n_heads=2, d_ff=32, n_layers=1,
                                  dropout=0.0, max_len=40)
    return Translator(te.Transformer(config), src_vocab, tgt_vocab)


def _src(translator: Translator, sentence: str) -> torch.Tensor:
    return data.pad_batch([translator.encode_source(sentence)], data.Vocab.pad_id)


def _bars(explorer, beam_size: int, alpha: float):
    """The bar trace and its annotations for one setting."""
    (panel,) = explorer.state(beam_size=beam_size, alpha=alpha).panels
    (trace,) = panel.data
    texts = [a["text"] for a in panel.layout["annotations"]]
    return trace, texts


def _hypothesis(text: str) -> str:
    """'2. the cat ate (−0.52)' → 'the cat ate'."""
    words = text.split(". ", 1)[1].rsplit(" (", 1)[0]
    return words.removesuffix(" ✓").removesuffix(" …")


def test_one_button_per_beam_size_and_one_slider_step_per_alpha(translator):
    explorer = figures.beam_explorer(translator, SENTENCE, beam_sizes=(1, 2, 4, 8), alphas=(0.0, 0.6, 1.0),
                                         start_beam_size=4, start_alpha=0.6)
    sizes, alphas = explorer.controls
    assert isinstance(sizes, figures.Buttons) and isinstance(alphas, figures.Slider)
    assert sizes.labels == ["K = 1 (greedy)", "K = 2", "K = 4", "K = 8"] and sizes.start == 4
    assert alphas.labels == ["0", "0.6", "1"] and alphas.start == 0.6
    for beam_size in (1, 2, 4, 8):
        for alpha in (0.0, 0.6, 1.0):
            trace, _ = _bars(explorer, beam_size, alpha)
            assert all(x <= 0 for x in trace["x"])  # scores are log-probabilities
    heights = {panel.height for state in explorer._states.values() for panel in state.panels}
    assert len(heights) == 1  # the buttons do not move when K changes the number of bars


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_bars_are_the_nbest_lists_of_the_package(translator, alpha):
    beam_sizes = (1, 2, 4)
    explorer = figures.beam_explorer(translator, SENTENCE, beam_sizes=beam_sizes, start_beam_size=2)
    src = _src(translator, SENTENCE)
    max_len = translator.output_limit(src.shape[1])  # the explorer's default, the translator's
    for beam_size in beam_sizes:
        trace, texts = _bars(explorer, beam_size, alpha)
        nbest = decoding.beam_search_nbest(translator.model, src, max_len=max_len, bos_id=data.Vocab.bos_id,
                                           eos_id=data.Vocab.eos_id, beam_size=beam_size, length_penalty=alpha)[0]
        assert trace["x"] == pytest.approx([h.score for h in nbest], abs=1e-3)
        expected = [translator.tgt_vocab.decode(list(h.tokens)) or "(nothing: EOS first)" for h in nbest]
        assert [_hypothesis(text) for text in texts] == expected
        assert trace["marker"]["color"] == ["#08306b"] + ["#6baed6"] * (len(texts) - 1)  # the winner is dark
        best, _ = decoding.beam_search(translator.model, src, max_len=max_len, bos_id=data.Vocab.bos_id,
                                       eos_id=data.Vocab.eos_id, beam_size=beam_size, length_penalty=alpha)
        assert translator.tgt_vocab.decode(best[0]) == translator.tgt_vocab.decode(list(nbest[0].tokens))


def test_beam_size_one_is_greedy(translator):
    explorer = figures.beam_explorer(translator, SENTENCE, beam_sizes=(1,), start_beam_size=1)
    greedy = translator.translate(SENTENCE, beam_size=1)
    _, texts = _bars(explorer, 1, 0.6)
    assert _hypothesis(texts[0]) == (greedy or "(nothing: EOS first)")
    assert "(greedy)" in explorer.start_state.summary


def test_reference_is_marked(translator):
    output = translator.translate(SENTENCE, beam_size=4)
    explorer = figures.beam_explorer(translator, SENTENCE, reference=output, beam_sizes=(4,),
                                         start_beam_size=4)
    _, texts = _bars(explorer, 4, 0.6)
    assert " ✓ (" in texts[0]
    assert not any(" ✓ (" in text for text in texts[1:])
    assert explorer.start_state.summary.endswith("the reference.")


def test_html_is_deterministic(translator):
    first = figures.beam_explorer(translator, SENTENCE).html()
    second = figures.beam_explorer(translator, SENTENCE).html()
    assert first == second


def test_the_trained_translator_gets_the_running_example_right():
    from transformer_edu.translation.pretrained import pretrained_translator

    trained = pretrained_translator("cpu")
    explorer = figures.beam_explorer(trained, SENTENCE, reference="the cat ate the fish")
    for beam_size in explorer.controls[0].values:
        for alpha in explorer.controls[1].values:
            _, texts = _bars(explorer, beam_size, alpha)
            assert texts[0].startswith("1. the cat ate the fish ✓ (")


@pytest.mark.parametrize("change, error, match", [
    (dict(sentence="고양이가 우주를 먹었다"), UnknownWordsError, "우주를"),
    (dict(sentence="  "), ValueError, "sentence"),
    (dict(beam_sizes=(0, 2)), ValueError, "beam_sizes"),
    (dict(beam_sizes=(2, 2)), ValueError, "beam_sizes"),
    (dict(alphas=(-1.0,), start_alpha=-1.0), ValueError, "alphas"),
    (dict(start_beam_size=3), ValueError, "start_beam_size"),
    (dict(start_alpha=0.5), ValueError, "start_alpha"),
    (dict(max_len=1000), ValueError, "max_len"),
    (dict(reference=["the", "cat"]), TypeError, "reference"),
    (dict(explorer_id="bad id"), ValueError, "explorer_id"),
])
def test_bad_arguments_are_named(translator, change, error, match):
    arguments = dict(sentence=SENTENCE) | change
    with pytest.raises(error, match=match):
        figures.beam_explorer(translator, **arguments)


def test_needs_a_translator():
    with pytest.raises(TypeError, match="Translator"):
        figures.beam_explorer(object(), SENTENCE)
