"""The whole model's properties, the positional encoding and the paper's sizes (Chapters 3, 6)."""

import math

import pytest
import torch

import transformer_edu as te


def small_model(norm_first=False, seed=0, **overrides):
    torch.manual_seed(seed)
    config = te.TransformerConfig(
        **{**dict(src_vocab_size=23, tgt_vocab_size=19, d_model=32, n_heads=4, d_ff=64, n_layers=2,
                  max_len=64, norm_first=norm_first), **overrides}
    )
    return te.Transformer(config).eval()


def tokens(batch, length, vocab, seed):
    return torch.randint(1, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("norm_first", [False, True])
def test_future_target_tokens_do_not_change_earlier_logits(norm_first):
    model = small_model(norm_first)
    src, tgt = tokens(2, 6, 23, 1), tokens(2, 7, 19, 2)
    logits = model(src, tgt)
    for t in range(1, 7):
        changed = tgt.clone()
        changed[:, t:] = (changed[:, t:] % 18) + 1  # different real tokens from position t on
        other = model(src, changed)
        assert (other[:, :t] - logits[:, :t]).abs().max() < 1e-5
        assert (other[:, t:] - logits[:, t:]).abs().max() > 1e-3


@pytest.mark.parametrize("norm_first", [False, True])
def test_padding_changes_nothing(norm_first):
    model = small_model(norm_first)
    src, tgt = tokens(2, 5, 23, 3), tokens(2, 4, 19, 4)
    logits = model(src, tgt)
    padded_src = torch.cat([src, torch.zeros(2, 3, dtype=torch.long)], dim=1)
    assert (model(padded_src, tgt) - logits).abs().max() < 1e-5
    padded_tgt = torch.cat([tgt, torch.zeros(2, 2, dtype=torch.long)], dim=1)
    assert (model(src, padded_tgt)[:, :4] - logits).abs().max() < 1e-5
    out = model(padded_src, padded_tgt)
    assert torch.isfinite(out).all()  # padded query rows stay finite too


def test_rows_do_not_depend_on_the_rest_of_the_batch():
    model = small_model()
    src, tgt = tokens(4, 6, 23, 5), tokens(4, 5, 19, 6)
    src[1, 4:] = 0
    tgt[2, 3:] = 0
    batched = model(src, tgt)
    for row in range(4):
        alone = model(src[row:row + 1], tgt[row:row + 1])
        assert (alone - batched[row:row + 1]).abs().max() < 1e-5


def test_encode_then_decode_equals_forward():
    model = small_model()
    src, tgt = tokens(3, 6, 23, 7), tokens(3, 5, 19, 8)
    src[0, 3:] = 0
    memory = model.encode(src)
    assert memory.shape == (3, 6, 32)
    assert (model.decode(tgt, memory, te.padding_mask(src)) - model(src, tgt)).abs().max() < 1e-6


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_equals_full_decoding(norm_first):
    model = small_model(norm_first)
    src, tgt = tokens(2, 6, 23, 9), tokens(2, 5, 19, 10)
    src[1, 4:] = 0
    mask = te.padding_mask(src)
    memory = model.encode(src)
    full = model.decode(tgt, memory, mask)
    cache = model.new_cache()
    steps = [model.decode(tgt[:, t:t + 1], memory, mask, cache=cache) for t in range(5)]
    assert cache.length == 5
    assert (torch.cat(steps, dim=1) - full).abs().max() < 1e-5
    cache = model.new_cache()  # several positions at once, then one more
    first = model.decode(tgt[:, :3], memory, mask, cache=cache)
    rest = model.decode(tgt[:, 3:], memory, mask, cache=cache)
    assert (torch.cat([first, rest], dim=1) - full).abs().max() < 1e-5
    cache.reorder(torch.tensor([1, 1, 0]))
    assert cache.layers[0]["self_k"].shape[0] == 3


def test_sinusoidal_table_matches_the_formula():
    d_model, max_len = 16, 50
    table = te.sinusoidal_table(max_len, d_model)
    assert table.shape == (max_len, d_model)
    for pos in range(max_len):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert table[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_positional_encoding_is_a_buffer():
    pe = te.SinusoidalPositionalEncoding(8, max_len=20)
    assert list(pe.parameters()) == []
    assert "pe" in pe.state_dict()
    x = torch.zeros(2, 5, 8)
    assert torch.equal(pe(x)[0], te.sinusoidal_table(20, 8)[:5])
    assert torch.equal(pe(x, offset=3)[0], te.sinusoidal_table(20, 8)[3:8])
    assert pe.to(torch.float64).pe.dtype == torch.float64


def test_paper_parameter_counts():
    with torch.device("meta"):  # shapes only: no memory, no time spent initialising
        base = te.count_parameters(te.Transformer(te.TransformerConfig.base(37000)))
        big = te.count_parameters(te.Transformer(te.TransformerConfig.big(37000)))
    assert abs(base - 65e6) / 65e6 < 0.05
    assert abs(big - 213e6) / 213e6 < 0.05


def test_presets_follow_the_paper():
    base = te.TransformerConfig.base(100)
    assert (base.d_model, base.n_heads, base.d_ff, base.n_layers, base.dropout) == (512, 8, 2048, 6, 0.1)
    big = te.TransformerConfig.big(100)
    assert (big.d_model, big.n_heads, big.d_ff, big.n_layers, big.dropout) == (1024, 16, 4096, 6, 0.3)
    model = te.Transformer(te.TransformerConfig.base(50, d_model=16, n_heads=2, d_ff=32, n_layers=1))
    assert model.src_embed is model.tgt_embed
    assert model.generator.weight is model.tgt_embed.weight
    assert te.TransformerConfig.from_dict(base.to_dict()) == base


def test_xavier_initialisation():
    model = small_model(d_model=64, d_ff=256)
    weight = model.encoder.layers[0].feed_forward.w_1.weight  # (256, 64)
    bound = math.sqrt(6 / (64 + 256))
    assert weight.abs().max() <= bound
    assert weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.05)


@pytest.mark.parametrize("shared", [False, True])
def test_embeddings_start_normal_with_std_d_model_to_the_minus_half(shared):
    # tensor2tensor's initialisation: after the √d_model scale an embedded token has unit variance
    d_model = 256
    config = te.TransformerConfig(4000, 4000, d_model=d_model, n_heads=4, d_ff=64, n_layers=1,
                                  share_embeddings=shared, tie_output=shared)
    model = te.Transformer(config)
    for embedding in (model.src_embed, model.tgt_embed):
        assert embedding.weight.std().item() == pytest.approx(d_model ** -0.5, rel=0.02)
        assert embedding.weight.mean().abs().item() < 1e-3
        scaled = embedding.weight * model.embed_scale
        assert scaled.var().item() == pytest.approx(1.0, rel=0.03)
    assert model.generator.weight.std().item() == pytest.approx(
        d_model ** -0.5 if shared else math.sqrt(2 / (d_model + 4000)), rel=0.02)


def test_training_step_has_no_nan_and_gradients_everywhere():
    model = small_model(dropout=0.1).train()
    src, tgt = tokens(4, 6, 23, 11), tokens(4, 5, 19, 12)
    src[0, 2:] = 0
    logits = model(src, tgt)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 19), tgt.reshape(-1))
    loss.backward()
    assert torch.isfinite(loss)
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name


# --------------------------------------------------------------------------
# The key/value cache (Chapter 8): preallocated buffers written in place
# --------------------------------------------------------------------------


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
def test_cache_equals_the_concatenating_cache(capacity, norm_first):
    model = small_model(norm_first)
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


def test_cache_with_a_capacity_is_written_in_place():
    model = small_model()
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


def test_cache_without_capacity_doubles_its_buffers():
    model = small_model()
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


def test_reorder_gathers_rows_in_place_and_follows_a_smaller_batch():
    model = small_model()
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


def test_cache_capacity_and_batch_errors_are_clear():
    model = small_model()  # max_len = 64
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
