"""Check of Chapter 2: multi-head attention."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from ..attention import MultiHeadAttention
from ..masks import causal_mask, padding_mask
from .common import (
    CheckFailed,
    Mistake,
    call,
    close,
    diagnose,
    passed,
    split_output,
)

__all__ = ["check_multi_head"]


_MHA_MISTAKES = {
    "merge_without_transpose": Mistake(
        "merge_without_transpose",
        "the heads are not transposed back before merging: (B, H, L, d_k) was viewed as (B, L, D) directly, "
        "which mixes positions",
        "merge with out.transpose(1, 2).reshape(B, L, D)  # (B, H, L, d_k) → (B, L, H, d_k) → (B, L, D)",
    ),
    "split_without_transpose": Mistake(
        "split_without_transpose",
        "wrong head split: (B, L, D) was viewed as (B, H, L, d_k) directly, which mixes positions",
        "split with x.view(B, L, H, d_k).transpose(1, 2)  # (B, L, D) → (B, L, H, d_k) → (B, H, L, d_k)",
    ),
    "split_and_merge_without_transpose": Mistake(
        "split_and_merge_without_transpose",
        "wrong head split and merge: (B, L, D) was viewed as (B, H, L, d_k) and back without transposing, "
        "so each 'head' sees a mix of positions",
        "split with x.view(B, L, H, d_k).transpose(1, 2) and merge with out.transpose(1, 2).reshape(B, L, D)",
    ),
    "split_interleaved": Mistake(
        "split_interleaved",
        "wrong head split: D was cut as (d_k, H) instead of (H, d_k), so each head gets every H-th feature",
        "split with x.view(B, L, H, d_k), heads first, then transpose(1, 2)",
    ),
    "no_heads": Mistake(
        "no_heads",
        "the heads are never split: one attention runs over all D features",
        "reshape the projections to (B, H, L, d_k) before the attention",
    ),
    "missing_output_projection": Mistake(
        "missing_output_projection",
        "the output projection W_O is missing (the merged heads are returned directly)",
        "apply self.w_o to the merged heads",
    ),
    "no_scaling": Mistake(
        "no_scaling", "the scores are not divided by √d_k", "divide each head's scores by math.sqrt(d_k)"
    ),
    "scale_by_sqrt_d_model": Mistake(
        "scale_by_sqrt_d_model",
        "the scores are divided by √d_model instead of √d_k (the width of one head)",
        "divide by math.sqrt(d_k) with d_k = d_model // n_heads",
    ),
    "scale_by_dk": Mistake("scale_by_dk", "the scores are divided by d_k instead of √d_k", "divide by math.sqrt(d_k)"),
    "softmax_wrong_axis": Mistake(
        "softmax_wrong_axis",
        "the softmax runs over the wrong axis (the queries, not the keys)",
        "use softmax(dim=-1)",
    ),
    "mask_reversed": Mistake(
        "mask_reversed",
        "the mask's polarity is reversed: you block where the mask is True",
        "True means *may attend*; fill where the mask is False",
    ),
    "mask_ignored": Mistake("mask_ignored", "the mask is not applied", "pass the mask to the attention of every head"),
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
        call("your load_from(ref)", mine.load_from, ref)
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
    return passed("check_multi_head", f"your layer matches the reference on {count} cases.")


def _check_multi_head(cls: Callable[[int, int], nn.Module], generator: torch.Generator) -> int:
    count = 0
    for d_model, n_heads, batch, lq, lk in ((16, 4, 2, 5, 5), (32, 8, 3, 4, 7), (12, 3, 1, 6, 6)):
        mine = call(f"{getattr(cls, '__name__', 'your class')}({d_model}, {n_heads})", cls, d_model, n_heads)
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
                output, weights = split_output(call("your layer", mine, *args), "your layer")
                expected, expected_weights = ref(*args)
                if not close(output, expected, atol=1e-5):
                    names = [n for n in _MHA_MISTAKES if mask is not None or not n.startswith("mask")]
                    variants = [(_MHA_MISTAKES[n], _reference_mha(ref, q, kv, kv, mask, n)) for n in names]
                    diagnose("your layer's output", case, output, expected, variants, atol=1e-5)
            if weights is not None and weights.shape == expected_weights.shape:
                if not close(weights, expected_weights, atol=1e-5):
                    raise CheckFailed(
                        f"your layer's output is right but its attention weights (B, H, Lq, Lk) differ on {case}",
                        "weights",
                    )
            count += 1
    return count
