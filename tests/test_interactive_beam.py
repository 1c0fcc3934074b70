"""The beam-search explorer of Chapter 8 (interactive.beam_explorer_figure)."""

from __future__ import annotations

import pytest
import torch

import transformer_edu as te
from transformer_edu import data, decoding, interactive
from transformer_edu.translator import Translator, UnknownWordsError

SENTENCE = "고양이가 생선을 먹었다"


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
    return data.pad_batch([translator.src_vocab.encode(sentence)], data.Vocab.pad_id)


def _slider_args(fig, alpha: float) -> dict:
    (slider,) = fig.layout.sliders
    (step,) = [s for s in slider.steps if s.label == f"{alpha:g}"]
    return step.args[0]


def test_one_trace_per_beam_size_and_one_slider_step_per_alpha(translator):
    fig = interactive.beam_explorer_figure(translator, SENTENCE, beam_sizes=(1, 2, 4, 8), alphas=(0.0, 0.6, 1.0),
                                           start_beam_size=4, start_alpha=0.6)
    assert [trace.name for trace in fig.data] == ["K = 1", "K = 2", "K = 4", "K = 8"]
    assert [trace.visible for trace in fig.data] == [False, False, True, False]
    (menu,) = fig.layout.updatemenus
    assert [b.args[0]["visible"] for b in menu.buttons] == [[k == j for j in range(4)] for k in range(4)]
    assert menu.active == 2
    (slider,) = fig.layout.sliders
    assert [s.label for s in slider.steps] == ["0", "0.6", "1"] and slider.active == 1
    for trace in fig.data:  # every bar sits left of 0: scores are log-probabilities
        assert all(x <= 0 for x in trace.x)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_bars_are_the_nbest_lists_of_the_package(translator, alpha):
    beam_sizes = (1, 2, 4)
    fig = interactive.beam_explorer_figure(translator, SENTENCE, beam_sizes=beam_sizes, start_beam_size=2)
    args = _slider_args(fig, alpha)
    src = _src(translator, SENTENCE)
    max_len = min(2 * src.shape[1] + 10, translator.model.config.max_len)
    for index, beam_size in enumerate(beam_sizes):
        nbest = decoding.beam_search_nbest(translator.model, src, max_len=max_len, bos_id=data.Vocab.bos_id,
                                           eos_id=data.Vocab.eos_id, beam_size=beam_size, length_penalty=alpha)[0]
        assert args["x"][index] == pytest.approx([h.score for h in nbest], abs=1e-3)
        texts = [translator.tgt_vocab.decode(list(h.tokens)) or "(nothing: EOS first)" for h in nbest]
        labels = args["y"][index]
        assert [label.split(". ", 1)[1].removesuffix(" …") for label in labels] == texts
        assert args["marker.color"][index] == ["#08306b"] + ["#6baed6"] * (len(labels) - 1)  # the winner is dark
        best, _ = decoding.beam_search(translator.model, src, max_len=max_len, bos_id=data.Vocab.bos_id,
                                       eos_id=data.Vocab.eos_id, beam_size=beam_size, length_penalty=alpha)
        assert translator.tgt_vocab.decode(best[0]) == translator.tgt_vocab.decode(list(nbest[0].tokens))


def test_beam_size_one_is_greedy(translator):
    fig = interactive.beam_explorer_figure(translator, SENTENCE, beam_sizes=(1,), start_beam_size=1)
    greedy = translator.translate(SENTENCE, beam_size=1)
    label = fig.data[0].y[0]
    assert label.removeprefix("1. ").removesuffix(" …") == (greedy or "(nothing: EOS first)")


def test_initial_traces_match_the_start_alpha(translator):
    fig = interactive.beam_explorer_figure(translator, SENTENCE, alphas=(0.0, 1.0), start_alpha=1.0)
    args = _slider_args(fig, 1.0)
    for index, trace in enumerate(fig.data):
        assert list(trace.x) == args["x"][index] and list(trace.y) == args["y"][index]


def test_reference_is_marked(translator):
    output = translator.translate(SENTENCE, beam_size=4)
    fig = interactive.beam_explorer_figure(translator, SENTENCE, reference=output, beam_sizes=(4,),
                                           start_beam_size=4)
    assert fig.data[0].y[0].endswith(" ✓")
    assert not any(label.endswith(" ✓") for label in fig.data[0].y[1:])


def test_html_is_deterministic(translator):
    first = interactive.figure_html(interactive.beam_explorer_figure(translator, SENTENCE), "beam-explorer")
    second = interactive.figure_html(interactive.beam_explorer_figure(translator, SENTENCE), "beam-explorer")
    assert first == second


def test_the_trained_translator_gets_the_running_example_right():
    from transformer_edu.pretrained import pretrained_translator

    trained = pretrained_translator("cpu")
    fig = interactive.beam_explorer_figure(trained, SENTENCE, reference="the cat ate the fish")
    for trace in fig.data:
        assert trace.y[0] == "1. the cat ate the fish ✓"


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
])
def test_bad_arguments_are_named(translator, change, error, match):
    arguments = dict(sentence=SENTENCE) | change
    with pytest.raises(error, match=match):
        interactive.beam_explorer_figure(translator, **arguments)


def test_needs_a_translator():
    with pytest.raises(TypeError, match="Translator"):
        interactive.beam_explorer_figure(object(), SENTENCE)
