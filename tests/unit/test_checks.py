"""Tests of transformer_edu.checks: correct code passes, each known mistake is named.

Every buggy implementation below is written the way a learner might write it,
and commits exactly one mistake; the test asserts that the check diagnoses it.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import transformer_edu as te
from transformer_edu import checks
from transformer_edu.checks import CheckFailed

# ---------------------------------------------------------------- attention


def make_attention(scale="sqrt", softmax_dim=-1, mask_mode="ok", fill=None, matmul=torch.matmul,
                   return_weights=False, output="sum"):
    """A from-scratch attention with optional deliberate mistakes."""

    def attention(query, key, value, mask=None):
        d_k = query.size(-1)
        scores = matmul(query, key.transpose(-2, -1))
        scores = scores / {"sqrt": math.sqrt(d_k), "none": 1.0, "d_k": d_k}[scale]
        low = torch.finfo(scores.dtype).min if fill is None else fill
        if mask is not None and mask_mode == "ok":
            scores = scores.masked_fill(~mask, low)
        elif mask is not None and mask_mode == "reversed":
            scores = scores.masked_fill(mask, low)
        weights = torch.softmax(scores, dim=softmax_dim)
        if mask is not None and mask_mode == "after_softmax":
            weights = weights * mask
        out = weights if output == "weights" else matmul(weights, value)
        return (out, weights) if return_weights else out

    return attention


def test_a_correct_attention_passes(capsys):
    assert checks.check_attention(make_attention()) is True
    assert "✓ check_attention" in capsys.readouterr().out


def test_the_package_attention_and_pytorchs_pass():
    assert checks.check_attention(te.scaled_dot_product_attention)
    assert checks.check_attention(torch.nn.functional.scaled_dot_product_attention)  # mask as attn_mask
    assert checks.check_attention(make_attention(fill=-1e4, return_weights=True))  # a fill that fits float16


@pytest.mark.parametrize(
    "buggy, mistake, phrase",
    [
        (make_attention(scale="none"), "no_scaling", "not divided by √d_k"),
        (make_attention(scale="d_k"), "scale_by_dk", "divided by d_k instead of √d_k"),
        (make_attention(softmax_dim=-2), "softmax_wrong_axis", "softmax runs over the wrong axis"),
        (make_attention(mask_mode="reversed"), "mask_reversed", "polarity is reversed"),
        (make_attention(mask_mode="ignored"), "mask_ignored", "mask is not applied"),
        (make_attention(mask_mode="after_softmax"), "mask_after_softmax", "after the softmax"),
        (make_attention(output="weights"), "returns_weights", "instead of the weighted sum"),
        (make_attention(matmul=torch.mm), "torch_mm", "torch.mm"),
        (make_attention(matmul=torch.bmm), "torch_mm", "use torch.matmul or the @ operator"),
        (make_attention(fill=float("-inf")), "nan_on_blocked_row", "-inf"),
        (make_attention(fill=-1e9), "fill_overflow", "-1e9 does not fit in float16"),
    ],
)
def test_attention_mistakes_are_named(buggy, mistake, phrase):
    with pytest.raises(CheckFailed) as failure:
        checks.check_attention(buggy)
    assert failure.value.mistake == mistake
    assert phrase in str(failure.value)


def test_check_failed_is_an_assertion_error():
    assert issubclass(CheckFailed, AssertionError)


def test_attention_without_a_mask_parameter_is_told_the_signature():
    def no_mask(query, key, value):
        return make_attention()(query, key, value)

    with pytest.raises(CheckFailed, match=r"fn\(query, key, value, mask=None\)"):
        checks.check_attention(no_mask)


def test_wrong_returned_weights_are_reported():
    def bad_weights(query, key, value, mask=None):
        out, weights = make_attention(return_weights=True)(query, key, value, mask)
        return out, weights * 2

    with pytest.raises(CheckFailed) as failure:
        checks.check_attention(bad_weights)
    assert failure.value.mistake == "weights"


def test_an_unknown_error_says_so_with_the_largest_difference():
    def off(query, key, value, mask=None):
        return make_attention()(query, key, value, mask) + 0.1

    with pytest.raises(CheckFailed, match="largest difference") as failure:
        checks.check_attention(off)
    assert failure.value.mistake == "unknown"


# ---------------------------------------------------------------- multi-head attention


def make_mha(split="ok", merge="ok", scale="d_k", output_projection=True, mask_mode="ok",
             softmax_dim=-1, merge_with_view=False, names=("w_q", "w_k", "w_v", "w_o")):
    """A from-scratch multi-head attention class with optional deliberate mistakes."""

    class MyMHA(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
            for name in names:
                setattr(self, name, nn.Linear(d_model, d_model))

        def split_heads(self, x):
            b, length, _ = x.shape
            if split == "view_direct":
                return x.view(b, self.n_heads, length, self.d_k)  # (B, H, L, d_k), wrong
            if split == "none":
                return x.unsqueeze(1)  # (B, 1, L, D)
            return x.view(b, length, self.n_heads, self.d_k).transpose(1, 2)  # (B, H, L, d_k)

        def forward(self, query, key, value, mask=None):
            b, lq, _ = query.shape
            w_q, w_k, w_v = (getattr(self, name) for name in names[:3])
            q, k, v = self.split_heads(w_q(query)), self.split_heads(w_k(key)), self.split_heads(w_v(value))
            d = {"d_k": self.d_k, "d_model": self.d_model}[scale]
            scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (B, H, Lq, Lk)
            if mask is not None and mask_mode == "ok":
                scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
            elif mask is not None and mask_mode == "reversed":
                scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
            weights = scores.softmax(dim=softmax_dim)
            out = weights @ v  # (B, H, Lq, d_k)
            if merge == "view_direct":
                out = out.reshape(b, lq, self.d_model)  # wrong: no transpose back
            elif merge_with_view:
                out = out.transpose(1, 2).view(b, lq, self.d_model)  # not contiguous: raises
            else:
                out = out.transpose(1, 2).reshape(b, lq, self.d_model)  # (B, Lq, D)
            if output_projection and len(names) == 4:
                out = getattr(self, names[3])(out)
            return out, weights

    return MyMHA


def test_a_correct_multi_head_class_passes(capsys):
    assert checks.check_multi_head(make_mha()) is True
    assert "✓ check_multi_head" in capsys.readouterr().out


def test_the_package_class_passes():
    assert checks.check_multi_head(te.MultiHeadAttention)


def test_a_class_with_load_from_passes():
    class Renamed(make_mha(names=("q", "k", "v", "o"))):
        def load_from(self, ref):
            self.load_state_dict(
                {f"{a}.{p}": getattr(getattr(ref, b), p) for a, b in zip("qkvo", ("w_q", "w_k", "w_v", "w_o"))
                 for p in ("weight", "bias")},
                strict=False,
            )

    assert checks.check_multi_head(Renamed)


def test_check_multi_head_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    checks.check_multi_head(te.MultiHeadAttention)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize(
    "buggy, mistake, phrase",
    [
        (make_mha(merge="view_direct"), "merge_without_transpose", "not transposed back before merging"),
        (make_mha(split="view_direct"), "split_without_transpose", "wrong head split"),
        (make_mha(split="view_direct", merge="view_direct"), "split_and_merge_without_transpose", "wrong head split and merge"),
        (make_mha(output_projection=False), "missing_output_projection", "output projection W_O is missing"),
        (make_mha(names=("w_q", "w_k", "w_v")), "missing_output_projection", "output projection W_O is missing"),
        (make_mha(scale="d_model"), "scale_by_sqrt_d_model", "√d_model instead of √d_k"),
        (make_mha(split="none", scale="d_model"), "no_heads", "never split"),
        (make_mha(mask_mode="reversed"), "mask_reversed", "polarity is reversed"),
        (make_mha(mask_mode="ignored"), "mask_ignored", "mask is not applied"),
        (make_mha(softmax_dim=-2), "softmax_wrong_axis", "wrong axis"),
        (make_mha(merge_with_view=True), "view_not_contiguous", ".view() after .transpose()"),
        (make_mha(names=("q", "k", "v", "o")), "contract", "load_from(ref)"),
    ],
)
def test_multi_head_mistakes_are_named(buggy, mistake, phrase):
    with pytest.raises(CheckFailed) as failure:
        checks.check_multi_head(buggy)
    assert failure.value.mistake == mistake
    assert phrase in str(failure.value)


def test_multi_head_interleaved_split_is_named():
    class Interleaved(make_mha()):
        def split_heads(self, x):
            b, length, _ = x.shape
            return x.view(b, length, self.d_k, self.n_heads).permute(0, 3, 1, 2)  # (B, H, L, d_k), wrong

        def forward(self, query, key, value, mask=None):
            b, lq, _ = query.shape
            q, k, v = (self.split_heads(f(x)) for f, x in ((self.w_q, query), (self.w_k, key), (self.w_v, value)))
            out, _ = te.scaled_dot_product_attention(q, k, v, mask)  # (B, H, Lq, d_k)
            return self.w_o(out.permute(0, 2, 3, 1).reshape(b, lq, self.d_model))

    with pytest.raises(CheckFailed) as failure:
        checks.check_multi_head(Interleaved)
    assert failure.value.mistake == "split_interleaved"


# ---------------------------------------------------------------- masks


def test_correct_masks_pass():
    assert checks.check_padding_mask(lambda tokens, pad_id: (tokens != pad_id)[:, None, None, :])
    assert checks.check_padding_mask(te.padding_mask)
    assert checks.check_causal_mask(lambda size: torch.ones(size, size, dtype=torch.bool).tril())
    assert checks.check_causal_mask(te.causal_mask)


@pytest.mark.parametrize(
    "buggy, mistake",
    [
        (lambda tokens, pad_id: (tokens == pad_id)[:, None, None, :], "mask_reversed"),
        (lambda tokens, pad_id: (tokens != pad_id)[:, None, None, :].float(), "not_boolean"),
        (lambda tokens, pad_id: tokens != pad_id, "wrong_shape"),
        (lambda tokens, pad_id: (tokens != pad_id)[:, None, :, None], "masks_queries"),
        (lambda tokens, pad_id: (tokens != 0)[:, None, None, :], "ignores_pad_id"),
    ],
)
def test_padding_mask_mistakes_are_named(buggy, mistake):
    with pytest.raises(CheckFailed) as failure:
        checks.check_padding_mask(buggy)
    assert failure.value.mistake == mistake


@pytest.mark.parametrize(
    "buggy, mistake, phrase",
    [
        (lambda size: torch.ones(size, size, dtype=torch.bool).triu(1), "mask_reversed", "polarity is reversed"),
        (lambda size: torch.ones(size, size, dtype=torch.bool).tril(-1), "diagonal_blocked", "cannot see itself"),
        (lambda size: torch.ones(size, size, dtype=torch.bool).triu(), "transposed", "transposed"),
        (lambda size: torch.ones(size, size).tril(), "not_boolean", "not boolean"),
        (lambda size: torch.ones(size, size, dtype=torch.bool).tril()[None], "wrong_shape", "broadcast"),
    ],
)
def test_causal_mask_mistakes_are_named(buggy, mistake, phrase):
    with pytest.raises(CheckFailed) as failure:
        checks.check_causal_mask(buggy)
    assert failure.value.mistake == mistake
    assert phrase in str(failure.value)


# ---------------------------------------------------------------- positional encoding


def make_table(swap=False, interleave=True, two_i_factor=1.0, sign=-1.0, start=0):
    """A from-scratch sinusoidal table with optional deliberate mistakes."""

    def table(max_len, d_model):
        position = torch.arange(start, start + max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
        two_i = torch.arange(0, d_model, 2, dtype=torch.float32) * two_i_factor  # (D/2,)
        frequency = torch.exp(sign * two_i * math.log(10000.0) / d_model)
        sin, cos = torch.sin(position * frequency), torch.cos(position * frequency)
        if swap:
            sin, cos = cos, sin
        if not interleave:
            return torch.cat([sin, cos], dim=1)
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2], pe[:, 1::2] = sin, cos
        return pe

    return table


def test_a_correct_table_passes(capsys):
    assert checks.check_positional_encoding(make_table())
    assert checks.check_positional_encoding(te.sinusoidal_table)
    assert "✓ check_positional_encoding" in capsys.readouterr().out


@pytest.mark.parametrize(
    "buggy, mistake, phrase",
    [
        (make_table(swap=True), "sin_cos_swapped", "swapped"),
        (make_table(interleave=False), "not_interleaved", "first half"),
        (make_table(two_i_factor=0.5), "exponent_without_2", "exponent is off"),
        (make_table(two_i_factor=2.0), "exponent_doubled", "exponent is off"),
        (make_table(sign=1.0), "exponent_sign", "instead of pos / 10000"),
        (make_table(start=1), "positions_from_one", "start at 1"),
        (lambda max_len, d_model: make_table()(max_len, d_model).T, "transposed", "transposed"),
    ],
)
def test_positional_encoding_mistakes_are_named(buggy, mistake, phrase):
    with pytest.raises(CheckFailed) as failure:
        checks.check_positional_encoding(buggy)
    assert failure.value.mistake == mistake
    assert phrase in str(failure.value)


# ---------------------------------------------------------------- layer norm


def make_layer_norm(variance="biased", eps_place="inside", center=True, affine=True, dim=-1, names=("gamma", "beta")):
    """A from-scratch layer norm class with optional deliberate mistakes."""

    class MyLayerNorm(nn.Module):
        def __init__(self, d_model, eps=1e-5):
            super().__init__()
            self.eps = eps
            setattr(self, names[0], nn.Parameter(torch.ones(d_model)))
            setattr(self, names[1], nn.Parameter(torch.zeros(d_model)))

        def forward(self, x):
            mean = x.mean(dim=dim, keepdim=True)
            var = x.var(dim=dim, unbiased=variance == "unbiased", keepdim=True)
            centred = x - mean if center else x
            if eps_place == "inside":
                normalised = centred / torch.sqrt(var + self.eps)
            else:
                normalised = centred / (var.sqrt() + self.eps)
            if not affine:
                return normalised
            return getattr(self, names[0]) * normalised + getattr(self, names[1])

    return MyLayerNorm


def test_a_correct_layer_norm_passes(capsys):
    assert checks.check_layer_norm(make_layer_norm())
    assert checks.check_layer_norm(make_layer_norm(names=("weight", "bias")))
    assert checks.check_layer_norm(te.LayerNorm)
    assert checks.check_layer_norm(nn.LayerNorm)
    assert "✓ check_layer_norm" in capsys.readouterr().out


@pytest.mark.parametrize(
    "buggy, mistake, phrase",
    [
        (make_layer_norm(eps_place="outside"), "eps_outside_sqrt", "outside the square root"),
        (make_layer_norm(variance="unbiased"), "unbiased_variance", "unbiased"),
        (make_layer_norm(variance="unbiased", eps_place="outside"), "unbiased_std_plus_eps", "unbiased std plus ε"),
        (make_layer_norm(center=False), "no_centering", "mean is not subtracted"),
        (make_layer_norm(affine=False), "no_affine", "γ and shift β are not applied"),
        (make_layer_norm(dim=-2), "wrong_axis", "wrong axis"),
    ],
)
def test_layer_norm_mistakes_are_named(buggy, mistake, phrase):
    with pytest.raises(CheckFailed) as failure:
        checks.check_layer_norm(buggy)
    assert failure.value.mistake == mistake
    assert phrase in str(failure.value)
