"""The decoder layer and stack equal PyTorch's (Chapter 6); every sublayer's dropout fires in
training only; the key/value cache (Chapter 8) is written in place and follows the rows."""

import pytest
import torch
from torch import nn

import transformer_edu as te
from transformer_edu.decoder import DecoderLayer
from transformer_edu.encoder import EncoderLayer

if __package__:
    from .unit_support import (
        PARITY_SIZES,
        padding_keep,
        tokens,
        without_dropout,
    )
else:
    from unit_support import (
        PARITY_SIZES,
        padding_keep,
        tokens,
        without_dropout,
    )


@pytest.mark.parametrize("d_model,n_heads,d_ff,t,s", PARITY_SIZES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_and_stack(d_model, n_heads, d_ff, t, s, norm_first):
    torch.manual_seed(d_model + 1)
    layer = nn.TransformerDecoderLayer(d_model, n_heads, d_ff, dropout=0.1, batch_first=True, norm_first=norm_first)
    ours = te.copy_weights_from_torch(te.DecoderLayer(d_model, n_heads, d_ff, norm_first=norm_first), layer)
    layer.eval(), ours.eval()
    x, memory = torch.randn(3, t, d_model), torch.randn(3, s, d_model)
    src_keep, tgt_keep = padding_keep(3, s, 1), padding_keep(3, t, 2)
    causal = te.causal_mask(t)
    ref = layer(x, memory, tgt_mask=~causal[0, 0], tgt_key_padding_mask=~tgt_keep, memory_key_padding_mask=~src_keep)
    out = ours(x, memory, src_keep[:, None, None, :], causal & tgt_keep[:, None, None, :])
    assert (out - ref).abs().max() < 1e-5

    stack = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(d_model) if norm_first else None).eval()
    ours_stack = te.copy_weights_from_torch(te.Decoder(2, d_model, n_heads, d_ff, norm_first=norm_first), stack)
    ours_stack.eval()
    ref = stack(x, memory, tgt_mask=~causal[0, 0], tgt_key_padding_mask=~tgt_keep, memory_key_padding_mask=~src_keep)
    out = ours_stack(x, memory, src_keep[:, None, None, :], causal & tgt_keep[:, None, None, :])
    assert (out - ref).abs().max() < 1e-5


@pytest.mark.parametrize("layer_type", [EncoderLayer, DecoderLayer])
def test_every_sublayer_dropout_fires_in_training_and_none_in_eval(layer_type):
    torch.manual_seed(0)
    layer = layer_type(16, 4, 32, dropout=0.3)
    x = torch.randn(2, 5, 16)
    args = (x,) if layer_type is EncoderLayer else (x, torch.randn(2, 4, 16))
    clean = without_dropout(layer).eval()
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


class CatCache(te.KVCache):
    """The cache as Chapter 8 first builds it: every step concatenates (copies) the whole prefix."""

    def append(self, layer, k, v):
        entries = self.layers[layer]
        if "self_k" in entries:
            k = torch.cat([entries["self_k"], k], dim=2)  # (B, H, t + T, d_k)
            v = torch.cat([entries["self_v"], v], dim=2)
        entries["self_k"], entries["self_v"] = k, v
        return k, v


def _decode_steps(model, cache, src, tgt, chunks):
    memory, mask = model.encode(src), te.padding_mask(src)
    out, start = [], 0
    for size in chunks:
        out.append(model.decode(tgt[:, start:start + size], memory, mask, cache=cache))
        start += size
    return torch.cat(out, dim=1)


@pytest.mark.parametrize("capacity", [None, 8])
@pytest.mark.parametrize("norm_first", [False, True])
def test_cache_equals_the_concatenating_cache(capacity, norm_first, tiny_model):
    model = tiny_model(norm_first=norm_first)
    src, tgt = tokens(3, 6, 23, 13), tokens(3, 8, 19, 14)
    src[2, 3:] = 0
    chunks = [1, 3, 1, 1, 2]  # one position at a time, and several at once
    new = model.new_cache(capacity)
    old = CatCache(len(model.decoder.layers))
    with torch.no_grad():
        ours, theirs = _decode_steps(model, new, src, tgt, chunks), _decode_steps(model, old, src, tgt, chunks)
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=1e-6)
    assert new.length == old.length == 8
    for mine, reference in zip(new.layers, old.layers):
        assert set(mine) == {"self_k", "self_v", "cross_k", "cross_v"}
        for name in mine:
            assert mine[name].shape == reference[name].shape  # (B, H, t, d_k): the filled part only
            torch.testing.assert_close(mine[name], reference[name], atol=1e-6, rtol=1e-6)


def test_cache_with_a_capacity_is_written_in_place(tiny_model):
    model = tiny_model()
    src, tgt = tokens(2, 5, 23, 15), tokens(2, 6, 19, 16)
    cache = model.new_cache(6)
    memory = model.encode(src)
    with torch.no_grad():
        model.decode(tgt[:, :1], memory, cache=cache)
        buffer = cache._buffers[0]["self_k"]
        assert buffer.shape == (2, 4, 6, 8)  # (B, H, capacity, d_k), allocated at the first step
        first = cache.layers[0]["self_k"].clone()
        for t in range(1, 6):
            model.decode(tgt[:, t:t + 1], memory, cache=cache)
            view = cache.layers[0]["self_k"]
            assert view.shape == (2, 4, t + 1, 8)
            assert view.data_ptr() == buffer.data_ptr()  # a view of the same storage: nothing copied
    assert cache._buffers[0]["self_k"] is buffer
    assert torch.equal(cache.layers[0]["self_k"][:, :, :1], first)  # earlier positions stay put


def test_cache_without_capacity_doubles_its_buffers(tiny_model):
    model = tiny_model()
    src, tgt = tokens(1, 4, 23, 17), tokens(1, 20, 19, 18)
    cache = model.new_cache()
    memory = model.encode(src)
    rooms = []
    with torch.no_grad():
        for t in range(20):
            model.decode(tgt[:, t:t + 1], memory, cache=cache)
            rooms.append(cache._buffers[0]["self_k"].shape[2])
    assert sorted(set(rooms)) == [1, 2, 4, 8, 16, 32]  # 5 reallocations for 20 steps, not 19
    with torch.no_grad():
        full = model.decode(tgt, memory)
        cache2 = model.new_cache()
        steps = torch.cat([model.decode(tgt[:, t:t + 1], memory, cache=cache2) for t in range(20)], dim=1)
    assert (steps - full).abs().max() < 1e-5


def test_reorder_gathers_rows_in_place_and_follows_a_smaller_batch(tiny_model):
    model = tiny_model()
    src, tgt = tokens(3, 5, 23, 19), tokens(3, 4, 19, 20)
    memory = model.encode(src)
    cache = model.new_cache(6)
    with torch.no_grad():
        model.decode(tgt[:, :3], memory, cache=cache)
        before = {name: t.clone() for name, t in cache.layers[1].items()}
        buffer = cache._buffers[1]["self_v"]
        index = torch.tensor([2, 0, 0])
        cache.reorder(index)  # same number of rows: gathered into the same buffers
        assert cache._buffers[1]["self_v"] is buffer
        for name, tensor in cache.layers[1].items():
            assert torch.equal(tensor, before[name][index])
        cache.reorder(torch.tensor([1]))  # one row left: new, smaller buffers
        assert cache._buffers[1]["self_v"].shape == (1, 4, 6, 8) and cache.batch_size == 1
        assert torch.equal(cache.layers[1]["self_k"], before["self_k"][[0]])
        # the reordered cache continues as a recomputation of the kept row would
        step = model.decode(tgt[[0], 3:], memory[[0]], cache=cache)
        full = model.decode(tgt[[0]], memory[[0]])
    assert (step[:, -1] - full[:, -1]).abs().max() < 1e-5


def test_cache_capacity_and_batch_errors_are_clear(tiny_model):
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
    with pytest.raises(ValueError, match="the cache holds 2 rows but tgt has batch size 1"):
        model.decode(tgt[:1, 3:], memory[:1], cache=cache)
    with pytest.raises(TypeError, match="cache must be a KVCache"):
        model.decode(tgt[:, :1], memory, cache={})
    with pytest.raises(ValueError, match="positions 64…64 are outside the table"):
        long_cache = model.new_cache()
        long_cache.length = 64
        model.decode(tgt[:, :1], memory, cache=long_cache)
