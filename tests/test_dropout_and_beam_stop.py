"""Dropout fires where the paper puts it, and beam search stops exactly when it may.

Dropout: in training mode every dropout the model has (the attention weights,
on the explicit and on the fused path; the feed-forward hidden layer; each
sublayer's output) changes the output, and in evaluation mode the output is
the same as a model built with no dropout at all. Removing any one of them
makes a test here fail.

Beam search's stopping rule (Chapter 8): a source's search ends after the
first step at which its best finished hypothesis scores at least what any live
beam could still reach, ``max live log P / lp(max_len)``, and not before. The
trace of :func:`~transformer_edu.decoding.beam_search_trace` records every
step, so the rule is checked step by step, on cases where stopping as soon
as K hypotheses have finished would have stopped earlier.
"""

from __future__ import annotations

import copy

import pytest
import torch

from transformer_edu import Transformer, TransformerConfig
from transformer_edu.attention import MultiHeadAttention
from transformer_edu.decoder import DecoderLayer
from transformer_edu.decoding import beam_search_trace, gnmt_length_penalty
from transformer_edu.encoder import EncoderLayer
from transformer_edu.layers import PositionwiseFeedForward

pytestmark = pytest.mark.usefixtures("one_thread")


def _without_dropout(module: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``module`` with every dropout probability set to 0 (same weights)."""
    clean = copy.deepcopy(module)
    for m in clean.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    return clean


def test_feed_forward_dropout_acts_on_the_hidden_layer_in_training_only():
    torch.manual_seed(0)
    ff = PositionwiseFeedForward(16, 64, dropout=0.5)
    x = torch.randn(2, 5, 16)
    clean = _without_dropout(ff).eval()
    ff.train()
    torch.manual_seed(1)
    trained = ff(x)
    torch.manual_seed(1)  # the same mask, drawn by hand on the hidden layer
    hidden = torch.relu(ff.w_1(x))
    expected = ff.w_2(torch.nn.functional.dropout(hidden, 0.5, training=True))
    torch.testing.assert_close(trained, expected)
    assert not torch.allclose(trained, clean(x))
    ff.eval()
    torch.testing.assert_close(ff(x), clean(x))


@pytest.mark.parametrize("need_weights", [True, False], ids=["explicit", "fused"])
def test_attention_dropout_fires_on_both_paths(need_weights):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4, dropout=0.5)
    x = torch.randn(2, 6, 16)
    clean = _without_dropout(mha).eval()
    expected, _ = clean(x, x, x, need_weights=need_weights)
    mha.train()
    outputs = [mha(x, x, x, need_weights=need_weights)[0] for _ in range(3)]
    assert all(not torch.allclose(out, expected) for out in outputs)
    assert not torch.allclose(outputs[0], outputs[1])  # a new mask every call
    # Dropout keeps the expectation: the mean over many masks approaches the clean output
    mean = torch.stack([mha(x, x, x, need_weights=need_weights)[0] for _ in range(400)]).mean(0)
    assert (mean - expected).abs().mean() < 0.25 * (outputs[0] - expected).abs().mean()
    mha.eval()
    torch.testing.assert_close(mha(x, x, x, need_weights=need_weights)[0], expected)


@pytest.mark.parametrize("layer_type", [EncoderLayer, DecoderLayer])
def test_every_sublayer_dropout_fires_in_training_and_none_in_eval(layer_type):
    torch.manual_seed(0)
    layer = layer_type(16, 4, 32, dropout=0.3)
    x = torch.randn(2, 5, 16)
    args = (x,) if layer_type is EncoderLayer else (x, torch.randn(2, 4, 16))
    clean = _without_dropout(layer).eval()
    reference = clean(*args)
    layer.eval()
    torch.testing.assert_close(layer(*args), reference)
    dropouts = [m for m in layer.modules() if isinstance(m, torch.nn.Dropout)]
    assert len(dropouts) >= (4 if layer_type is EncoderLayer else 6)  # attention(s), feed-forward, sublayers
    layer.train()
    for only in dropouts:  # each dropout alone changes the output
        for m in dropouts:
            m.p = 0.3 if m is only else 0.0
        changed = layer(*args)
        assert not torch.allclose(changed, reference), f"{only} did nothing in training mode"


def test_the_model_in_eval_mode_ignores_its_dropout():
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(11, 13, d_model=16, n_heads=4, d_ff=32, n_layers=2, dropout=0.2))
    src, tgt = torch.randint(4, 11, (3, 7)), torch.randint(4, 13, (3, 5))
    clean = _without_dropout(model).eval()
    model.eval()
    torch.testing.assert_close(model(src, tgt), clean(src, tgt))
    model.train()
    assert not torch.allclose(model(src, tgt), clean(src, tgt))


# --------------------------------------------------------------------------
# Beam search stops when no live beam can win, not before, not after
# --------------------------------------------------------------------------

BOS, EOS, PAD, UNK = 1, 2, 0, 3


def _stopping_facts(steps, beam_size, alpha, max_len):
    """Per step: (best finished score so far, the bound a live beam could reach, finished so far)."""
    best, finished, facts = float("-inf"), 0, []
    for step in steps:
        for c in step.candidates:
            if c.status == "finished":
                finished += 1
                best = max(best, c.log_prob / gnmt_length_penalty(len(c.tokens), alpha))
        live = [c.log_prob for c in step.candidates if c.status == "kept"]
        facts.append((best, max(live) / gnmt_length_penalty(max_len, alpha), finished))
    return facts


def test_beam_search_stops_exactly_when_no_live_beam_can_win():
    max_len, beam_size = 12, 3
    stopped_early = stopped_after_k_finished = 0
    for seed in range(60):
        torch.manual_seed(seed)
        model = Transformer(TransformerConfig(10, 9, d_model=16, n_heads=2, d_ff=32, n_layers=1, dropout=0.0,
                                              max_len=32)).eval()
        with torch.no_grad():
            model.generator.bias[EOS] += 1.5  # hypotheses end now and then
        src = torch.randint(4, 10, (1, 5))
        for alpha in (0.0, 0.6, 1.5):
            _, steps = beam_search_trace(model, src, max_len=max_len, bos_id=BOS, eos_id=EOS, unk_id=UNK,
                                         beam_size=beam_size, length_penalty=alpha)
            facts = _stopping_facts(steps, beam_size, alpha, max_len)
            for best, bound, _ in facts[:-1]:  # it went on only while a live beam could still win
                assert best < bound, (seed, alpha)
            best, bound, _ = facts[-1]
            assert best >= bound or len(steps) == max_len, (seed, alpha)  # and stopped once none could
            stopped_early += len(steps) < max_len
            stopped_after_k_finished += any(k >= beam_size for *_, k in facts[:-1])
    # The cases include searches that stop before max_len, and searches that went on after K
    # hypotheses had finished: "stop at K finished" would have stopped those early.
    assert stopped_early >= 10 and stopped_after_k_finished >= 5, (stopped_early, stopped_after_k_finished)
