"""The decoding loops run the decoder Chapter 6 builds, with the cache Chapter 8 builds: one
implementation, so hooks, recorded attention and replaced modules act on every step."""

import pytest
import torch
from torch import nn

import transformer_edu as te
from transformer_edu.decoding import beam_search_nbest, greedy_decode, sample

PAD, BOS, EOS, V = 0, 1, 2, 20
IDS = dict(bos_id=BOS, eos_id=EOS)
CONFIGS = {
    "post-LN": {},
    "pre-LN, tied output": dict(norm_first=True, tie_output=True),
    "shared embeddings": dict(share_embeddings=True),
}

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def make_model(tiny_model):
    """The shared tiny model with a vocabulary of V on both sides and max_len 40."""
    return lambda **options: nudged(tiny_model(src_vocab_size=V, tgt_vocab_size=V, max_len=40, **options))


def nudged(model: te.Transformer) -> te.Transformer:
    with torch.no_grad():
        model.output.bias[EOS] += 1.0  # some outputs end early, others run to max_len
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
def test_decoding_one_position_at_a_time_gives_the_logits_of_teacher_forcing(options, make_model):
    model, src, tgt = make_model(**options), make_src(), targets()
    with torch.no_grad():
        src_mask = te.padding_mask(src, PAD)  # (B, 1, 1, S)
        memory = model.encode(src, src_mask)
        full = model.decode(tgt, memory, src_mask)  # (B, T, V) under the causal mask
        cache = model.new_cache(tgt.shape[1])
        steps = torch.cat([model.decode(tgt[:, t : t + 1], memory, src_mask, cache=cache)
                           for t in range(tgt.shape[1])], dim=1)  # (B, T, V)
    torch.testing.assert_close(steps, full, rtol=1e-5, atol=1e-5)
    assert cache.length == tgt.shape[1]
    # The cross-attention keys and values were computed once, at the first step, and kept
    assert all(layer["cross_k"].shape == (4, 4, 7, 8) for layer in cache.layers)


def test_a_forward_hook_on_a_decoder_layer_fires_at_every_decoding_step(make_model):
    model, src = make_model(), make_src()
    seen = []
    handle = model.decoder.layers[1].register_forward_hook(lambda module, args, out: seen.append(out.shape))
    try:
        greedy_decode(model, src, max_len=6, min_len=6, **IDS)  # exactly 6 steps
    finally:
        handle.remove()
    assert seen == [torch.Size([4, 1, 32])] * 6  # one new position per step, through the cache


def test_a_forward_hook_on_a_decoder_layer_fires_at_every_beam_search_step(make_model):
    model, src = make_model(), make_src()
    rows = []
    handle = model.decoder.layers[0].register_forward_hook(lambda module, args, out: rows.append(out.shape[0]))
    try:
        beam_search_nbest(model, src[:1], beam_size=3, max_len=5, min_len=5, **IDS)  # exactly 5 steps
    finally:
        handle.remove()
    assert rows == [3] * 5  # the 3 beams of the one source, one new position each step


def test_record_attention_records_while_decoding(make_model):
    model, src = make_model(), make_src()
    with te.record_attention(model) as maps:
        tokens = greedy_decode(model, src, max_len=5, min_len=5, **IDS)
    # The last step's maps: its one new position over the 5 cached ones (BOS + 4 tokens) …
    assert maps["decoder.layers.0.self_attn"].shape == (4, 4, 1, 5)
    assert maps["decoder.layers.1.cross_attn"].shape == (4, 4, 1, 7)
    # … which sum to 1 and give padded source positions no weight
    torch.testing.assert_close(maps["decoder.layers.1.cross_attn"].sum(-1), torch.ones(4, 4, 1))
    assert maps["decoder.layers.1.cross_attn"][3, :, :, 2:].abs().max() == 0
    # Recording changes nothing that is decoded
    assert torch.equal(tokens, greedy_decode(model, src, max_len=5, min_len=5, **IDS))


def test_a_replaced_module_changes_what_the_loops_decode(make_model):
    class GeluFeedForward(te.PositionwiseFeedForward):
        def forward(self, x):
            return self.w_2(self.dropout(torch.nn.functional.gelu(self.w_1(x))))

    model, src = make_model(), make_src()
    steps = dict(max_len=12, min_len=12, **IDS)
    relu = greedy_decode(model, src, **steps)
    gelu = GeluFeedForward(32, 64)
    gelu.load_state_dict(model.decoder.layers[0].feed_forward.state_dict())
    model.decoder.layers[0].feed_forward = gelu
    changed = greedy_decode(model, src, **steps)
    assert not torch.equal(changed, relu)
    assert torch.equal(changed, greedy_decode(model, src, use_cache=False, **steps))  # both ways alike


def test_reorder_moves_the_past_with_the_beams_and_shares_the_memory(make_model):
    model, src, tgt = make_model(), make_src(), targets()
    with torch.no_grad():
        src_mask = te.padding_mask(src, PAD)
        memory = model.encode(src, src_mask)
        # Four beams of source 0 share its memory: row i continues the past of row rows[i]
        one, one_mask = memory[:1].expand(4, -1, -1), src_mask[:1].expand(4, -1, -1, -1)
        cache = model.new_cache(9)
        model.decode(tgt[:, :4], one, one_mask, cache=cache)
        cross = cache.layers[0]["cross_k"]
        rows = torch.tensor([2, 2, 0, 1])
        cache.reorder(rows, shared_memory=True)
        assert cache.layers[0]["cross_k"] is cross  # not gathered: every row reads the same memory
        moved = torch.cat([tgt[rows, :4], tgt[:, 4:5]], dim=1)  # (4, 5): the pasts moved, a new token each
        expected = model(src[:1].expand(4, -1), moved)[:, -1]
        got = model.decode(tgt[:, 4:5], one, one_mask, cache=cache)[:, -1]
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
        # Sources that are done leave the batch: the rows kept take their memory's keys with them
        cache = model.new_cache(9)
        model.decode(tgt[:, :4], memory, src_mask, cache=cache)
        kept = torch.tensor([3, 1])
        cache.reorder(kept)
        got = model.decode(tgt[kept, 4:5], memory[kept], src_mask[kept], cache=cache)[:, -1]
        torch.testing.assert_close(got, model(src[kept], tgt[kept, :5])[:, -1], rtol=1e-5, atol=1e-5)


def test_reorder_refuses_shared_memory_when_the_rows_change_in_number(make_model):
    model, src, tgt = make_model(), make_src(), targets()
    with torch.no_grad():
        cache = model.new_cache(9)
        model.decode(tgt[:, :2], model.encode(src), cache=cache)
    with pytest.raises(ValueError, match="shared_memory=True keeps the number of rows"):
        cache.reorder(torch.tensor([0, 1]), shared_memory=True)


@pytest.mark.parametrize("options", CONFIGS.values(), ids=list(CONFIGS))
def test_the_loops_decode_alike_with_and_without_the_cache(options, make_model):
    model, src = make_model(**options), make_src()
    steps = dict(max_len=12, **IDS)
    for use_cache in (True, False):
        assert torch.equal(greedy_decode(model, src, use_cache=use_cache, **steps),
                           greedy_decode(model, src, **steps))
        nbest = beam_search_nbest(model, src, beam_size=3, use_cache=use_cache, **steps)
        drawn = sample(model, src, generator=torch.Generator().manual_seed(0), use_cache=use_cache, **steps)
        if use_cache:
            first, first_drawn = nbest, drawn
    assert [[h.tokens for h in hs] for hs in nbest] == [[h.tokens for h in hs] for hs in first]
    assert torch.equal(drawn, first_drawn)


# bfloat16 keeps 8 significant bits, a relative step of 2⁻⁷ ≈ 0.8 %; the logits here are of order 1.
BF16 = dict(rtol=1.6e-2, atol=5e-2)


def test_bf16_autocast_decodes_step_by_step_like_teacher_forcing(make_model):
    model, src, tgt = make_model(), make_src(), targets()
    with torch.no_grad():
        src_mask = te.padding_mask(src, PAD)  # (B, 1, 1, S)
        reference = model.decode(tgt, model.encode(src, src_mask), src_mask)  # float32, (B, T, V)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            memory = model.encode(src, src_mask)
            full = model.decode(tgt, memory, src_mask)
            cache = model.new_cache(tgt.shape[1])
            steps = torch.cat([model.decode(tgt[:, t : t + 1], memory, src_mask, cache=cache)
                               for t in range(tgt.shape[1])], dim=1)
            _, best = te.decoding.beam_search(model, src, max_len=12, beam_size=3, **IDS)
    assert full.dtype == steps.dtype == torch.bfloat16
    torch.testing.assert_close(steps, full, **BF16)
    torch.testing.assert_close(full.float(), reference, **BF16)
    assert torch.isfinite(best).all()


def test_double_precision_decodes(make_model):
    model, src = make_model().double(), make_src()
    assert torch.equal(greedy_decode(model, src, max_len=12, **IDS),
                       greedy_decode(model, src, max_len=12, use_cache=False, **IDS))


def test_the_package_has_one_decoder():
    """No second implementation of the decoder layer to choose between at run time."""
    import importlib.util

    assert importlib.util.find_spec("transformer_edu.incremental") is None
    source = "\n".join(open(m.__file__, encoding="utf-8").read() for m in (te.decoding, te.decoder, te.model))
    assert "_global_forward_hooks" not in source and "layer_norm(" not in source.replace("F.layer_norm(", "")


def test_a_full_cache_is_named(make_model):
    model, src, tgt = make_model(), make_src(), targets(length=4)
    with torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache(3)
        model.decode(tgt[:, :3], memory, cache=cache)
        with pytest.raises(ValueError, match="holds 3 positions and has capacity = 3: 1 more do not fit"):
            model.decode(tgt[:, 3:4], memory, cache=cache)
    with pytest.raises(TypeError, match="model must be a Transformer"):
        greedy_decode(nn.Linear(2, 2), src, max_len=3, **IDS)
    with pytest.raises(ValueError, match="max_len = 41 exceeds the model's max_len = 40"):
        greedy_decode(model, src, max_len=41, **IDS)
