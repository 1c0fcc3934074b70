"""The decoding loops' lean decoder (transformer_edu.incremental) computes what Transformer.decode computes."""

import pytest
import torch
from torch import nn

import transformer_edu as te
from transformer_edu import incremental
from transformer_edu.decoding import beam_search_nbest, greedy_decode, sample
from transformer_edu.incremental import IncrementalDecoder

PAD, BOS, EOS, V = 0, 1, 2, 20
IDS = dict(bos_id=BOS, eos_id=EOS)
CONFIGS = {
    "post-LN": {},
    "pre-LN, tied output": dict(norm_first=True, tie_output=True),
    "shared embeddings": dict(share_embeddings=True),
}

pytestmark = pytest.mark.usefixtures("one_thread")


def make_model(**options) -> te.Transformer:
    torch.manual_seed(0)
    config = te.TransformerConfig(V, V, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=40, **options)
    model = te.Transformer(config).eval()
    with torch.no_grad():
        model.generator.bias[EOS] += 1.0  # some outputs end early, others run to max_len
    return model


def make_src() -> torch.Tensor:
    src = torch.randint(3, V, (4, 7), generator=torch.Generator().manual_seed(0))  # (B, S)
    src[1, 4:] = PAD
    src[3, 2:] = PAD
    return src


def targets(rows: int = 4, length: int = 9) -> torch.Tensor:
    tgt = torch.randint(3, V, (rows, length), generator=torch.Generator().manual_seed(1))  # (B, T)
    tgt[:, 0] = BOS
    return tgt


@pytest.mark.parametrize("options", CONFIGS.values(), ids=list(CONFIGS))
@pytest.mark.parametrize("use_cache", [True, False], ids=["cache", "recompute"])
def test_each_step_gives_the_logits_of_a_full_forward_pass(options, use_cache):
    model, src, tgt = make_model(**options), make_src(), targets()
    with torch.no_grad():
        src_mask = te.padding_mask(src, PAD)  # (B, 1, 1, S)
        memory = model.encode(src, src_mask)
        full = model.decode(tgt, memory, src_mask)  # (B, T, V), teacher forcing under the causal mask
        decoder = IncrementalDecoder(model, memory, src_mask, tgt.shape[1], use_cache)
        steps = torch.stack([decoder(tgt[:, : t + 1]) for t in range(tgt.shape[1])], dim=1)  # (B, T, V)
    torch.testing.assert_close(steps, full, rtol=1e-5, atol=1e-5)
    assert decoder.length == (tgt.shape[1] if use_cache else 0)


def test_forbidden_ids_get_minus_infinity_through_the_output_bias():
    model, src, tgt = make_model(), make_src(), targets()
    never = torch.zeros(V, dtype=torch.bool)
    never[[PAD, BOS]] = True
    early = never.clone()
    early[EOS] = True
    with torch.no_grad():
        memory = model.encode(src)
        decoder = IncrementalDecoder(model, memory, te.padding_mask(src, PAD), 9, False, (never, early))
        plain = decoder(tgt)
        for mask, ids in ((1, never), (2, early)):
            assert torch.equal(decoder(tgt, mask), plain.masked_fill(ids, float("-inf")))


def test_reorder_and_keep_move_the_cache_with_the_rows():
    model, src, tgt = make_model(), make_src(), targets()
    with torch.no_grad():
        src_mask = te.padding_mask(src, PAD)
        memory = model.encode(src, src_mask)
        # Beams of one source share its memory: row i continues the past of row rows[i]
        one = src[:1].expand(4, -1)  # (4, S)
        decoder = IncrementalDecoder(model, memory[:1].expand(4, -1, -1), src_mask[:1].expand(4, -1, -1, -1), 9)
        for t in range(4):
            decoder(tgt[:, : t + 1])
        rows = torch.tensor([2, 2, 0, 1])
        decoder.reorder(rows)
        moved = torch.cat([tgt[rows, :4], tgt[:, 4:5]], dim=1)  # (4, 5): the pasts moved, a new token each
        expected = model(one, moved)[:, -1]
        torch.testing.assert_close(decoder(moved), expected, rtol=1e-5, atol=1e-5)
        # Sources that are done leave: rows keep their own memory and past
        decoder = IncrementalDecoder(model, memory, src_mask, 9)
        for t in range(4):
            decoder(tgt[:, : t + 1])
        kept = torch.tensor([3, 1])
        decoder.keep(kept)
        expected = model(src[kept], tgt[kept, :5])[:, -1]
        torch.testing.assert_close(decoder(tgt[kept, :5]), expected, rtol=1e-5, atol=1e-5)


def outputs(model, src):
    """Greedy (with and without cache), beam search and sampling, as the loops return them."""
    steps = dict(max_len=12, **IDS)
    nbest = beam_search_nbest(model, src, beam_size=3, **steps)
    return {
        "greedy": greedy_decode(model, src, **steps),
        "greedy, recompute": greedy_decode(model, src, use_cache=False, **steps),
        "greedy, min_len": greedy_decode(model, src, min_len=5, **steps),
        "beam tokens": [[h.tokens for h in hypotheses] for hypotheses in nbest],
        "beam flags": [[h.finished for h in hypotheses] for hypotheses in nbest],
        "beam scores": torch.tensor([h.score for hypotheses in nbest for h in hypotheses]),
        "sample": sample(model, src, generator=torch.Generator().manual_seed(0), **steps),
    }


@pytest.mark.parametrize("options", CONFIGS.values(), ids=list(CONFIGS))
def test_the_loops_give_the_same_outputs_through_the_modules(options):
    model, src = make_model(**options), make_src()
    assert incremental.supports(model)
    lean = outputs(model, src)
    calls = []
    handle = model.generator.register_forward_hook(lambda *args: calls.append(1))  # the loops call the modules
    try:
        assert not incremental.supports(model)
        modules = outputs(model, src)
    finally:
        handle.remove()
    assert calls  # the hook saw the output layer run
    for name, value in lean.items():
        if name == "beam scores":
            torch.testing.assert_close(value, modules[name], rtol=1e-6, atol=1e-6)
        elif isinstance(value, torch.Tensor):
            assert torch.equal(value, modules[name]), name
        else:
            assert value == modules[name], name


def test_double_precision_decodes_alike_on_both_paths():
    src = make_src()
    model = make_model().double()
    hook = model.generator.register_forward_hook(lambda *args: None)  # sends the loops through the modules
    modules = greedy_decode(model, src, max_len=12, **IDS)
    hook.remove()
    assert torch.equal(greedy_decode(model, src, max_len=12, **IDS), modules)


# bfloat16 keeps 8 significant bits, a relative step of 2⁻⁷ ≈ 0.8 %; the logits here are of order 1
# and the scores of order 10, and the two paths need not round alike.
BF16 = dict(rtol=1.6e-2, atol=5e-2)


def test_bf16_autocast_decodes_alike_on_both_paths():
    model, src, tgt = make_model(), make_src(), targets()
    with torch.no_grad():
        src_mask = te.padding_mask(src, PAD)  # (B, 1, 1, S)
        reference = model.decode(tgt, model.encode(src, src_mask), src_mask)  # float32, (B, T, V)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            memory = model.encode(src, src_mask)
            full = model.decode(tgt, memory, src_mask)  # the modules
            steps = {}
            for use_cache in (True, False):  # the lean path
                decoder = IncrementalDecoder(model, memory, src_mask, tgt.shape[1], use_cache)
                steps[use_cache] = torch.stack([decoder(tgt[:, : t + 1]) for t in range(tgt.shape[1])], dim=1)
    assert full.dtype == steps[True].dtype == steps[False].dtype == torch.bfloat16
    for lean in steps.values():
        torch.testing.assert_close(lean, full, **BF16)
    torch.testing.assert_close(full.float(), reference, **BF16)

    def searched():
        """The beam search scores of both loops, under autocast."""
        with torch.autocast("cpu", dtype=torch.bfloat16):
            _, best = te.decoding.beam_search(model, src, max_len=12, beam_size=3, **IDS)
            nbest = beam_search_nbest(model, src, max_len=12, beam_size=3, **IDS)
        return best, torch.tensor([h.score for hypotheses in nbest for h in hypotheses])

    lean = searched()
    hook = model.generator.register_forward_hook(lambda *args: None)
    try:
        modules = searched()
    finally:
        hook.remove()
    assert torch.isfinite(lean[0]).all()
    for ours, theirs in zip(lean, modules):
        torch.testing.assert_close(ours, theirs, **BF16)


def test_supports_declines_what_expects_its_modules_to_be_called():
    model = make_model()
    assert incremental.supports(model)
    handle = model.decoder.layers[1].cross_attn.register_forward_pre_hook(lambda *args: None)
    assert not incremental.supports(model)
    handle.remove()
    handle = nn.modules.module.register_module_forward_hook(lambda *args: None)  # a global hook
    try:
        assert not incremental.supports(model)
    finally:
        handle.remove()
    with te.record_attention(model) as maps:
        assert not incremental.supports(model)
        greedy_decode(model, make_src(), max_len=3, **IDS)
    assert maps["decoder.layers.0.self_attn"].shape[2] == 1  # recorded: one new position, as the modules ran

    class Scaled(te.Transformer):
        def _decode(self, tgt, memory, src_mask, tgt_mask, cache):
            return 2 * super()._decode(tgt, memory, src_mask, tgt_mask, cache)

    assert not incremental.supports(Scaled(model.config))
    assert not incremental.supports(nn.Linear(2, 2))
    assert incremental.supports(model)


def test_bad_arguments_and_too_many_steps_are_named():
    model, src, tgt = make_model(), make_src(), targets(length=4)
    with torch.no_grad():
        memory = model.encode(src)
        mask = te.padding_mask(src, PAD)
        with pytest.raises(TypeError, match="model must be a Transformer"):
            IncrementalDecoder(nn.Linear(2, 2), memory, mask, 4)
        with pytest.raises(ValueError, match="max_len = 41 exceeds the model's max_len = 40"):
            IncrementalDecoder(model, memory, mask, 41)
        cached = IncrementalDecoder(model, memory, mask, 3)
        for t in range(3):
            cached(tgt[:, : t + 1])
        with pytest.raises(ValueError, match="the cache is full"):
            cached(tgt)
        with pytest.raises(ValueError, match="tokens hold 4 positions, more than max_len = 3"):
            IncrementalDecoder(model, memory, mask, 3, use_cache=False)(tgt)


def test_a_replaced_module_sends_the_loops_through_the_modules():
    class GeluFeedForward(te.PositionwiseFeedForward):
        def _run(self, x):
            return self.w_2(torch.nn.functional.gelu(self.w_1(x)))

    model, src = make_model(), make_src()
    relu = greedy_decode(model, src, max_len=12, min_len=12, **IDS)
    gelu = GeluFeedForward(32, 64)
    gelu.load_state_dict(model.decoder.layers[0].feed_forward.state_dict())
    model.decoder.layers[0].feed_forward = gelu
    assert not incremental.supports(model)  # the lean decoder would run ReLU
    assert not torch.equal(greedy_decode(model, src, max_len=12, min_len=12, **IDS), relu)
