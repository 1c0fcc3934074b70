"""Checks for the reader's own implementations, with a diagnosis when they fail.

Each chapter asks you to write a piece from scratch. Hand it to the matching
check and it is compared with the package's reference on random inputs of
several sizes, with and without masks::

    from transformer_edu import checks

    checks.check_attention(my_attention)          # Chapter 1
    checks.check_multi_head(MyMultiHeadAttention)  # Chapter 2

On success a check prints one line and returns ``True``. On failure it raises
:class:`CheckFailed` (an ``AssertionError``) whose message names the likely
mistake. The diagnosis works by running *reference versions that commit a
known mistake* (no √d_k, softmax over the wrong axis, reversed mask, …) and
telling you which one your output matches. The mistake's short name is in
``CheckFailed.mistake``.

Contracts (the shapes use the book's legend: B batch, H heads, L length,
D = d_model, d_k = D / H; masks are boolean with ``True`` = may attend):

- :func:`check_attention`: ``fn(query, key, value, mask=None)`` returns the
  output, or ``(output, weights)``. Inputs (B, L, d_k) and (B, H, L, d_k).
- :func:`check_multi_head`: ``cls(d_model, n_heads)`` builds an
  ``nn.Module`` whose ``forward(query, key, value, mask=None)`` maps (B, L, D)
  inputs to (B, Lq, D), or to ``(output, weights)`` with weights
  (B, H, Lq, Lk). To compare, the check copies the reference's weights into
  your layer: give it four ``nn.Linear(d_model, d_model)`` attributes named
  ``w_q``, ``w_k``, ``w_v``, ``w_o`` (the package's names), or a method
  ``load_from(ref)`` that copies them from a
  :class:`~transformer_edu.MultiHeadAttention` ``ref`` yourself.
- :func:`check_padding_mask`: ``fn(tokens, pad_id)`` returns a (B, 1, 1, L) mask.
- :func:`check_causal_mask`: ``fn(size)`` returns an (L, L) or (1, 1, L, L) mask.
- :func:`check_positional_encoding`: ``fn(max_len, d_model)`` returns the
  (max_len, d_model) sinusoidal table.
- :func:`check_layer_norm`: ``cls(d_model)`` builds a module normalising the
  last dimension; its scale and shift are found as ``gamma`` / ``beta``
  (or ``weight`` / ``bias``, ``a_2`` / ``b_2``), its ε as ``eps``.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import MultiHeadAttention, scaled_dot_product_attention
from .masks import causal_mask, padding_mask
from .positional import sinusoidal_table

__all__ = [
    "CheckFailed",
    "check_attention",
    "check_multi_head",
    "check_padding_mask",
    "check_causal_mask",
    "check_positional_encoding",
    "check_layer_norm",
]


class CheckFailed(AssertionError):
    """Your implementation differs from the reference.

    Attributes:
        mistake: short name of the diagnosed mistake (e.g. ``"no_scaling"``),
            ``"unknown"`` when no known mistake matches, or ``"error"`` /
            ``"shape"`` / ``"contract"`` when the call itself went wrong.
    """

    def __init__(self, message: str, mistake: str = "unknown") -> None:
        super().__init__(message)
        self.mistake = mistake


@dataclass(frozen=True)
class _Mistake:
    name: str  # short key, CheckFailed.mistake
    description: str  # what the variant does wrong, in words
    fix: str  # what to change


def _close(actual: Tensor, expected: Tensor, atol: float, rtol: float = 1e-4) -> bool:
    if actual.shape != expected.shape:
        return False
    both_nan = torch.isnan(actual) & torch.isnan(expected)
    return bool(torch.allclose(actual.masked_fill(both_nan, 0), expected.masked_fill(both_nan, 0), atol=atol, rtol=rtol))


def _diagnose(
    what: str,
    case: str,
    actual: Tensor,
    expected: Tensor,
    variants: list[tuple[_Mistake, Tensor]],
    atol: float,
) -> None:
    """Raise CheckFailed naming the first variant that ``actual`` matches."""
    for mistake, output in variants:
        if _close(actual, output, atol):
            raise CheckFailed(
                f"{what} differs from the reference on {case}.\n"
                f"Likely mistake: {mistake.description}.\nFix: {mistake.fix}.",
                mistake.name,
            )
    if actual.shape != expected.shape:
        raise CheckFailed(
            f"{what} has shape {tuple(actual.shape)} on {case}, expected {tuple(expected.shape)}.",
            "shape",
        )
    if torch.isnan(actual).any() and not torch.isnan(expected).any():
        raise CheckFailed(f"{what} contains NaN on {case}; the reference has none.", "nan")
    gap = (actual - expected).abs().nan_to_num(float("inf")).max().item()
    raise CheckFailed(
        f"{what} differs from the reference on {case} (largest difference {gap:.3g}), "
        "and matches none of the mistakes this check knows. Compare the two step by step on a tiny input.",
        "unknown",
    )


def _call(what: str, fn: Callable, *args, **kwargs):
    """Call the reader's code, turning its exceptions into CheckFailed with a hint."""
    try:
        return fn(*args, **kwargs)
    except CheckFailed:
        raise
    except Exception as error:  # the reader's code may raise anything
        text = f"{type(error).__name__}: {error}"
        hint = ""
        if "must be a matrix" in str(error) or "must be a 3D tensor" in str(error):
            hint = (
                "\nLikely mistake: torch.mm (or torch.bmm) only multiplies 2-D (3-D) tensors; batched "
                "multi-head tensors are 4-D.\nFix: use torch.matmul or the @ operator."
            )
            raise CheckFailed(f"{what} raised {text}{hint}", "torch_mm") from error
        if "without overflow" in str(error):
            hint = (
                "\nLikely mistake: a large negative literal such as -1e9 does not fit in float16 "
                "(its minimum is -65504).\nFix: fill with torch.finfo(scores.dtype).min."
            )
            raise CheckFailed(f"{what} raised {text}{hint}", "fill_overflow") from error
        if "view size is not compatible" in str(error):
            hint = (
                "\nLikely mistake: .view() after .transpose(); the transposed tensor is not contiguous."
                "\nFix: use .reshape(), or .contiguous().view()."
            )
            raise CheckFailed(f"{what} raised {text}{hint}", "view_not_contiguous") from error
        raise CheckFailed(f"{what} raised {text}", "error") from error


def _split_output(result, what: str) -> tuple[Tensor, Tensor | None]:
    if isinstance(result, (tuple, list)):
        if not result:
            raise CheckFailed(f"{what} returned an empty tuple; return the output or (output, weights)", "contract")
        output, weights = result[0], (result[1] if len(result) > 1 else None)
    else:
        output, weights = result, None
    if not isinstance(output, Tensor):
        raise CheckFailed(f"{what} returned {type(output).__name__}; expected a tensor or (output, weights)", "contract")
    return output.detach().float(), (weights.detach().float() if isinstance(weights, Tensor) else None)


def _accepts_mask(fn: Callable) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 4 or any(p.kind == p.VAR_POSITIONAL or p.name == "mask" for p in parameters)


def _passed(name: str, detail: str) -> bool:
    print(f"✓ {name}: {detail}")
    return True


# ---------------------------------------------------------------------------
# Chapter 1: scaled dot-product attention
# ---------------------------------------------------------------------------

_ATTENTION_MISTAKES = {
    "no_scaling": _Mistake(
        "no_scaling",
        "the scores are not divided by √d_k (softmax(QKᵀ)V)",
        "divide QKᵀ by math.sqrt(d_k), where d_k = query.shape[-1]",
    ),
    "scale_by_dk": _Mistake(
        "scale_by_dk",
        "the scores are divided by d_k instead of √d_k",
        "divide by math.sqrt(d_k), not by d_k",
    ),
    "softmax_wrong_axis": _Mistake(
        "softmax_wrong_axis",
        "the softmax runs over the wrong axis (the queries, not the keys)",
        "use softmax(dim=-1), so each query's weights over the keys sum to 1",
    ),
    "mask_reversed": _Mistake(
        "mask_reversed",
        "the mask's polarity is reversed: you block where the mask is True",
        "True means *may attend*; fill the scores where the mask is False: scores.masked_fill(~mask, …)",
    ),
    "mask_ignored": _Mistake(
        "mask_ignored",
        "the mask is not applied",
        "fill the blocked scores (mask == False) with a very negative number before the softmax",
    ),
    "mask_after_softmax": _Mistake(
        "mask_after_softmax",
        "the mask is applied after the softmax, so the remaining weights no longer sum to 1",
        "mask the scores before the softmax",
    ),
    "returns_weights": _Mistake(
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
    takes_mask = _accepts_mask(fn)
    cases = _attention_cases(generator)
    for case, q, k, v, mask in cases:
        if mask is not None and not takes_mask:
            raise CheckFailed(
                "your function takes no mask argument; give it the signature fn(query, key, value, mask=None)",
                "contract",
            )
        args = (q, k, v) if mask is None else (q, k, v, mask)
        output, weights = _split_output(_call("your attention", fn, *args), "your attention")
        expected = _reference_attention(q, k, v, mask)
        if not _close(output, expected, atol=1e-5):
            names = [n for n in _ATTENTION_MISTAKES if mask is not None or not n.startswith("mask")]
            variants = [(_ATTENTION_MISTAKES[n], _reference_attention(q, k, v, mask, n)) for n in names]
            _diagnose("your attention's output", case, output, expected, variants, atol=1e-5)
        if weights is not None:
            expected_weights = scaled_dot_product_attention(q, k, v, mask)[1]
            if weights.shape == expected_weights.shape and not _close(weights, expected_weights, atol=1e-5):
                raise CheckFailed(
                    f"your attention's output is right but the weights it returns differ on {case}; "
                    "return the softmax of the (masked, scaled) scores",
                    "weights",
                )
    _check_blocked_row(fn)
    _check_float16(fn)
    return _passed("check_attention", f"your attention matches the reference on {len(cases) + 2} cases.")


def _check_blocked_row(fn: Callable) -> None:
    """A query that may attend to nothing must not turn into NaN."""
    q = k = v = torch.randn(1, 3, 4, generator=torch.Generator().manual_seed(1))
    mask = torch.tensor([[[True, True, False], [True, True, False], [False, False, False]]])
    output, _ = _split_output(_call("your attention", fn, q, k, v, mask), "your attention")
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
    output, _ = _split_output(_call("your attention in float16", fn, q, k, v, mask), "your attention")
    expected = _reference_attention(q.float(), k.float(), v.float(), mask)
    if not _close(output, expected, atol=2e-2, rtol=2e-2):
        raise CheckFailed(
            "your attention is right in float32 but wrong in float16 (masked half-precision inputs).\n"
            "Likely mistake: a fill value that does not fit float16.\nFix: fill with torch.finfo(scores.dtype).min.",
            "float16",
        )


# ---------------------------------------------------------------------------
# Chapter 2: multi-head attention
# ---------------------------------------------------------------------------

_MHA_MISTAKES = {
    "merge_without_transpose": _Mistake(
        "merge_without_transpose",
        "the heads are not transposed back before merging: (B, H, L, d_k) was viewed as (B, L, D) directly, "
        "which mixes positions",
        "merge with out.transpose(1, 2).reshape(B, L, D)  # (B, H, L, d_k) → (B, L, H, d_k) → (B, L, D)",
    ),
    "split_without_transpose": _Mistake(
        "split_without_transpose",
        "wrong head split: (B, L, D) was viewed as (B, H, L, d_k) directly, which mixes positions",
        "split with x.view(B, L, H, d_k).transpose(1, 2)  # (B, L, D) → (B, L, H, d_k) → (B, H, L, d_k)",
    ),
    "split_and_merge_without_transpose": _Mistake(
        "split_and_merge_without_transpose",
        "wrong head split and merge: (B, L, D) was viewed as (B, H, L, d_k) and back without transposing, "
        "so each 'head' sees a mix of positions",
        "split with x.view(B, L, H, d_k).transpose(1, 2) and merge with out.transpose(1, 2).reshape(B, L, D)",
    ),
    "split_interleaved": _Mistake(
        "split_interleaved",
        "wrong head split: D was cut as (d_k, H) instead of (H, d_k), so each head gets every H-th feature",
        "split with x.view(B, L, H, d_k), heads first, then transpose(1, 2)",
    ),
    "no_heads": _Mistake(
        "no_heads",
        "the heads are never split: one attention runs over all D features",
        "reshape the projections to (B, H, L, d_k) before the attention",
    ),
    "missing_output_projection": _Mistake(
        "missing_output_projection",
        "the output projection W_O is missing (the merged heads are returned directly)",
        "apply self.w_o to the merged heads",
    ),
    "no_scaling": _Mistake(
        "no_scaling", "the scores are not divided by √d_k", "divide each head's scores by math.sqrt(d_k)"
    ),
    "scale_by_sqrt_d_model": _Mistake(
        "scale_by_sqrt_d_model",
        "the scores are divided by √d_model instead of √d_k (the width of one head)",
        "divide by math.sqrt(d_k) with d_k = d_model // n_heads",
    ),
    "scale_by_dk": _Mistake("scale_by_dk", "the scores are divided by d_k instead of √d_k", "divide by math.sqrt(d_k)"),
    "softmax_wrong_axis": _Mistake(
        "softmax_wrong_axis",
        "the softmax runs over the wrong axis (the queries, not the keys)",
        "use softmax(dim=-1)",
    ),
    "mask_reversed": _Mistake(
        "mask_reversed",
        "the mask's polarity is reversed: you block where the mask is True",
        "True means *may attend*; fill where the mask is False",
    ),
    "mask_ignored": _Mistake("mask_ignored", "the mask is not applied", "pass the mask to the attention of every head"),
}


def _reference_mha(ref: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, mistake: str | None = None) -> Tensor:
    """The reference multi-head attention, optionally committing one named mistake."""
    batch, lq, d_model = query.shape
    heads, d_k = (1, d_model) if mistake == "no_heads" else (ref.n_heads, ref.d_k)

    def split(x: Tensor) -> Tensor:
        length = x.shape[1]
        if mistake in ("split_without_transpose", "split_and_merge_without_transpose"):
            return x.reshape(batch, heads, length, d_k)  # (B, H, L, d_k), positions mixed
        if mistake == "split_interleaved":
            return x.reshape(batch, length, d_k, heads).permute(0, 3, 1, 2)  # (B, H, L, d_k)
        return x.reshape(batch, length, heads, d_k).transpose(1, 2)  # (B, H, L, d_k)

    q, k, v = split(ref.w_q(query)), split(ref.w_k(key)), split(ref.w_v(value))
    scale = {"no_scaling": 1.0, "scale_by_dk": float(d_k), "scale_by_sqrt_d_model": math.sqrt(d_model)}.get(
        mistake, math.sqrt(d_k)
    )
    scores = q @ k.transpose(-2, -1) / scale  # (B, H, Lq, Lk)
    low = torch.finfo(scores.dtype).min
    if mask is not None and mistake == "mask_reversed":
        scores = scores.masked_fill(mask, low)
    elif mask is not None and mistake != "mask_ignored":
        scores = scores.masked_fill(~mask, low)
    out = scores.softmax(dim=-2 if mistake == "softmax_wrong_axis" else -1) @ v  # (B, H, Lq, d_k)
    if mistake in ("merge_without_transpose", "split_and_merge_without_transpose"):
        merged = out.reshape(batch, lq, d_model)  # (B, Lq, D), positions mixed
    elif mistake == "split_interleaved":
        merged = out.permute(0, 2, 3, 1).reshape(batch, lq, d_model)  # undo the interleaved split
    else:
        merged = out.transpose(1, 2).reshape(batch, lq, d_model)  # (B, Lq, D)
    return merged if mistake == "missing_output_projection" else ref.w_o(merged)


def _load_reference(mine: nn.Module, ref: MultiHeadAttention) -> None:
    """Copy the reference's weights into the reader's layer (see the module's contract)."""
    if callable(getattr(mine, "load_from", None)):
        _call("your load_from(ref)", mine.load_from, ref)
        return
    missing = [name for name in ("w_q", "w_k", "w_v", "w_o") if not isinstance(getattr(mine, name, None), nn.Linear)]
    if missing == ["w_o"]:
        raise CheckFailed(
            "your layer has w_q, w_k, w_v but no nn.Linear named w_o.\nLikely mistake: the output projection "
            "W_O is missing.\nFix: add self.w_o = nn.Linear(d_model, d_model) and apply it to the merged heads "
            "(or, if it exists under another name, give your class a load_from(ref) method).",
            "missing_output_projection",
        )
    if missing:
        raise CheckFailed(
            f"check_multi_head copies the reference's weights into your layer, but it has no nn.Linear "
            f"named {', '.join(missing)}.\nName the projections w_q, w_k, w_v, w_o "
            "(nn.Linear(d_model, d_model) each), or give your class a method load_from(ref) that copies "
            "ref.w_q, ref.w_k, ref.w_v, ref.w_o into your layer.",
            "contract",
        )
    with torch.no_grad():
        for name in ("w_q", "w_k", "w_v", "w_o"):
            theirs, ours = getattr(mine, name), getattr(ref, name)
            if theirs.weight.shape != ours.weight.shape:
                raise CheckFailed(
                    f"your {name} has weight shape {tuple(theirs.weight.shape)}, expected {tuple(ours.weight.shape)}: "
                    "one (d_model × d_model) projection for all heads together",
                    "wrong_projection_shape",
                )
            theirs.weight.copy_(ours.weight)
            if theirs.bias is None:
                ours.bias.zero_()  # compare like with like
            else:
                theirs.bias.copy_(ours.bias)


def check_multi_head(cls: Callable[[int, int], nn.Module], seed: int = 0) -> bool:
    """Check your multi-head attention class against :class:`~transformer_edu.MultiHeadAttention`.

    Args:
        cls: your class; ``cls(d_model, n_heads)`` must build the layer. See
            the module docstring for the forward contract and for how the
            weights are copied (attributes ``w_q``, ``w_k``, ``w_v``, ``w_o``
            or a ``load_from(ref)`` method).
        seed: seed of the weights and inputs.

    Returns:
        ``True`` when every case matches (and prints a line).

    Raises:
        CheckFailed: naming the likely mistake, e.g. ``merge_without_transpose``,
            ``split_without_transpose``, ``missing_output_projection``,
            ``scale_by_sqrt_d_model``, ``mask_reversed``, ``view_not_contiguous``.
    """
    with torch.random.fork_rng(devices=[]):  # seeds the layers' init without touching your RNG
        torch.manual_seed(seed)
        count = _check_multi_head(cls, torch.Generator().manual_seed(seed))
    return _passed("check_multi_head", f"your layer matches the reference on {count} cases.")


def _check_multi_head(cls: Callable[[int, int], nn.Module], generator: torch.Generator) -> int:
    count = 0
    for d_model, n_heads, batch, lq, lk in ((16, 4, 2, 5, 5), (32, 8, 3, 4, 7), (12, 3, 1, 6, 6)):
        mine = _call(f"{getattr(cls, '__name__', 'your class')}({d_model}, {n_heads})", cls, d_model, n_heads)
        if not isinstance(mine, nn.Module):
            raise CheckFailed(f"cls(d_model, n_heads) built a {type(mine).__name__}, not an nn.Module", "contract")
        ref = MultiHeadAttention(d_model, n_heads)
        _load_reference(mine, ref)
        mine.eval()
        query = torch.randn(batch, lq, d_model, generator=generator)
        memory = torch.randn(batch, lk, d_model, generator=generator)
        key_ids = torch.ones(batch, lk, dtype=torch.long)
        key_ids[0, -2:] = 0  # two pads in the first sequence
        cases = [
            ("self-attention, no mask", query, query, None),
            (f"cross-attention ({lq} queries, {lk} keys), no mask", query, memory, None),
            ("cross-attention with a padding mask (B, 1, 1, Lk)", query, memory, padding_mask(key_ids)),
        ]
        if lq == lk:
            cases.append(("self-attention with a causal mask (1, 1, L, L)", query, query, causal_mask(lq)))
        for description, q, kv, mask in cases:
            case = f"d_model={d_model}, n_heads={n_heads}, {description}"
            args = (q, kv, kv) if mask is None else (q, kv, kv, mask)
            with torch.no_grad():
                output, weights = _split_output(_call("your layer", mine, *args), "your layer")
                expected, expected_weights = ref(*args)
                if not _close(output, expected, atol=1e-5):
                    names = [n for n in _MHA_MISTAKES if mask is not None or not n.startswith("mask")]
                    variants = [(_MHA_MISTAKES[n], _reference_mha(ref, q, kv, kv, mask, n)) for n in names]
                    _diagnose("your layer's output", case, output, expected, variants, atol=1e-5)
            if weights is not None and weights.shape == expected_weights.shape:
                if not _close(weights, expected_weights, atol=1e-5):
                    raise CheckFailed(
                        f"your layer's output is right but its attention weights (B, H, Lq, Lk) differ on {case}",
                        "weights",
                    )
            count += 1
    return count


# ---------------------------------------------------------------------------
# Chapter 1: masks
# ---------------------------------------------------------------------------


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
        mask = _as_mask("your padding mask", _call("your padding mask", fn, tokens, pad_id), case)
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
    return _passed("check_padding_mask", f"your padding mask matches the reference on {count} cases.")


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
        mask = _as_mask("your causal mask", _call("your causal mask", fn, size), case)
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
    return _passed("check_causal_mask", "your causal mask matches the reference for sizes 4, 9 and 1.")


# ---------------------------------------------------------------------------
# Chapter 3: the sinusoidal positional encoding
# ---------------------------------------------------------------------------

_PE_MISTAKES = {
    "sin_cos_swapped": _Mistake(
        "sin_cos_swapped",
        "sines and cosines are swapped (cosines in the even columns)",
        "even columns 0, 2, 4, … hold sin, odd columns hold cos",
    ),
    "not_interleaved": _Mistake(
        "not_interleaved",
        "the sines fill the first half of the columns and the cosines the second half",
        "interleave them: table[:, 0::2] = sin, table[:, 1::2] = cos",
    ),
    "exponent_without_2": _Mistake(
        "exponent_without_2",
        "the frequency exponent is off: pair i uses 10000^(i / d_model) instead of 10000^(2i / d_model)",
        "use the even column index 2i: torch.arange(0, d_model, 2) / d_model",
    ),
    "exponent_doubled": _Mistake(
        "exponent_doubled",
        "the frequency exponent is off: column 2i uses 10000^(2·(2i) / d_model), the factor 2 is applied twice",
        "torch.arange(0, d_model, 2) already gives 2i; divide it by d_model without doubling again",
    ),
    "exponent_sign": _Mistake(
        "exponent_sign",
        "the angle is pos · 10000^(2i / d_model) instead of pos / 10000^(2i / d_model)",
        "divide by the power of 10000 (or multiply by exp(−2i · ln(10000) / d_model))",
    ),
    "positions_from_one": _Mistake(
        "positions_from_one",
        "positions start at 1 instead of 0",
        "use torch.arange(max_len) for the positions",
    ),
}


def _reference_table(max_len: int, d_model: int, mistake: str | None = None) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None] + (1 if mistake == "positions_from_one" else 0)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (D/2,)
    exponent = {"exponent_without_2": two_i / 2, "exponent_doubled": 2 * two_i}.get(mistake, two_i) / d_model
    frequency = 10000.0 ** (exponent if mistake == "exponent_sign" else -exponent)
    angle = position * frequency  # (max_len, D/2)
    first, second = (torch.cos(angle), torch.sin(angle)) if mistake == "sin_cos_swapped" else (torch.sin(angle), torch.cos(angle))
    if mistake == "not_interleaved":
        return torch.cat([first, second], dim=1).float()
    table = torch.empty(max_len, d_model, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = first, second
    return table.float()


def check_positional_encoding(fn: Callable) -> bool:
    """Check your sinusoidal table against :func:`~transformer_edu.sinusoidal_table`.

    Args:
        fn: ``fn(max_len, d_model)`` returning the (max_len, d_model) table with
            PE(pos, 2i) = sin(pos / 10000^(2i / d_model)) and
            PE(pos, 2i + 1) = cos(pos / 10000^(2i / d_model)).

    Raises:
        CheckFailed: e.g. ``sin_cos_swapped``, ``not_interleaved``,
            ``exponent_without_2``, ``exponent_doubled``, ``exponent_sign``,
            ``positions_from_one``, ``transposed``.
    """
    sizes = ((10, 8), (50, 16), (100, 64))
    for max_len, d_model in sizes:
        case = f"max_len={max_len}, d_model={d_model}"
        table = _call("your positional encoding", fn, max_len, d_model)
        if not isinstance(table, Tensor):
            raise CheckFailed(f"your positional encoding returned {type(table).__name__}; expected a tensor", "contract")
        table = table.detach().float()
        if table.dim() == 3 and table.shape[0] == 1:
            table = table[0]  # (1, max_len, D) is fine too
        expected = sinusoidal_table(max_len, d_model)
        if table.shape == (d_model, max_len) and table.shape != expected.shape:
            raise CheckFailed(
                f"your table has shape {tuple(table.shape)} on {case}.\nLikely mistake: it is transposed.\n"
                "Fix: one row per position: (max_len, d_model).",
                "transposed",
            )
        if not _close(table, expected, atol=1e-4):
            # Compare with the mistakes on the first rows and columns only: there the angles are
            # small, so float32 round-off cannot hide a match (variants differ by far more than 5e-3).
            crop = (slice(0, 12), slice(0, 8)) if table.shape == expected.shape else (slice(None), slice(None))
            variants = [(m, _reference_table(max_len, d_model, n)[crop]) for n, m in _PE_MISTAKES.items()]
            _diagnose("your positional encoding", case, table[crop], expected[crop], variants, atol=5e-3)
            raise CheckFailed(
                f"your positional encoding differs from the reference on {case} at large positions "
                "or high dimensions; compute the frequencies in float64 or in log space",
                "precision",
            )
    return _passed("check_positional_encoding", f"your table matches the reference on {len(sizes)} sizes.")


# ---------------------------------------------------------------------------
# Chapter 4: layer normalisation
# ---------------------------------------------------------------------------

_LN_MISTAKES = {
    "eps_outside_sqrt": _Mistake(
        "eps_outside_sqrt",
        "ε sits outside the square root: (x − μ) / (σ + ε) with the biased std σ",
        "divide by torch.sqrt(var + eps), with ε inside the square root",
    ),
    "unbiased_variance": _Mistake(
        "unbiased_variance",
        "the variance is unbiased (divided by D − 1); layer norm uses the biased variance (divided by D)",
        "x.var(dim=-1, unbiased=False, keepdim=True) (torch.var and Tensor.std default to unbiased)",
    ),
    "unbiased_std_plus_eps": _Mistake(
        "unbiased_std_plus_eps",
        "the denominator is the unbiased std plus ε, (x − μ) / (x.std() + ε): unbiased, and ε outside the square root",
        "use torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)",
    ),
    "no_centering": _Mistake(
        "no_centering",
        "the mean is not subtracted",
        "normalise x − μ, with μ = x.mean(dim=-1, keepdim=True)",
    ),
    "wrong_axis": _Mistake(
        "wrong_axis",
        "the statistics are taken over the wrong axis (across positions, as batch norm would)",
        "take the mean and variance over the last dimension: dim=-1, keepdim=True",
    ),
    "no_affine": _Mistake(
        "no_affine",
        "the scale γ and shift β are not applied",
        "return gamma * normalised + beta",
    ),
}


def _reference_layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, mistake: str | None = None) -> Tensor:
    dim = -2 if mistake == "wrong_axis" else -1
    mean = x.mean(dim=dim, keepdim=True)
    centred = x if mistake == "no_centering" else x - mean
    if mistake == "no_centering":
        var = (x - mean).pow(2).mean(dim=dim, keepdim=True)
    else:
        var = x.var(dim=dim, unbiased=mistake in ("unbiased_variance", "unbiased_std_plus_eps"), keepdim=True)
    if mistake in ("eps_outside_sqrt", "unbiased_std_plus_eps"):
        normalised = centred / (var.sqrt() + eps)
    else:
        normalised = centred / torch.sqrt(var + eps)
    return normalised if mistake == "no_affine" else gamma * normalised + beta


def _find_affine(module: nn.Module, d_model: int) -> tuple[nn.Parameter | None, nn.Parameter | None]:
    for scale, shift in (("gamma", "beta"), ("weight", "bias"), ("a_2", "b_2"), ("g", "b"), ("scale", "shift")):
        gamma, beta = getattr(module, scale, None), getattr(module, shift, None)
        if isinstance(gamma, Tensor) and isinstance(beta, Tensor) and gamma.shape == beta.shape == (d_model,):
            return gamma, beta
    return None, None


def check_layer_norm(cls: Callable[[int], nn.Module], seed: int = 0) -> bool:
    """Check your layer norm against :func:`torch.nn.functional.layer_norm`.

    The inputs have a small spread (standard deviation about 0.01 to 1), so an
    ε in the wrong place shows.

    Args:
        cls: your class; ``cls(d_model)`` must build a module normalising the
            last dimension, with γ / β as ``gamma`` / ``beta`` (or ``weight`` /
            ``bias``, ``a_2`` / ``b_2``) and ε as ``eps`` (default 1e-5 if absent).
        seed: seed of the inputs and of the γ, β the check sets.

    Raises:
        CheckFailed: e.g. ``eps_outside_sqrt``, ``unbiased_variance``,
            ``unbiased_std_plus_eps``, ``no_centering``, ``wrong_axis``, ``no_affine``.
    """
    with torch.random.fork_rng(devices=[]):  # your layer's init must not move your RNG
        count = _check_layer_norm(cls, torch.Generator().manual_seed(seed))
    return _passed("check_layer_norm", f"your layer norm matches the reference on {count} cases.")


def _check_layer_norm(cls: Callable[[int], nn.Module], generator: torch.Generator) -> int:
    count = 0
    for d_model, shape, spread in ((8, (2, 5), 0.01), (16, (3, 4), 1.0), (32, (1, 6), 0.003)):
        mine = _call(f"{getattr(cls, '__name__', 'your class')}({d_model})", cls, d_model)
        if not isinstance(mine, nn.Module):
            raise CheckFailed(f"cls(d_model) built a {type(mine).__name__}, not an nn.Module", "contract")
        eps = float(getattr(mine, "eps", getattr(mine, "variance_epsilon", 1e-5)))
        gamma, beta = _find_affine(mine, d_model)
        if gamma is not None:
            with torch.no_grad():
                gamma.copy_(1.0 + 0.5 * torch.randn(d_model, generator=generator))
                beta.copy_(0.5 * torch.randn(d_model, generator=generator))
            gamma_ref, beta_ref = gamma.detach().clone(), beta.detach().clone()
        else:
            gamma_ref, beta_ref = torch.ones(d_model), torch.zeros(d_model)
        x = spread * (torch.randn(*shape, d_model, generator=generator) + 3 * torch.randn(*shape, 1, generator=generator))
        case = f"d_model={d_model}, input {tuple(x.shape)} with spread {spread}, eps={eps:g}"
        with torch.no_grad():
            output = _call("your layer norm", mine, x)
        if not isinstance(output, Tensor):
            raise CheckFailed(f"your layer norm returned {type(output).__name__}; expected a tensor", "contract")
        expected = F.layer_norm(x, (d_model,), gamma_ref, beta_ref, eps)
        if not _close(output.detach().float(), expected, atol=1e-4):
            variants = [(m, _reference_layer_norm(x, gamma_ref, beta_ref, eps, n)) for n, m in _LN_MISTAKES.items()]
            _diagnose("your layer norm", case, output.detach().float(), expected, variants, atol=1e-4)
        count += 1
    return count
