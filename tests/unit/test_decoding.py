"""Greedy decoding, beam search and sampling (transformer_edu.decoding, Chapter 8)."""

import collections
import itertools
import math
import sys

import pytest
import torch
from torch import nn

import transformer_edu as te
from transformer_edu import Transformer, TransformerConfig, _validate
from transformer_edu.decoding import (
    beam_search,
    beam_search_nbest,
    beam_search_trace,
    gnmt_length_penalty,
    greedy_decode,
    sample,
)

PAD, BOS, EOS, UNK, V = 0, 1, 2, 3, 16
MAX_LEN = 20


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def model(tiny_model):
    """An untrained model nudged to end some outputs early and run others to max_len."""
    model = tiny_model(seed=2, src_vocab_size=V, tgt_vocab_size=V)
    with torch.no_grad():
        model.output.bias[EOS] += 1.0
        model.output.bias[PAD] -= 5.0  # keep outputs readable: no <pad> or <bos> tokens
        model.output.bias[BOS] -= 5.0
    return model.eval()


@pytest.fixture(scope="module")
def src():
    src = torch.randint(4, V, (6, 9), generator=torch.Generator().manual_seed(1))  # (B, S)
    src[1, 6:] = PAD
    src[3, 4:] = PAD
    return src


IDS = dict(bos_id=BOS, eos_id=EOS)


def sequence_log_prob(model, src_row, tokens):
    """log P(tokens | src) by one teacher-forced forward pass."""
    tokens = torch.tensor(tokens)
    src_row = src_row[src_row != PAD][None]  # (1, S)
    tgt_in = torch.cat([torch.tensor([BOS]), tokens[:-1]])[None]  # (1, L)
    with torch.no_grad():
        log_probs = model(src_row, tgt_in).log_softmax(-1)[0]  # (L, V)
    return float(log_probs.gather(1, tokens[:, None]).sum())


def test_greedy_stops_at_eos_and_pads_after_it(model, src):
    out = greedy_decode(model, src, max_len=MAX_LEN, **IDS)
    assert out.shape[0] == src.shape[0] and out.dtype == torch.long
    ended = [(row == EOS).nonzero().flatten() for row in out]
    assert any(len(e) for e in ended) and not all(len(e) for e in ended)  # both cases are exercised
    for row, e in zip(out, ended):
        if len(e):
            assert (row[e[0] + 1:] == PAD).all()
            assert (row[: e[0]] != PAD).all()
        else:
            assert len(row) == MAX_LEN
    early = [i for i, e in enumerate(ended) if len(e)]
    short = greedy_decode(model, src[early], max_len=MAX_LEN, **IDS)  # every row ends early: stop early
    assert short.shape[1] == max(int(ended[i][0]) for i in early) + 1 < MAX_LEN


def test_greedy_is_the_argmax_of_a_full_forward_pass(model, src):
    out = greedy_decode(model, src[:1], max_len=8, **IDS)[0]
    prefix = torch.tensor([[BOS]])
    for token in out.tolist():
        with torch.no_grad():
            logits = model(src[:1], prefix)[0, -1]
        assert int(logits.argmax()) == token
        if token == EOS:
            break
        prefix = torch.cat([prefix, torch.tensor([[token]])], dim=1)


@pytest.mark.parametrize("decode", ["greedy", "beam", "sample"])
def test_cache_gives_identical_results(model, src, decode):
    def run(use_cache):
        if decode == "greedy":
            return greedy_decode(model, src, max_len=MAX_LEN, use_cache=use_cache, **IDS), None
        if decode == "sample":
            generator = torch.Generator().manual_seed(0)
            return sample(model, src, max_len=MAX_LEN, generator=generator, use_cache=use_cache, **IDS), None
        return beam_search(model, src, max_len=MAX_LEN, beam_size=3, use_cache=use_cache, **IDS)

    (with_cache, scores), (without, scores_without) = run(True), run(False)
    assert torch.equal(with_cache, without)
    if scores is not None:
        torch.testing.assert_close(scores, scores_without, atol=1e-5, rtol=1e-5)


CONFIGS = {
    "post-LN": {},
    "pre-LN, tied output": dict(norm_first=True, tie_output=True),
    "shared embeddings": dict(share_embeddings=True),
}


@pytest.mark.parametrize("options", CONFIGS.values(), ids=list(CONFIGS))
def test_the_loops_decode_alike_with_and_without_the_cache_in_every_configuration(options, tiny_model, src):
    model = tiny_model(src_vocab_size=V, tgt_vocab_size=V, **options)
    with torch.no_grad():
        model.output.bias[EOS] += 1.0  # some outputs end early, others run to max_len
    steps = dict(max_len=12, **IDS)
    results = {}
    for use_cache in (True, False):
        results[use_cache] = (
            greedy_decode(model, src, use_cache=use_cache, **steps),
            [[h.tokens for h in hs] for hs in beam_search_nbest(model, src, beam_size=3, use_cache=use_cache, **steps)],
            sample(model, src, generator=torch.Generator().manual_seed(0), use_cache=use_cache, **steps),
        )
    (greedy, nbest, drawn), (greedy_plain, nbest_plain, drawn_plain) = results[True], results[False]
    assert torch.equal(greedy, greedy_plain) and nbest == nbest_plain and torch.equal(drawn, drawn_plain)


def test_double_precision_decodes(tiny_model, src):
    model = tiny_model(src_vocab_size=V, tgt_vocab_size=V).double()
    assert torch.equal(greedy_decode(model, src, max_len=12, **IDS),
                       greedy_decode(model, src, max_len=12, use_cache=False, **IDS))


# The loops run the model's own modules (Chapter 6's decoder, Chapter 8's cache): a hook or
# record_attention sees every step, and a replaced module changes what they decode.


def test_forward_hooks_on_a_decoder_layer_and_its_attentions_fire_at_every_decoding_step(model, src):
    seen = {"layer": [], "self_attn": [], "cross_attn": []}
    layer = model.decoder.layers[1]
    modules = {"layer": layer, "self_attn": layer.self_attn, "cross_attn": layer.cross_attn}
    handles = [m.register_forward_hook(lambda module, args, out, name=name: seen[name].append(
        (out if name == "layer" else out[0]).shape)) for name, m in modules.items()]
    try:
        greedy_decode(model, src, max_len=6, min_len=6, **IDS)  # exactly 6 steps
    finally:
        for handle in handles:
            handle.remove()
    assert seen == {name: [torch.Size([6, 1, 32])] * 6 for name in seen}  # one new position per step


def test_a_forward_hook_on_a_decoder_layer_fires_at_every_beam_search_step(model, src):
    rows = []
    handle = model.decoder.layers[0].register_forward_hook(lambda module, args, out: rows.append(out.shape[0]))
    try:
        beam_search_nbest(model, src[:1], beam_size=3, max_len=5, min_len=5, **IDS)  # exactly 5 steps
    finally:
        handle.remove()
    assert rows == [3] * 5  # the 3 beams of the one source, one new position each step


def test_record_attention_records_while_decoding(model, src):
    with te.record_attention(model) as maps:
        tokens = greedy_decode(model, src, max_len=5, min_len=5, **IDS)
    # The last step's maps: its one new position over the 5 cached ones (BOS + 4 tokens) …
    assert maps["decoder.layers.0.self_attn"].shape == (6, 4, 1, 5)
    assert maps["decoder.layers.1.cross_attn"].shape == (6, 4, 1, 9)
    # … which sum to 1 and give padded source positions no weight
    torch.testing.assert_close(maps["decoder.layers.1.cross_attn"].sum(-1), torch.ones(6, 4, 1))
    assert maps["decoder.layers.1.cross_attn"][3, :, :, 4:].abs().max() == 0
    # Recording changes nothing that is decoded
    assert torch.equal(tokens, greedy_decode(model, src, max_len=5, min_len=5, **IDS))


def test_a_replaced_module_changes_what_the_loops_decode(tiny_model, src):
    class GeluFeedForward(te.PositionwiseFeedForward):
        def forward(self, x):
            return self.w_2(self.dropout(torch.nn.functional.gelu(self.w_1(x))))

    model = tiny_model(src_vocab_size=V, tgt_vocab_size=V)
    steps = dict(max_len=12, min_len=12, **IDS)
    relu = greedy_decode(model, src, **steps)
    gelu = GeluFeedForward(32, 64)
    gelu.load_state_dict(model.decoder.layers[0].feed_forward.state_dict())
    model.decoder.layers[0].feed_forward = gelu
    changed = greedy_decode(model, src, **steps)
    assert not torch.equal(changed, relu)
    assert torch.equal(changed, greedy_decode(model, src, use_cache=False, **steps))  # both ways alike


def test_nbest_lists_agree_with_and_without_cache(model, src):
    a = beam_search_nbest(model, src, max_len=MAX_LEN, beam_size=4, **IDS)
    b = beam_search_nbest(model, src, max_len=MAX_LEN, beam_size=4, use_cache=False, **IDS)
    assert [[h.tokens for h in hs] for hs in a] == [[h.tokens for h in hs] for hs in b]


def test_beam_size_one_equals_greedy(model, src):
    greedy = greedy_decode(model, src, max_len=MAX_LEN, **IDS)
    beam, _ = beam_search(model, src, max_len=MAX_LEN, beam_size=1, length_penalty=0.0, **IDS)
    assert torch.equal(beam, greedy[:, : beam.shape[1]]) and (greedy[:, beam.shape[1]:] == PAD).all()


@pytest.mark.parametrize("alpha", [0.6, 0.0])
def test_beam_score_is_the_models_log_prob_over_the_length_penalty(model, src, alpha):
    nbest = beam_search_nbest(model, src, max_len=MAX_LEN, beam_size=4, length_penalty=alpha, **IDS)
    for row, hypotheses in enumerate(nbest):
        assert 1 <= len(hypotheses) <= 4
        assert [h.score for h in hypotheses] == sorted((h.score for h in hypotheses), reverse=True)
        for h in hypotheses:
            log_prob = sequence_log_prob(model, src[row], h.tokens)
            assert h.log_prob == pytest.approx(log_prob, abs=1e-4)
            assert h.score == pytest.approx(log_prob / ((5 + len(h.tokens)) / 6) ** alpha, abs=1e-4)
            assert h.finished == (h.tokens[-1] == EOS) and EOS not in h.tokens[:-1]
            if alpha == 0.0:
                assert h.score == h.log_prob  # no penalty: the raw sum
    tokens, scores = beam_search(model, src, max_len=MAX_LEN, beam_size=4, length_penalty=alpha, **IDS)
    assert scores.tolist() == pytest.approx([hs[0].score for hs in nbest])
    for row, hs in zip(tokens.tolist(), nbest):
        assert row[: len(hs[0].tokens)] == list(hs[0].tokens) and set(row[len(hs[0].tokens):]) <= {PAD}


def test_beam_search_beats_greedy_on_its_own_objective(model, src):
    greedy = greedy_decode(model, src, max_len=MAX_LEN, **IDS)
    _, scores = beam_search(model, src, max_len=MAX_LEN, beam_size=4, length_penalty=0.0, **IDS)
    for row, out in enumerate(greedy.tolist()):
        out = out[: out.index(EOS) + 1] if EOS in out else out
        assert scores[row] >= sequence_log_prob(model, src[row], out) - 1e-4


class ScriptedDecoder(nn.Module):
    """Stands in for the decoder stack: its "hidden state" is the log-distribution of the next token.

    Embedded targets carry their token ids (see ``ScriptedModel.embed_target``). With a cache
    the prefix travels in the cache's self-attention buffers, so ``cache.reorder`` moves it
    with the beams, as it moves real keys and values.
    """

    def __init__(self, next_probs):
        super().__init__()
        self.layers = nn.ModuleList([nn.Identity()])  # one layer, for the cache
        self.next_probs = next_probs

    def forward(self, x, memory, src_mask=None, tgt_mask=None, cache=None):
        ids = x[..., 0]  # (N, T) the token ids, as floats
        if cache is not None:
            keys, _ = cache.layers[0].self_attn.update(ids[:, None, :, None], ids[:, None, :, None])  # (N, 1, t, 1)
            ids = keys[:, 0, :, 0]  # (N, t) the whole prefix
        probs = torch.stack([self.next_probs(row.long().tolist()) for row in ids])  # (N, V), the last position's
        return probs.log()[:, None].expand(-1, x.shape[1], -1)  # (N, T, V); decoding reads only the last


class ScriptedModel(Transformer):
    """A test double whose next-token distribution follows a script instead of a network.

    From BOS the strong path 5 6 7 8 9 EOS has probability ≈ 0.9 · 0.95⁵; the weak
    first tokens 10, 11, 12 (≈ 0.03 each) are followed by EOS with probability ½.
    The decoding loops run its embedding, decoder and output layer, as they run a real model's.
    """

    def __init__(self):
        super().__init__(TransformerConfig(V, V, d_model=8, n_heads=1, d_ff=8, n_layers=1, max_len=64))
        self.decoder = ScriptedDecoder(self.next_probs)
        self.output = nn.Identity()

    def embed_target(self, tgt, offset=0):
        return tgt[..., None].float()  # (N, T, 1): the ids themselves

    @staticmethod
    def next_probs(prefix):
        p = torch.full((V,), 1e-3)
        tokens = prefix[1:]  # BOS dropped
        if not tokens:
            p[5], p[10], p[11], p[12] = 0.9, 0.03, 0.03, 0.03
        elif tokens[0] == 5:
            p[EOS if len(tokens) == 5 else 5 + len(tokens)] = 0.95
        else:
            p[EOS], p[13] = 0.5, 0.3
        return p / p.sum()


@pytest.mark.parametrize("use_cache", [True, False])
def test_weak_beams_finishing_first_do_not_end_the_search(use_cache):
    """The EOS of the weak beams ranks among the K best early on; the strong beam must still finish."""
    model = ScriptedModel().eval()
    src = torch.tensor([[4, 5, 6]])
    path = [BOS, 5, 6, 7, 8, 9, EOS]
    strong = sum(math.log(model.next_probs(path[:i])[path[i]]) for i in range(1, len(path)))  # ≈ −0.19
    for alpha in (0.0, 0.6):
        tokens, scores = beam_search(model, src, max_len=10, beam_size=4, length_penalty=alpha,
                                     use_cache=use_cache, **IDS)
        assert tokens[0].tolist() == [5, 6, 7, 8, 9, EOS]
        assert float(scores[0]) * gnmt_length_penalty(6, alpha) == pytest.approx(strong, abs=1e-5)
    nbest = beam_search_nbest(model, src, max_len=10, beam_size=4, use_cache=use_cache, **IDS)[0]
    assert sorted(h.tokens[0] for h in nbest[1:]) == [10, 11, 12]  # the weak beams did finish, and rank below
    assert torch.equal(greedy_decode(model, src, max_len=10, **IDS), tokens)


def test_batched_beam_search_equals_one_source_at_a_time(model, src):
    tokens, scores = beam_search(model, src, max_len=MAX_LEN, beam_size=3, **IDS)
    for row in range(src.shape[0]):
        alone = src[row][src[row] != PAD][None]  # (1, S_row), no padding
        t, s = beam_search(model, alone, max_len=MAX_LEN, beam_size=3, **IDS)
        assert tokens[row, : t.shape[1]].tolist() == t[0].tolist()
        assert (tokens[row, t.shape[1]:] == PAD).all()
        assert float(s) == pytest.approx(float(scores[row]), abs=1e-5)


def test_trace_records_every_step(model, src):
    hypotheses, steps = beam_search_trace(model, src[:1], max_len=MAX_LEN, beam_size=3, **IDS)
    assert [s.step for s in steps] == list(range(len(steps)))
    assert len(steps[0].candidates) <= 6 and all(len(c.tokens) == 1 for c in steps[0].candidates)
    for previous, step in zip(steps, steps[1:]):
        kept = {c.tokens for c in previous.candidates if c.status == "kept"}
        assert len(kept) == 3
        assert all(c.tokens[:-1] in kept for c in step.candidates)  # only live beams are extended
        log_probs = [c.log_prob for c in step.candidates]
        assert log_probs == sorted(log_probs, reverse=True)
    finished = {c.tokens for s in steps for c in s.candidates if c.status == "finished"}
    assert {h.tokens for h in hypotheses if h.finished} <= finished
    assert hypotheses == beam_search_nbest(model, src[:1], max_len=MAX_LEN, beam_size=3, **IDS)[0]


def test_min_len_forbids_an_early_eos(model, src):
    out = greedy_decode(model, src, max_len=12, min_len=12, **IDS)
    assert out.shape == (src.shape[0], 12) and not (out == EOS).any()
    tokens, _ = beam_search(model, src, max_len=12, min_len=5, **IDS)
    assert not (tokens[:, :5] == EOS).any()


def test_decoding_restores_training_mode_and_ignores_dropout(tiny_model, src):
    """In training mode with P_drop = 0.5 every step's logits would move; decoding switches dropout off."""
    model = tiny_model(seed=2, src_vocab_size=V, tgt_vocab_size=V, dropout=0.5)
    seen = []
    handle = model.output.register_forward_hook(lambda module, args, out: seen.append(out.clone()))
    try:
        expected = greedy_decode(model, src, max_len=MAX_LEN, **IDS)  # the model is in eval mode
        clean, seen[:] = list(seen), []
        model.train()
        assert torch.equal(greedy_decode(model, src, max_len=MAX_LEN, **IDS), expected)
        assert model.training  # restored
        assert len(seen) == len(clean) and all(torch.equal(a, b) for a, b in zip(seen, clean))
        with torch.no_grad():  # the same model, left in training mode, decodes other logits
            assert not torch.allclose(model(src, torch.full((src.shape[0], 1), BOS)),
                                      model.eval()(src, torch.full((src.shape[0], 1), BOS)))
    finally:
        handle.remove()
        model.eval()


def test_sampling(model, src):
    draws = [sample(model, src, max_len=MAX_LEN, generator=torch.Generator().manual_seed(seed), **IDS)
             for seed in (0, 0, 1)]
    assert torch.equal(draws[0], draws[1]) and not torch.equal(draws[0], draws[2])
    top1 = sample(model, src, max_len=MAX_LEN, top_k=1, **IDS)
    assert torch.equal(top1, greedy_decode(model, src, max_len=MAX_LEN, **IDS))
    with pytest.raises(ValueError, match="temperature"):
        sample(model, src, max_len=5, temperature=0.0, **IDS)


def test_length_penalty_formula():
    assert gnmt_length_penalty(1, 0.6) == 1.0
    assert gnmt_length_penalty(7, 0.6) == pytest.approx(2.0**0.6)
    assert gnmt_length_penalty(30, 0.0) == 1.0


@pytest.mark.parametrize(
    "change, error, match",
    [
        (dict(beam_size=0), ValueError, "beam_size must be at least 1"),
        (dict(beam_size=2.0), TypeError, "beam_size must be an int"),
        (dict(max_len=0), ValueError, "max_len must be at least 1"),
        (dict(max_len=65), ValueError, "exceeds the model's max_len"),
        (dict(bos_id=V), ValueError, "bos_id = 16 is outside the target vocabulary"),
        (dict(eos_id=-1), ValueError, "eos_id = -1 is outside"),
        (dict(length_penalty=-0.5), ValueError, "length_penalty"),
        (dict(min_len=30), ValueError, "min_len"),
        (dict(src=torch.zeros(0, 5, dtype=torch.long)), ValueError, "no sentences"),
        (dict(src=torch.tensor([4, 5, 6])), ValueError, "must be 2-D"),
        (dict(src=torch.ones(2, 3, 4, dtype=torch.long)), ValueError, "must be 2-D"),
        (dict(src=torch.tensor([[4, 5, V]])), ValueError, "token id 16, outside the vocabulary"),
        (dict(src=torch.tensor([[4.0, 5.0]])), TypeError, "integer token ids"),
        (dict(src_mask=torch.ones(1, 9, dtype=torch.bool)), ValueError, "src_mask must be 4-D"),
        (dict(src_mask=torch.ones(2, 1, 1, 8, dtype=torch.bool)), ValueError, "does not broadcast"),
        (dict(model=nn.Linear(2, 2)), TypeError, "model must be a Transformer"),
        (dict(use_cache=1), TypeError, "use_cache must be a bool"),
    ],
)
def test_bad_arguments_are_named(model, src, change, error, match):
    arguments = dict(model=model, src=src[:2], max_len=10, beam_size=2, **IDS) | change
    with pytest.raises(error, match=match):
        beam_search(**arguments)
    if "beam_size" not in change and "length_penalty" not in change:
        arguments.pop("beam_size")
        with pytest.raises(error, match=match):
            greedy_decode(**arguments)


def test_an_explicit_src_mask_is_used(model, src):
    default = beam_search(model, src, max_len=MAX_LEN, beam_size=2, **IDS)
    explicit = beam_search(model, src, max_len=MAX_LEN, beam_size=2, src_mask=(src != PAD)[:, None, None], **IDS)
    assert torch.equal(default[0], explicit[0])
    see_padding = torch.ones(1, 1, 1, src.shape[1], dtype=torch.bool)  # (1, 1, 1, S): broadcast over the batch
    greedy = greedy_decode(model, src, max_len=MAX_LEN, src_mask=see_padding, **IDS)
    assert not torch.equal(greedy, greedy_decode(model, src, max_len=MAX_LEN, **IDS))  # padding now matters


def test_trace_needs_one_source(model, src):
    with pytest.raises(ValueError, match=r"shape \(1, S\)"):
        beam_search_trace(model, src, max_len=5, **IDS)


def _favour_specials(model, ids):
    """Make the output layer prefer the given ids by a wide margin (an untrained model)."""
    with torch.no_grad():
        model.output.bias[ids] = 50.0


@pytest.mark.parametrize("decoder", ["greedy", "beam", "sample"])
def test_special_tokens_are_never_generated(decoder):
    torch.manual_seed(0)
    config = te.TransformerConfig(12, 10, d_model=16, n_heads=2, d_ff=32, n_layers=1, dropout=0.0, max_len=20)
    model = te.Transformer(config).eval()
    pad, bos, eos, unk = 0, 1, 2, 3
    _favour_specials(model, [pad, bos, unk])
    src = torch.randint(4, 12, (3, 5))
    ids = dict(max_len=8, bos_id=bos, eos_id=eos, unk_id=unk)
    if decoder == "greedy":
        out = te.greedy_decode(model, src, **ids)
    elif decoder == "beam":
        out, _ = te.beam_search(model, src, beam_size=3, **ids)
    else:
        out = te.sample(model, src, temperature=1.5, generator=torch.Generator().manual_seed(0), **ids)
    generated = out[out != pad]  # pad only fills the space after EOS
    assert not torch.isin(generated, torch.tensor([bos, unk])).any()
    for row in out.tolist():  # and no pad before a row's EOS
        body = row[: row.index(eos)] if eos in row else row
        assert pad not in body


def test_eos_must_differ_from_the_ids_that_are_never_generated():
    config = te.TransformerConfig(12, 10, d_model=16, n_heads=2, d_ff=32, n_layers=1, max_len=20)
    model = te.Transformer(config)
    with pytest.raises(ValueError, match="eos_id = 3"):
        te.greedy_decode(model, torch.randint(4, 12, (1, 5)), max_len=4, bos_id=1, eos_id=3, unk_id=3)


def _reads_and_ops(run):
    """Times Python read a value out of a tensor while ``run`` ran, and the top-level operator calls."""
    from torch.profiler import profile

    with profile() as prof:
        run()
    events = prof.events()
    return sum(e.name == "aten::_local_scalar_dense" for e in events), events


def test_greedy_reads_the_device_only_every_few_steps(model, src):
    from transformer_edu import decoding

    for use_cache in (True, False):
        reads = {steps: _reads_and_ops(lambda: greedy_decode(model, src, max_len=steps, min_len=steps,
                                                             use_cache=use_cache, **IDS))[0]
                 for steps in (24, 48)}
        assert reads[48] - reads[24] == 24 // decoding._CHECK_EVERY  # "all done?" every few steps
        assert reads[24] <= 4 + 24 // decoding._CHECK_EVERY + 2  # + the source's ids, checked at entry


def test_beam_search_reads_the_device_only_every_few_steps(model, src, monkeypatch):
    from transformer_edu import decoding

    tolist_calls = []
    tolist = torch.Tensor.tolist
    monkeypatch.setattr(torch.Tensor, "tolist", lambda t: tolist_calls.append(t.shape) or tolist(t))
    reads, tables = {}, {}
    for steps in (24, 48):  # EOS forbidden until the last step: every source searches to the end
        tolist_calls.clear()
        reads[steps] = _reads_and_ops(lambda: beam_search(model, src, max_len=steps, min_len=steps, beam_size=3,
                                                          **IDS))[0]
        tables[steps] = len(tolist_calls)
    assert reads[48] == reads[24]  # no .item() / bool() per step
    assert tables[48] - tables[24] == 24 // decoding._CHECK_EVERY  # one flag per source every few steps
    assert tables[24] <= 24 // decoding._CHECK_EVERY + 5  # + the finished hypotheses, read once at the end


def _check_calls(run) -> collections.Counter:
    """The calls of the checks in transformer_edu._validate while ``run()`` runs, by name.

    Every public function and ``forward`` passes through its door (``_validate.door``'s
    ``checked_call``), which runs the checks for a call from outside the package only; the
    doors themselves are not counted, the checks they run are.
    """
    calls = collections.Counter()
    path = _validate.__file__

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == path and frame.f_code.co_name != "checked_call":
            calls[frame.f_code.co_name] += 1

    sys.setprofile(profiler)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("use_cache", [True, False])
def test_a_decoding_step_runs_no_check(model, src, use_cache):
    """The decoding function checks its arguments at its door, once; its steps call model.decode
    and every layer without checking again: 30 steps run exactly the checks of 10."""
    counts = {steps: _check_calls(lambda: greedy_decode(model, src, max_len=steps, min_len=steps,
                                                        use_cache=use_cache, **IDS))
              for steps in (10, 30)}
    assert counts[30] == counts[10]  # nothing per step, so nothing per layer
    assert counts[10]["decoding_inputs"] == 1 and counts[10]["token_ids"] == 1  # the source's ids, once
    beam = {steps: _check_calls(lambda: beam_search(model, src, max_len=steps, min_len=steps, beam_size=3,
                                                    use_cache=use_cache, **IDS))
            for steps in (10, 30)}
    assert beam[30] == beam[10] and beam[10]["decoding_inputs"] == 1


def test_a_decode_call_from_outside_checks_once_whatever_the_number_of_layers(src, tiny_model):
    """A reader's own loop calling model.decode step by step: each call is checked at the door, once,
    and none of the layers inside checks again."""
    counts = {}
    for n_layers in (1, 3):
        model = tiny_model(src_vocab_size=V, tgt_vocab_size=V, n_layers=n_layers)
        with torch.no_grad():
            memory, cache = model.encode(src), model.new_cache(4)
            step = torch.full((src.shape[0], 1), BOS)
            counts[n_layers] = _check_calls(lambda: model.decode(step, memory, te.padding_mask(src), cache=cache))
    assert counts[1] == counts[3] and counts[1]["model_decode_inputs"] == 1
    assert counts[1]["decoder_layer_inputs"] == counts[1]["attention_inputs"] == counts[1]["features"] == 0


def test_a_cached_step_concatenates_nothing_and_builds_no_mask(model, src):
    counts = {}
    for steps in (10, 30):
        _, events = _reads_and_ops(lambda: greedy_decode(model, src, max_len=steps, min_len=steps, **IDS))
        names = [e.name for e in events]
        counts[steps] = {name: names.count(name) for name in ("aten::cat", "aten::min", "aten::tril", "aten::any")}
    from transformer_edu.decoding import _CHECK_EVERY

    checks = 30 // _CHECK_EVERY - 10 // _CHECK_EVERY  # "has every sentence ended?", every few steps
    assert counts[30]["aten::any"] - counts[10]["aten::any"] == checks  # and no other test of the ids
    assert {k: v for k, v in counts[10].items() if k != "aten::any"} == {  # no cache grown by cat,
        k: v for k, v in counts[30].items() if k != "aten::any"}  # ids read once, no mask per step
    assert counts[30]["aten::tril"] == 0


def test_results_are_ordinary_tensors_and_the_model_is_left_as_it_was(model, src):
    out = greedy_decode(model, src, max_len=5, **IDS)
    tokens, scores = beam_search(model, src, max_len=5, beam_size=2, **IDS)
    assert not out.is_inference() and not tokens.is_inference() and not scores.is_inference()
    embedded = model.tgt_embed(out)  # usable in autograd, e.g. to train on the outputs
    assert embedded.requires_grad


# Beam search's stopping rule: a source's search ends after the first step at which its best
# finished hypothesis scores at least what any live beam could still reach,
# max live log P / lp(max_len), and not before. beam_search_trace records every step.


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


def _model_whose_hypotheses_end(seed):
    """A seeded one-layer model whose hypotheses end now and then (EOS's output bias raised)."""
    torch.manual_seed(seed)
    model = Transformer(TransformerConfig(10, 9, d_model=16, n_heads=2, d_ff=32, n_layers=1, dropout=0.0,
                                          max_len=32)).eval()
    with torch.no_grad():
        model.output.bias[EOS] += 1.5
    return model


def test_beam_search_stops_exactly_when_no_live_beam_can_win():
    max_len, beam_size = 12, 3
    stopped_early = stopped_after_k_finished = 0
    for seed in range(60):
        model = _model_whose_hypotheses_end(seed)
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


# Two oracles for the stopping rule: a search that never stops early, and an exhaustive search.


@torch.no_grad()
def beam_search_without_early_stopping(model, src, beam_size, alpha, max_len):
    """Beam search by the package's rule, written plainly, that runs all max_len steps.

    Of the K · V expansions the 2K best are considered; EOS among the K best ends a hypothesis,
    the K best others live on; at the end the live beams compete, unfinished. Returns the best
    (tokens, score) of everything that finished.
    """
    vocab = model.config.tgt_vocab_size
    memory, mask = model.encode(src), te.padding_mask(src)
    beams, finished = [((), 0.0)], []
    for _ in range(max_len):
        prefixes = torch.tensor([[BOS, *tokens] for tokens, _ in beams])  # (k, t)
        k = len(beams)
        log_p = model.decode(prefixes, memory.expand(k, -1, -1), mask.expand(k, -1, -1, -1))[:, -1]
        log_p = log_p.log_softmax(-1)  # (k, V)
        log_p[:, [PAD, BOS, UNK]] = -math.inf  # never generated
        totals = torch.tensor([s for _, s in beams])[:, None] + log_p  # (k, V)
        top = totals.flatten().topk(min(2 * beam_size, totals.numel()))
        next_beams = []
        for rank, (total, index) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            origin, token = divmod(index, vocab)
            tokens = beams[origin][0] + (token,)
            if token == EOS:
                if rank < beam_size and math.isfinite(total):
                    finished.append((tokens, total))
            elif len(next_beams) < beam_size:
                next_beams.append((tokens, total))
        beams = next_beams
    finished += [b for b in beams if math.isfinite(b[1])]
    return max(((t, s / gnmt_length_penalty(len(t), alpha)) for t, s in finished), key=lambda h: h[1])


def test_beam_search_finds_what_a_search_without_early_stopping_finds():
    """The stopping rule only saves steps: stopping once no live beam can win returns the best
    hypothesis that running all max_len steps returns."""
    max_len, beam_size, stopped_early = 12, 3, 0
    for seed in range(20):
        model = _model_whose_hypotheses_end(seed)
        src = torch.randint(4, 10, (1, 5))
        for alpha in (0.0, 0.6, 1.5):
            hypotheses, steps = beam_search_trace(model, src, max_len=max_len, bos_id=BOS, eos_id=EOS, unk_id=UNK,
                                                  beam_size=beam_size, length_penalty=alpha)
            tokens, score = beam_search_without_early_stopping(model, src, beam_size, alpha, max_len)
            assert hypotheses[0].tokens == tokens, (seed, alpha)
            assert hypotheses[0].score == pytest.approx(score, abs=1e-4)
            stopped_early += len(steps) < max_len
    assert stopped_early >= 10  # the rule did stop searches early


@torch.no_grad()
def test_a_beam_wide_enough_to_keep_every_prefix_finds_the_best_output_of_all():
    """With V = 3 words and max_len = 4, a beam of K = 108 drops nothing (at most 27 prefixes live,
    with 4 expansions each: EOS and the three words); it must return the best of every possible
    output, scored one by one by teacher forcing: each ending with EOS after 0 … 3 words, or the
    unfinished ones of 4 words."""
    words, max_len = (4, 5, 6), 4
    for seed in range(6):
        torch.manual_seed(seed)
        model = Transformer(TransformerConfig(7, 7, d_model=16, n_heads=2, d_ff=32, n_layers=1, dropout=0.0,
                                              max_len=8)).eval()
        with torch.no_grad():
            model.output.bias[EOS] += 1.0
        src = torch.randint(4, 7, (1, 4))
        outputs = [(*body, EOS) for n in range(max_len) for body in itertools.product(words, repeat=n)]
        outputs += list(itertools.product(words, repeat=max_len))  # unfinished
        log_probs = {}
        for length in range(1, max_len + 1):
            group = [y for y in outputs if len(y) == length]
            tgt_in = torch.tensor([[BOS, *y[:-1]] for y in group])  # (n, length)
            log_p = model(src.expand(len(group), -1), tgt_in).log_softmax(-1)  # (n, length, V)
            picked = log_p.gather(2, torch.tensor(group)[:, :, None])[:, :, 0].sum(1)  # (n,)
            log_probs.update(zip(group, picked.tolist()))
        for alpha in (0.0, 0.6, 1.5):
            best = max(outputs, key=lambda y: log_probs[y] / gnmt_length_penalty(len(y), alpha))
            tokens, score = beam_search(model, src, max_len=max_len, bos_id=BOS, eos_id=EOS, unk_id=UNK,
                                        beam_size=108, length_penalty=alpha)
            assert tuple(t for t in tokens[0].tolist() if t != PAD) == best, (seed, alpha)
            assert float(score) == pytest.approx(log_probs[best] / gnmt_length_penalty(len(best), alpha), abs=1e-4)
