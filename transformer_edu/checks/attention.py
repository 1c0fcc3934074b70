"""Checks of Chapter 1: scaled dot-product attention, the padding mask and the causal mask."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..attention import scaled_dot_product_attention
from ..masks import causal_mask, padding_mask
from .common import (
    CheckFailed,
    Mistake,
    accepts_mask,
    call,
    close,
    diagnose,
    passed,
    split_output,
)

__all__ = ["check_attention", "check_causal_mask", "check_padding_mask"]


_ATTENTION_MISTAKES = {
    "no_scaling": Mistake(
        "no_scaling",
        "the scores are not divided by √d_k (softmax(QKᵀ)V)",
        "divide QKᵀ by math.sqrt(d_k), where d_k = query.shape[-1]",
    ),
    "scale_by_dk": Mistake(
        "scale_by_dk",
        "the scores are divided by d_k instead of √d_k",
        "divide by math.sqrt(d_k), not by d_k",
    ),
    "softmax_wrong_axis": Mistake(
        "softmax_wrong_axis",
        "the softmax runs over the wrong axis (the queries, not the keys)",
        "use softmax(dim=-1), so each query's weights over the keys sum to 1",
    ),
    "mask_reversed": Mistake(
        "mask_reversed",
        "the mask's polarity is reversed: you block where the mask is True",
        "True means *may attend*; fill the scores where the mask is False: scores.masked_fill(~mask, …)",
    ),
    "mask_ignored": Mistake(
        "mask_ignored",
        "the mask is not applied",
        "fill the blocked scores (mask == False) with a very negative number before the softmax",
    ),
    "mask_after_softmax": Mistake(
        "mask_after_softmax",
        "the mask is applied after the softmax, so the remaining weights no longer sum to 1",
        "mask the scores before the softmax",
    ),
    "returns_weights": Mistake(
        "returns_weights",
        "the function returns the attention weights instead of the weighted sum of the values",
        "multiply the weights by V: output = weights @ value",
    ),
}


def _reference_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, mistake: str | None = None) -> Tensor:
    """Attention, optionally committing one of the named mistakes."""
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1)
    scale = {"no_scaling": 1.0, "scale_by_dk": float(d_k)}.get(mistake, math.sqrt(d_k))
    scores = scores / scale
    low = torch.finfo(scores.dtype).min
    if mask is not None and mistake == "mask_reversed":
        scores = scores.masked_fill(mask, low)
    elif mask is not None and mistake not in ("mask_ignored", "mask_after_softmax"):
        scores = scores.masked_fill(~mask, low)
    weights = scores.softmax(dim=-2 if mistake == "softmax_wrong_axis" else -1)
    if mask is not None and mistake == "mask_after_softmax":
        weights = weights * mask
    if mistake == "returns_weights":
        return weights
    return weights @ v


def _attention_cases(generator: torch.Generator) -> list[tuple[str, Tensor, Tensor, Tensor, Tensor | None]]:
    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=generator)

    cases = []
    for batch, heads, lq, lk, d_k in ((2, 0, 4, 4, 8), (2, 3, 5, 5, 16), (1, 2, 3, 6, 64)):
        lead = (batch,) if heads == 0 else (batch, heads)
        q, k, v = randn(*lead, lq, d_k), randn(*lead, lk, d_k), randn(*lead, lk, d_k)
        shape = "×".join(map(str, lead + (lq, d_k)))
        cases.append((f"queries {shape}, {lk} keys, no mask", q, k, v, None))
        lengths = torch.tensor([lk - 1 - i % 2 for i in range(batch)])
        pad = torch.arange(lk)[None, :] < lengths[:, None]  # (B, Lk): True for real keys
        pad = pad[:, None, :] if heads == 0 else pad[:, None, None, :]
        cases.append((f"queries {shape}, {lk} keys, padding mask of shape {tuple(pad.shape)}", q, k, v, pad))
        if lq == lk:
            causal = torch.ones(lq, lk, dtype=torch.bool).tril()
            cases.append((f"queries {shape}, causal mask of shape {tuple(causal.shape)}", q, k, v, causal))
    return cases


def check_attention(fn: Callable, seed: int = 0) -> bool:
    """Check your scaled dot-product attention against the reference.

    Args:
        fn: your function ``fn(query, key, value, mask=None)`` returning the
            output (…, Lq, d_v) or ``(output, weights)``; ``mask`` is boolean
            with ``True`` = may attend, broadcastable to the scores (…, Lq, Lk).
        seed: seed of the random inputs.

    Returns:
        ``True`` when every case matches (and prints a line).

    Raises:
        CheckFailed: naming the likely mistake, e.g. ``no_scaling``,
            ``scale_by_dk``, ``softmax_wrong_axis``, ``mask_reversed``,
            ``mask_ignored``, ``mask_after_softmax``, ``returns_weights``,
            ``torch_mm``, ``nan_on_blocked_row``, ``fill_overflow``.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a function fn(query, key, value, mask=None), got {type(fn).__name__}")
    generator = torch.Generator().manual_seed(seed)
    takes_mask = accepts_mask(fn)
    cases = _attention_cases(generator)
    for case, q, k, v, mask in cases:
        if mask is not None and not takes_mask:
            raise CheckFailed(
                "your function takes no mask argument; give it the signature fn(query, key, value, mask=None)",
                "contract",
            )
        args = (q, k, v) if mask is None else (q, k, v, mask)
        output, weights = split_output(call("your attention", fn, *args), "your attention")
        expected = _reference_attention(q, k, v, mask)
        if not close(output, expected, atol=1e-5):
            names = [n for n in _ATTENTION_MISTAKES if mask is not None or not n.startswith("mask")]
            variants = [(_ATTENTION_MISTAKES[n], _reference_attention(q, k, v, mask, n)) for n in names]
            diagnose("your attention's output", case, output, expected, variants, atol=1e-5)
        if weights is not None:
            expected_weights = scaled_dot_product_attention(q, k, v, mask)[1]
            if weights.shape == expected_weights.shape and not close(weights, expected_weights, atol=1e-5):
                raise CheckFailed(
                    f"your attention's output is right but the weights it returns differ on {case}; "
                    "return the softmax of the (masked, scaled) scores",
                    "weights",
                )
    _check_blocked_row(fn)
    _check_float16(fn)
    return passed("check_attention", f"your attention matches the reference on {len(cases) + 2} cases.")


def _check_blocked_row(fn: Callable) -> None:
    """A query that may attend to nothing must not turn into NaN."""
    q = k = v = torch.randn(1, 3, 4, generator=torch.Generator().manual_seed(1))
    mask = torch.tensor([[[True, True, False], [True, True, False], [False, False, False]]])
    output, _ = split_output(call("your attention", fn, q, k, v, mask), "your attention")
    if torch.isnan(output).any():
        raise CheckFailed(
            "your attention returns NaN for a query whose keys are all blocked (the last row of the mask "
            "is all False).\nLikely mistake: the scores are filled with -inf, and softmax of a row of -inf "
            "is 0/0 = NaN.\nFix: fill with torch.finfo(scores.dtype).min (and, like the package, set the "
            "weights of fully blocked rows to 0).",
            "nan_on_blocked_row",
        )


def _check_float16(fn: Callable) -> None:
    """The function must work in half precision (the scores' fill value must fit)."""
    generator = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 2, 4, 8, generator=generator).half() for _ in range(3))
    mask = torch.ones(2, 1, 1, 4, dtype=torch.bool)
    mask[1, ..., -1] = False
    output, _ = split_output(call("your attention in float16", fn, q, k, v, mask), "your attention")
    expected = _reference_attention(q.float(), k.float(), v.float(), mask)
    if not close(output, expected, atol=2e-2, rtol=2e-2):
        raise CheckFailed(
            "your attention is right in float32 but wrong in float16 (masked half-precision inputs).\n"
            "Likely mistake: a fill value that does not fit float16.\nFix: fill with torch.finfo(scores.dtype).min.",
            "float16",
        )


def _as_mask(what: str, mask, case: str) -> Tensor:
    if not isinstance(mask, Tensor):
        raise CheckFailed(f"{what} returned {type(mask).__name__} on {case}; expected a tensor", "contract")
    if mask.dtype != torch.bool:
        raise CheckFailed(
            f"{what} returned dtype {mask.dtype} on {case}.\nLikely mistake: the mask is not boolean.\n"
            "Fix: return a torch.bool tensor, True where attention is allowed (e.g. tokens != pad_id).",
            "not_boolean",
        )
    return mask


def check_padding_mask(fn: Callable, seed: int = 0) -> bool:
    """Check your padding mask against :func:`~transformer_edu.padding_mask`.

    Args:
        fn: ``fn(tokens, pad_id)`` with tokens (B, L), returning a boolean mask
            (B, 1, 1, L), ``True`` for real tokens (keys that may be attended).
        seed: seed of the random token ids.

    Raises:
        CheckFailed: e.g. ``mask_reversed``, ``not_boolean``, ``wrong_shape``,
            ``masks_queries``, ``ignores_pad_id``.
    """
    generator = torch.Generator().manual_seed(seed)
    count = 0
    for batch, length, pad_id in ((2, 5, 0), (3, 7, 0), (2, 6, 3)):
        tokens = torch.randint(4, 20, (batch, length), generator=generator)
        for b in range(batch):
            tokens[b, length - 1 - b:] = pad_id  # sequence b ends with b + 1 pads
        case = f"tokens of shape {(batch, length)} with pad_id={pad_id}"
        mask = _as_mask("your padding mask", call("your padding mask", fn, tokens, pad_id), case)
        expected = padding_mask(tokens, pad_id)  # (B, 1, 1, L)
        if mask.shape == expected.shape and torch.equal(mask, expected):
            count += 1
            continue
        if mask.shape == expected.shape and torch.equal(mask, ~expected):
            raise CheckFailed(
                f"your padding mask differs on {case}.\nLikely mistake: the polarity is reversed (True on the pads)."
                "\nFix: True must mean 'may attend', i.e. a real token: tokens != pad_id.",
                "mask_reversed",
            )
        if pad_id != 0 and mask.shape == expected.shape and torch.equal(mask, padding_mask(tokens, 0)):
            raise CheckFailed(
                f"your padding mask differs on {case}.\nLikely mistake: pad_id is ignored (0 is hard-coded).\n"
                "Fix: compare with the pad_id argument.",
                "ignores_pad_id",
            )
        if mask.shape == (batch, 1, length, 1):
            raise CheckFailed(
                f"your padding mask has shape {tuple(mask.shape)} on {case}.\nLikely mistake: it blocks the pad "
                "*queries* (rows) instead of the pad *keys* (columns).\nFix: put L last: (B, 1, 1, L).",
                "masks_queries",
            )
        if mask.shape != expected.shape:
            raise CheckFailed(
                f"your padding mask has shape {tuple(mask.shape)} on {case}, expected {tuple(expected.shape)} "
                "(B, 1, 1, L), which broadcasts over heads and queries against the scores (B, H, Lq, Lk).\n"
                "Fix: (tokens != pad_id)[:, None, None, :].",
                "wrong_shape",
            )
        raise CheckFailed(f"your padding mask has the right shape but wrong values on {case}", "unknown")
    return passed("check_padding_mask", f"your padding mask matches the reference on {count} cases.")


def check_causal_mask(fn: Callable) -> bool:
    """Check your look-ahead mask against :func:`~transformer_edu.causal_mask`.

    Args:
        fn: ``fn(size)`` returning a boolean (L, L) or (1, 1, L, L) mask,
            ``True`` on and below the diagonal (position i may see 0 … i).

    Raises:
        CheckFailed: e.g. ``mask_reversed``, ``diagonal_blocked``, ``transposed``,
            ``not_boolean``, ``wrong_shape``.
    """
    for size in (4, 9, 1):
        case = f"size={size}"
        mask = _as_mask("your causal mask", call("your causal mask", fn, size), case)
        expected = causal_mask(size)[0, 0]  # (L, L)
        if mask.shape not in ((size, size), (1, 1, size, size)):
            raise CheckFailed(
                f"your causal mask has shape {tuple(mask.shape)} on {case}; expected ({size}, {size}) or "
                f"(1, 1, {size}, {size}), which broadcast against the scores (B, H, L, L).",
                "wrong_shape",
            )
        square = mask.reshape(size, size)
        if torch.equal(square, expected):
            continue
        ones = torch.ones(size, size, dtype=torch.bool)
        known = (
            (~expected, "mask_reversed", "the polarity is reversed: True marks the future (blocked) positions",
             "True must mean 'may attend': torch.ones(L, L, dtype=torch.bool).tril()"),
            (ones.tril(-1), "diagonal_blocked", "the diagonal is blocked, so a token cannot see itself",
             "keep the diagonal: .tril() (diagonal=0), not .tril(-1)"),
            (ones.triu(), "transposed", "the mask is transposed: each token sees the future, not the past",
             "use the lower triangle: .tril()"),
        )
        for wrong, name, description, fix in known:
            if torch.equal(square, wrong):
                raise CheckFailed(
                    f"your causal mask differs on {case}.\nLikely mistake: {description}.\nFix: {fix}.", name
                )
        raise CheckFailed(f"your causal mask differs from the lower triangle on {case}", "unknown")
    return passed("check_causal_mask", "your causal mask matches the reference for sizes 4, 9 and 1.")
