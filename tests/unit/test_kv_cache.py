"""The key/value cache of Chapter 8 (transformer_edu.kv_cache): decoding one position at a time
through it gives the logits of teacher forcing; it is written in place, grows by doubling and
follows the rows it keeps; the attention layer takes it as Chapter 2's forward plus a few lines."""

import pytest
import torch

import transformer_edu as te
from transformer_edu.kv_cache import LayerCache, MemoryCache, SelfAttentionCache

if __package__:
    from .unit_support import tokens
else:
    from unit_support import tokens

PAD, BOS, V = 0, 1, 20
CONFIGS = {
    "post-LN": {},
    "pre-LN, tied output": dict(norm_first=True, tie_output=True),
    "shared embeddings": dict(share_embeddings=True),
}

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def make_model(tiny_model):
    """The shared tiny model with a vocabulary of V on both sides and max_len 40."""
    return lambda **options: tiny_model(src_vocab_size=V, tgt_vocab_size=V, max_len=40, **options)


def make_src() -> torch.Tensor:
    src = torch.randint(3, V, (4, 7), generator=torch.Generator().manual_seed(0))  # (B, S)
    src[1, 4:] = PAD
    src[3, 2:] = PAD
    return src


def targets(rows: int = 4, length: int = 9) -> torch.Tensor:
    tgt = torch.randint(3, V, (rows, length), generator=torch.Generator().manual_seed(1))  # (B, T)
    tgt[:, 0] = BOS
    return tgt


# --- the attention layer with a cache: Chapter 2's forward plus a few lines ------------------


def test_self_attention_step_by_step_equals_causal_attention_over_the_whole_sequence():
    torch.manual_seed(0)
    mha = te.MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 6, 16)
    full, full_weights = mha(x, x, x, te.causal_mask(6))
    cache = SelfAttentionCache(capacity=6)
    steps = [mha(x[:, t : t + 1], x[:, t : t + 1], x[:, t : t + 1], cache=cache) for t in range(6)]
    torch.testing.assert_close(torch.cat([out for out, _ in steps], dim=1), full, atol=1e-6, rtol=1e-6)
    assert cache.length == 6 and cache.keys.shape == (2, 4, 6, 4)
    # Step t's one query attends over the t + 1 cached keys: row t of the causal weights
    for t, (_, weights) in enumerate(steps):
        torch.testing.assert_close(weights, full_weights[:, :, t : t + 1, : t + 1], atol=1e-6, rtol=1e-6)


def test_cross_attention_projects_the_memory_at_the_first_step_only():
    torch.manual_seed(0)
    mha = te.MultiHeadAttention(16, 4).eval()
    queries, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    projected = []
    mha.w_k.register_forward_hook(lambda module, args, out: projected.append(args[0].shape))
    cache = MemoryCache()
    steps = [mha(queries[:, t : t + 1], memory, memory, cache=cache)[0] for t in range(5)]
    assert projected == [torch.Size([2, 7, 16])]  # the memory's keys: once, at the first step
    assert cache.holds_memory and cache.keys.shape == (2, 4, 7, 4) and cache.keys.is_contiguous()
    full, _ = mha(queries, memory, memory)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-6, rtol=1e-6)


class ConcatenatingCache(SelfAttentionCache):
    """The cache as Chapter 8 first builds it: every step concatenates (copies) the whole prefix."""

    def update(self, k, v):
        if self.length:
            k = torch.cat([self._k, k], dim=2)  # (B, H, t + T, d_k)
            v = torch.cat([self._v, v], dim=2)
        self._k, self._v, self.length = k, v, k.shape[2]
        return k, v


def _decode_in_chunks(model, cache, src, tgt, chunks):
    memory, mask = model.encode(src), te.padding_mask(src)
    out, start = [], 0
    for size in chunks:
        out.append(model.decode(tgt[:, start : start + size], memory, mask, cache=cache))
        start += size
    return torch.cat(out, dim=1)


@pytest.mark.parametrize("capacity", [None, 8])
@pytest.mark.parametrize("norm_first", [False, True])
def test_the_cache_equals_a_concatenating_cache_and_teacher_forcing(capacity, norm_first, tiny_model):
    model = tiny_model(norm_first=norm_first)
    src, tgt = tokens(3, 6, 23, 13), tokens(3, 8, 19, 14)
    src[2, 3:] = 0
    chunks = [1, 3, 1, 1, 2]  # one position at a time, and several at once
    ours = model.new_cache(capacity)
    theirs = te.KVCache(len(model.decoder.layers))
    for layer in range(len(theirs.layers)):
        theirs.layers[layer] = LayerCache(ConcatenatingCache(), MemoryCache())
    with torch.no_grad():
        mine, reference = _decode_in_chunks(model, ours, src, tgt, chunks), _decode_in_chunks(
            model, theirs, src, tgt, chunks)
        forced = model.decode(tgt, model.encode(src), te.padding_mask(src))
    torch.testing.assert_close(mine, reference, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(mine, forced, atol=1e-5, rtol=1e-5)
    assert ours.length == theirs.length == 8
    for a, b in zip(ours.layers, theirs.layers):
        torch.testing.assert_close(a.self_attn.keys, b.self_attn.keys, atol=1e-6, rtol=1e-6)
        torch.testing.assert_close(a.cross_attn.values, b.cross_attn.values, atol=1e-6, rtol=1e-6)


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
    assert all(layer.cross_attn.keys.shape == (4, 4, 7, 8) for layer in cache.layers)


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
    assert full.dtype == steps.dtype == torch.bfloat16
    torch.testing.assert_close(steps, full, **BF16)
    torch.testing.assert_close(full.float(), reference, **BF16)


# --- the buffers: written in place, doubled when full ----------------------------------------


def test_a_cache_with_a_capacity_is_written_in_place(tiny_model):
    model = tiny_model()
    src, tgt = tokens(2, 5, 23, 15), tokens(2, 6, 19, 16)
    cache = model.new_cache(6)
    memory = model.encode(src)
    with torch.no_grad():
        model.decode(tgt[:, :1], memory, cache=cache)
        part = cache.layers[0].self_attn
        buffer = part._k
        assert buffer.shape == (2, 4, 6, 8)  # (B, H, capacity, d_k), allocated at the first step
        first = part.keys.clone()
        for t in range(1, 6):
            model.decode(tgt[:, t : t + 1], memory, cache=cache)
            assert part.keys.shape == (2, 4, t + 1, 8)
            assert part.keys.data_ptr() == buffer.data_ptr()  # a view of the same storage: nothing copied
    assert part._k is buffer
    assert torch.equal(part.keys[:, :, :1], first)  # earlier positions stay put


def test_a_cache_without_capacity_doubles_its_buffers(tiny_model):
    model = tiny_model()
    src, tgt = tokens(1, 4, 23, 17), tokens(1, 20, 19, 18)
    cache = model.new_cache()
    memory = model.encode(src)
    rooms = []
    with torch.no_grad():
        for t in range(20):
            model.decode(tgt[:, t : t + 1], memory, cache=cache)
            rooms.append(cache.layers[0].self_attn._k.shape[2])
        full = model.decode(tgt, memory)
        steps = torch.cat([model.decode(tgt[:, t : t + 1], memory, cache=c)
                           for c in [model.new_cache()] for t in range(20)], dim=1)
    assert sorted(set(rooms)) == [1, 2, 4, 8, 16, 32]  # 5 reallocations for 20 steps, not 19
    assert (steps - full).abs().max() < 1e-5


# --- reorder: the cache follows the rows it keeps --------------------------------------------


def test_reorder_gathers_rows_in_place_and_follows_a_smaller_batch(tiny_model):
    model = tiny_model()
    src, tgt = tokens(3, 5, 23, 19), tokens(3, 4, 19, 20)
    memory = model.encode(src)
    cache = model.new_cache(6)
    with torch.no_grad():
        model.decode(tgt[:, :3], memory, cache=cache)
        part = cache.layers[1].self_attn
        before = part.values.clone()
        buffer = part._v
        index = torch.tensor([2, 0, 0])
        cache.reorder(index)  # same number of rows: gathered into the same buffers
        assert part._v is buffer and torch.equal(part.values, before[index])
        cache.reorder(torch.tensor([1]))  # one row left: new, smaller buffers
        assert part._v.shape == (1, 4, 6, 8) and cache.batch_size == 1
        assert torch.equal(part.values, before[[0]])
        # the reordered cache continues as a recomputation of the kept row would
        step = model.decode(tgt[[0], 3:], memory[[0]], cache=cache)
        full = model.decode(tgt[[0]], memory[[0]])
    assert (step[:, -1] - full[:, -1]).abs().max() < 1e-5


def test_reorder_moves_the_past_with_the_beams_and_shares_the_memory(make_model):
    model, src, tgt = make_model(), make_src(), targets()
    with torch.no_grad():
        src_mask = te.padding_mask(src, PAD)
        memory = model.encode(src, src_mask)
        # Four beams of source 0 share its memory: row i continues the past of row rows[i]
        one, one_mask = memory[:1].expand(4, -1, -1), src_mask[:1].expand(4, -1, -1, -1)
        cache = model.new_cache(9)
        model.decode(tgt[:, :4], one, one_mask, cache=cache)
        cross = cache.layers[0].cross_attn.keys
        rows = torch.tensor([2, 2, 0, 1])
        cache.reorder(rows, shared_memory=True)
        assert cache.layers[0].cross_attn.keys is cross  # not gathered: every row reads the same memory
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


# --- bad input is named ----------------------------------------------------------------------


def test_cache_capacity_batch_and_type_errors_are_clear(tiny_model):
    model = tiny_model()  # max_len = 64
    src, tgt = tokens(2, 5, 23, 21), tokens(2, 4, 19, 22)
    memory = model.encode(src)
    with pytest.raises(ValueError, match="capacity = 65 exceeds the model's max_len = 64"):
        model.new_cache(65)
    with pytest.raises(ValueError, match="capacity must be at least 1"):
        model.new_cache(0)
    with pytest.raises(TypeError, match="capacity must be an int"):
        te.KVCache(2, capacity=2.5)
    cache = model.new_cache(3)
    model.decode(tgt[:, :2], memory, cache=cache)
    with pytest.raises(ValueError, match=r"holds 2 positions and has capacity = 3: 2 more do not fit"):
        model.decode(tgt[:, 2:4], memory, cache=cache)
    assert cache.length == 2  # refused before anything was written
    model.decode(tgt[:, 2:3], memory, cache=cache)  # one more fits
    with pytest.raises(ValueError, match="holds 3 positions and has capacity = 3: 1 more do not fit"):
        model.decode(tgt[:, 3:4], memory, cache=cache)
    with pytest.raises(ValueError, match="the cache holds 2 rows but tgt has batch size 1"):
        model.decode(tgt[:1, 3:], memory[:1], cache=cache)
    with pytest.raises(TypeError, match="cache must be a KVCache"):
        model.decode(tgt[:, :1], memory, cache={})
    with pytest.raises(ValueError, match="cache has 3 layers, the decoder has 2"):
        model.decode(tgt[:, :1], memory, cache=te.KVCache(3))
    long_cache = model.new_cache()
    model.decode(tokens(2, 64, 19, 23), memory, cache=long_cache)  # every position of the table
    with pytest.raises(ValueError, match="positions 64…64 are outside the table"):
        model.decode(tgt[:, :1], memory, cache=long_cache)


def test_the_attention_layers_name_a_wrong_cache():
    mha, layer = te.MultiHeadAttention(16, 4), te.DecoderLayer(16, 4, 32)
    x = torch.randn(2, 3, 16)
    with pytest.raises(TypeError, match="cache must be one attention layer's cache"):
        mha(x, x, x, cache=te.KVCache(1))
    with pytest.raises(TypeError, match="cache must be one decoder layer's cache"):
        layer(x, x, cache=SelfAttentionCache())
    cache = SelfAttentionCache(capacity=4)
    mha(x, x, x, cache=cache)
    with pytest.raises(ValueError, match="the cache holds 2 rows but query has batch size 1"):
        mha(x[:1, :1], x[:1, :1], x[:1, :1], cache=cache)
    with pytest.raises(ValueError, match="holds 3 positions and has capacity = 4: 2 more do not fit"):
        mha(x[:, :2], x[:, :2], x[:, :2], cache=cache)
    with pytest.raises(ValueError, match=r"does not broadcast .* \(2, 4, 1, 4\)"):  # the mask covers the cached ones
        mha(x[:, :1], x[:, :1], x[:, :1], torch.ones(1, 1, 1, 2, dtype=torch.bool), cache=cache)


def test_reorder_refuses_shared_memory_when_the_rows_change_in_number(make_model):
    model, src, tgt = make_model(), make_src(), targets()
    with torch.no_grad():
        cache = model.new_cache(9)
        model.decode(tgt[:, :2], model.encode(src), cache=cache)
    with pytest.raises(ValueError, match="shared_memory=True keeps the number of rows"):
        cache.reorder(torch.tensor([0, 1]), shared_memory=True)
    with pytest.raises(TypeError, match="index must hold integer row numbers"):
        cache.reorder(torch.tensor([0.0, 1.0]))
