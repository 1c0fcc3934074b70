"""Scaled dot-product attention and multi-head attention (Chapters 1-2), and their dropout."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import transformer_edu as te
from transformer_edu.attention import MultiHeadAttention

if __package__:
    from .unit_support import without_dropout
else:
    from unit_support import without_dropout


@pytest.mark.parametrize("shape", [(2, 5, 7, 8), (3, 1, 4, 16), (1, 2, 9, 9)])
@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_matches_pytorch(shape, masked):
    torch.manual_seed(0)
    b, h, lq, d = shape
    lk = lq + 2
    q, k, v = torch.randn(b, h, lq, d), torch.randn(b, h, lk, d), torch.randn(b, h, lk, d)
    mask = None
    if masked:
        mask = torch.rand(b, 1, lq, lk) > 0.3
        mask[..., 0] = True  # every query sees at least one key (PyTorch gives NaN otherwise)
    ours, weights = te.scaled_dot_product_attention(q, k, v, mask)
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (ours - theirs).abs().max() < 1e-5
    assert torch.allclose(weights.sum(-1), torch.ones(b, h, lq), atol=1e-6)


def test_worked_example_by_hand():
    # One query against three keys whose scores (after scaling) are 0.9, 0.8, 0.3.
    scores = torch.tensor([0.9, 0.8, 0.3])
    expected = [math.exp(s) / sum(math.exp(t) for t in scores.tolist()) for s in scores.tolist()]
    d_k = 4
    query = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    key = torch.zeros(3, d_k)
    key[:, 0] = scores * math.sqrt(d_k)
    value = torch.eye(3, d_k)
    out, weights = te.scaled_dot_product_attention(query, key, value)
    assert weights[0].tolist() == pytest.approx(expected, abs=1e-6)
    assert out[0, :3].tolist() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_fully_masked_rows_are_finite_and_masked_keys_get_zero(dtype):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, 4, 8, dtype=dtype) * 30 for _ in range(3))
    mask = torch.tensor([True, True, False, False]).expand(2, 1, 4, 4).clone()
    mask[0, 0, 2] = False  # batch 0, query 2: every key blocked
    out, weights = te.scaled_dot_product_attention(q, k, v, mask)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert (weights[..., 2:] == 0).all()  # exactly zero, not merely small
    assert (weights[0, :, 2] == 0).all() and (out[0, :, 2] == 0).all()
    mha = te.MultiHeadAttention(8, 2).to(dtype).eval()
    x = torch.randn(2, 4, 8, dtype=dtype) * 30
    y = {need_weights: mha(x, x, x, mask, need_weights=need_weights)[0] for need_weights in (True, False)}
    assert torch.isfinite(y[False]).all()
    torch.testing.assert_close(y[False], y[True], atol=0.1 if dtype != torch.float32 else 1e-4, rtol=0.05)
    torch.testing.assert_close(y[False][0, 2], mha.w_o.bias)  # attends to nothing: W_O of zeros


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA"))]


@pytest.mark.parametrize("device", DEVICES)
def test_the_fused_kernel_answers_blocked_queries_with_zeros_without_reading_the_mask(device):
    """MultiHeadAttention's fast path hands fully blocked query rows to PyTorch's fused kernel as they
    are: since PyTorch 2.5 (the package's oldest) the kernel answers them with zeros, as ours does,
    so the path needs no ``bool(…)`` read of the mask (a host–device synchronisation on a GPU)."""
    from torch.profiler import profile

    torch.manual_seed(0)
    q, k, v = (torch.randn(3, 2, 4, 8, device=device, requires_grad=True) for _ in range(3))
    mask = torch.ones(3, 1, 1, 4, dtype=torch.bool, device=device)
    mask[1] = False  # source 1 is all padding: no query of it may attend to anything
    with profile() as prof:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert sum(e.name == "aten::_local_scalar_dense" for e in prof.events()) == 0
    assert (out[1] == 0).all() and torch.isfinite(out).all()
    reference, _ = te.scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, reference, atol=1e-5, rtol=1e-5)
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
    assert (q.grad[1] == 0).all() and (k.grad[1] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_a_fully_blocked_query_gets_zero_output_and_finite_gradients(dtype):
    """A query with every key blocked: a naive −inf fill makes its softmax row NaN (the first
    assert shows this row is such a case); ours gives zero weights, a zero output and finite
    gradients, in float16 too (where a −1e9 fill would overflow)."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 3, 4, dtype=dtype, requires_grad=True) for _ in range(3))
    mask = torch.ones(1, 3, 3, dtype=torch.bool)
    mask[0, 1] = False  # query 1 may attend to no key
    naive = (q @ k.transpose(-2, -1)).masked_fill(~mask, float("-inf")).softmax(-1)
    assert torch.isnan(naive[0, 1]).all() and not torch.isnan(naive[0, 0]).any()
    out, weights = te.scaled_dot_product_attention(q, k, v, mask)
    assert (weights[0, 1] == 0).all() and (out[0, 1] == 0).all()
    out.float().sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert (q.grad[0, 1] == 0).all()  # the blocked query's output does not depend on it
    assert (q.grad[0, 0] != 0).any()


def _torch_mha(d_model, n_heads, bias=True):
    return nn.MultiheadAttention(d_model, n_heads, bias=bias, batch_first=True)


@pytest.mark.parametrize("d_model,n_heads,lq,lk", [(16, 4, 5, 7), (32, 8, 6, 6), (24, 3, 1, 9), (8, 1, 4, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_multi_head_matches_pytorch(d_model, n_heads, lq, lk, bias):
    torch.manual_seed(d_model + lq)
    theirs = _torch_mha(d_model, n_heads, bias).eval()
    ours = te.copy_weights_from_torch(te.MultiHeadAttention(d_model, n_heads, bias=bias), theirs).eval()
    q, kv = torch.randn(3, lq, d_model), torch.randn(3, lk, d_model)
    keep = torch.ones(3, lk, dtype=torch.bool)
    keep[0, -2:] = False
    keep[2, -1:] = False
    out, weights = ours(q, kv, kv, keep[:, None, None, :])
    ref, ref_weights = theirs(q, kv, kv, key_padding_mask=~keep, average_attn_weights=False)
    assert weights.shape == (3, n_heads, lq, lk)
    assert (out - ref).abs().max() < 1e-5
    assert (weights - ref_weights).abs().max() < 1e-5
    fast, none = ours(q, kv, kv, keep[:, None, None, :], need_weights=False)
    assert none is None and (fast - ref).abs().max() < 1e-5


def test_multi_head_causal_mask_matches_pytorch():
    torch.manual_seed(1)
    theirs = _torch_mha(16, 4).eval()
    ours = te.copy_weights_from_torch(te.MultiHeadAttention(16, 4), theirs).eval()
    x = torch.randn(2, 6, 16)
    out, _ = ours(x, x, x, te.causal_mask(6))
    ref, _ = theirs(x, x, x, attn_mask=~te.causal_mask(6)[0, 0])
    assert (out - ref).abs().max() < 1e-5


def test_same_parameter_count_as_one_wide_head():
    assert te.count_parameters(te.MultiHeadAttention(64, 8)) == te.count_parameters(te.MultiHeadAttention(64, 1))


def test_record_attention_collects_every_layer():
    torch.manual_seed(0)
    model = te.Transformer(te.TransformerConfig(11, 13, d_model=16, n_heads=2, d_ff=32, n_layers=2)).eval()
    src, tgt = torch.randint(1, 11, (2, 5)), torch.randint(1, 13, (2, 4))
    with te.record_attention(model) as maps:
        logits = model(src, tgt)
    assert set(maps) == {
        "encoder.layers.0.self_attn", "encoder.layers.1.self_attn",
        "decoder.layers.0.self_attn", "decoder.layers.0.cross_attn",
        "decoder.layers.1.self_attn", "decoder.layers.1.cross_attn",
    }
    assert maps["decoder.layers.1.cross_attn"].shape == (2, 2, 4, 5)
    assert torch.allclose(maps["decoder.layers.0.self_attn"].sum(-1), torch.ones(2, 2, 4))
    assert maps["decoder.layers.0.self_attn"][..., 0, 1:].abs().max() == 0  # causal
    assert (logits - model(src, tgt)).abs().max() < 1e-5  # recording does not change the result
    assert all(m._recorder is None for m in model.modules() if isinstance(m, te.MultiHeadAttention))


@pytest.mark.parametrize("need_weights", [True, False], ids=["explicit", "fused"])
def test_attention_dropout_fires_on_both_paths(need_weights):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4, dropout=0.5)
    x = torch.randn(2, 6, 16)
    clean = without_dropout(mha).eval()
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


def test_the_key_bias_changes_nothing_so_it_is_zero_and_not_trained():
    """Softmax ignores the shift q · b_K that the key bias adds to all the scores of a query."""
    from transformer_edu import MultiHeadAttention

    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4)
    assert not mha.w_k.bias.requires_grad and (mha.w_k.bias == 0).all()
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    before = mha(x, memory, memory)[0]
    with torch.no_grad():
        mha.w_k.bias.normal_()  # any key bias at all: the same output
        mha.w_q.bias.normal_()
    shifted = mha(x, memory, memory)[0]
    with torch.no_grad():
        mha.w_k.bias.zero_()
    torch.testing.assert_close(shifted, mha(x, memory, memory)[0], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(before, shifted)  # the query bias, unlike the key bias, does change it
