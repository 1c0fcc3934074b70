"""The whole model's properties and the paper's sizes (Chapter 6)."""

import math

import pytest
import torch

import transformer_edu as te
from transformer_edu import Transformer, TransformerConfig

if __package__:
    from .unit_support import tokens, without_dropout
else:
    from unit_support import tokens, without_dropout


@pytest.mark.parametrize("norm_first", [False, True])
def test_future_target_tokens_do_not_change_earlier_logits(norm_first, tiny_model):
    model = tiny_model(norm_first=norm_first)
    src, tgt = tokens(2, 6, 23, 1), tokens(2, 7, 19, 2)
    logits = model(src, tgt)
    for t in range(1, 7):
        changed = tgt.clone()
        changed[:, t:] = (changed[:, t:] % 18) + 1  # different real tokens from position t on
        other = model(src, changed)
        assert (other[:, :t] - logits[:, :t]).abs().max() < 1e-5
        assert (other[:, t:] - logits[:, t:]).abs().max() > 1e-3


@pytest.mark.parametrize("norm_first", [False, True])
def test_padding_changes_nothing(norm_first, tiny_model):
    model = tiny_model(norm_first=norm_first)
    src, tgt = tokens(2, 5, 23, 3), tokens(2, 4, 19, 4)
    logits = model(src, tgt)
    padded_src = torch.cat([src, torch.zeros(2, 3, dtype=torch.long)], dim=1)
    assert (model(padded_src, tgt) - logits).abs().max() < 1e-5
    padded_tgt = torch.cat([tgt, torch.zeros(2, 2, dtype=torch.long)], dim=1)
    assert (model(src, padded_tgt)[:, :4] - logits).abs().max() < 1e-5
    out = model(padded_src, padded_tgt)
    assert torch.isfinite(out).all()  # padded query rows stay finite too


def test_rows_do_not_depend_on_the_rest_of_the_batch(tiny_model):
    model = tiny_model()
    src, tgt = tokens(4, 6, 23, 5), tokens(4, 5, 19, 6)
    src[1, 4:] = 0
    tgt[2, 3:] = 0
    batched = model(src, tgt)
    for row in range(4):
        alone = model(src[row:row + 1], tgt[row:row + 1])
        assert (alone - batched[row:row + 1]).abs().max() < 1e-5


def test_encode_then_decode_equals_forward(tiny_model):
    model = tiny_model()
    src, tgt = tokens(3, 6, 23, 7), tokens(3, 5, 19, 8)
    src[0, 3:] = 0
    memory = model.encode(src)
    assert memory.shape == (3, 6, 32)
    assert (model.decode(tgt, memory, te.padding_mask(src)) - model(src, tgt)).abs().max() < 1e-6


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_equals_full_decoding(norm_first, tiny_model):
    model = tiny_model(norm_first=norm_first)
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
    rows = torch.tensor([1, 1, 0])  # row 0 repeated, rows swapped: the cache follows
    cache.reorder(rows)
    assert cache.batch_size == 3 and cache.length == 5
    more = tokens(3, 1, 19, 11)
    step = model.decode(more, memory[rows], mask[rows], cache=cache)  # (3, 1, V)
    full = model.decode(torch.cat([tgt[rows], more], dim=1), memory[rows], mask[rows])[:, -1:]
    assert (step - full).abs().max() < 1e-5


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
    assert model.output.weight is model.tgt_embed.weight
    assert te.TransformerConfig.from_dict(base.to_dict()) == base


def test_xavier_initialisation(tiny_model):
    model = tiny_model(d_model=64, d_ff=256)
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
    assert model.output.weight.std().item() == pytest.approx(
        d_model ** -0.5 if shared else math.sqrt(2 / (d_model + 4000)), rel=0.02)


def test_training_step_has_no_nan_and_gradients_everywhere(tiny_model):
    model = tiny_model(dropout=0.1).train()
    src, tgt = tokens(4, 6, 23, 11), tokens(4, 5, 19, 12)
    src[0, 2:] = 0
    logits = model(src, tgt)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 19), tgt.reshape(-1))
    loss.backward()
    assert torch.isfinite(loss)
    for name, p in model.named_parameters():
        if name.endswith("w_k.bias"):  # fixed at zero: softmax ignores it (MultiHeadAttention)
            assert not p.requires_grad and p.grad is None, name
            continue
        assert p.grad is not None and torch.isfinite(p.grad).all(), name


def test_the_model_in_eval_mode_ignores_its_dropout():
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(11, 13, d_model=16, n_heads=4, d_ff=32, n_layers=2, dropout=0.2))
    src, tgt = torch.randint(4, 11, (3, 7)), torch.randint(4, 13, (3, 5))
    clean = without_dropout(model).eval()
    model.eval()
    torch.testing.assert_close(model(src, tgt), clean(src, tgt))
    model.train()
    assert not torch.allclose(model(src, tgt), clean(src, tgt))


def test_count_parameters_counts_what_the_model_holds_or_only_what_trains():
    mha = te.MultiHeadAttention(16, 4)
    assert te.count_parameters(mha) == 4 * (16 * 16 + 16)  # as nn.MultiheadAttention
    assert te.count_parameters(mha, trainable_only=True) == 4 * (16 * 16 + 16) - 16  # the key bias is fixed


def test_without_source_positions_the_encoder_sees_a_bag_and_the_decoder_is_unchanged():
    def model(src_positional):
        torch.manual_seed(0)
        config = TransformerConfig(12, 10, d_model=16, n_heads=2, d_ff=32, n_layers=2, max_len=20,
                                   src_positional=src_positional)
        return Transformer(config).eval()

    with_pe, without = model(True), model(False)
    assert all(torch.equal(a, b) for a, b in zip(with_pe.state_dict().values(), without.state_dict().values()))
    src = torch.tensor([[4, 5, 6, 7, 8, 9]])  # (1, S), no padding
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    tgt = torch.tensor([[1, 4, 5, 6]])  # (1, T)
    with torch.no_grad():
        memory = without.encode(src)  # (1, S, D)
        torch.testing.assert_close(without.encode(src[:, perm]), memory[:, perm])  # rows permute with tokens
        torch.testing.assert_close(without(src[:, perm], tgt), without(src, tgt))  # the output ignores order
        assert not torch.allclose(with_pe(src[:, perm], tgt), with_pe(src, tgt), atol=1e-4)
        plain = without.encoder(without.src_embed(src) * without.embed_scale, None)
        torch.testing.assert_close(memory, plain)  # nothing added to the embeddings
        shared = with_pe.encode(src)
        torch.testing.assert_close(without.decode(tgt, shared), with_pe.decode(tgt, shared))  # decoder: same
        assert not torch.allclose(without.decode(tgt[:, [0, 2, 1, 3]], shared)[:, 3],
                                  without.decode(tgt, shared)[:, 3], atol=1e-4)  # the target keeps positions
    with pytest.raises(TypeError, match="src_positional must be a bool"):
        TransformerConfig(12, 10, src_positional="no")
