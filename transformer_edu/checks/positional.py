"""Check of Chapter 3: the sinusoidal positional encoding."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..positional import sinusoidal_table
from .common import CheckFailed, Mistake, call, close, diagnose, passed

__all__ = ["check_positional_encoding"]


_PE_MISTAKES = {
    "sin_cos_swapped": Mistake(
        "sin_cos_swapped",
        "sines and cosines are swapped (cosines in the even columns)",
        "even columns 0, 2, 4, … hold sin, odd columns hold cos",
    ),
    "not_interleaved": Mistake(
        "not_interleaved",
        "the sines fill the first half of the columns and the cosines the second half",
        "interleave them: table[:, 0::2] = sin, table[:, 1::2] = cos",
    ),
    "exponent_without_2": Mistake(
        "exponent_without_2",
        "the frequency exponent is off: pair i uses 10000^(i / d_model) instead of 10000^(2i / d_model)",
        "use the even column index 2i: torch.arange(0, d_model, 2) / d_model",
    ),
    "exponent_doubled": Mistake(
        "exponent_doubled",
        "the frequency exponent is off: column 2i uses 10000^(2·(2i) / d_model), the factor 2 is applied twice",
        "torch.arange(0, d_model, 2) already gives 2i; divide it by d_model without doubling again",
    ),
    "exponent_sign": Mistake(
        "exponent_sign",
        "the angle is pos · 10000^(2i / d_model) instead of pos / 10000^(2i / d_model)",
        "divide by the power of 10000 (or multiply by exp(−2i · ln(10000) / d_model))",
    ),
    "positions_from_one": Mistake(
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
        table = call("your positional encoding", fn, max_len, d_model)
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
        if not close(table, expected, atol=1e-4):
            # Compare with the mistakes on the first rows and columns only: there the angles are
            # small, so float32 round-off cannot hide a match (variants differ by far more than 5e-3).
            crop = (slice(0, 12), slice(0, 8)) if table.shape == expected.shape else (slice(None), slice(None))
            variants = [(m, _reference_table(max_len, d_model, n)[crop]) for n, m in _PE_MISTAKES.items()]
            diagnose("your positional encoding", case, table[crop], expected[crop], variants, atol=5e-3)
            raise CheckFailed(
                f"your positional encoding differs from the reference on {case} at large positions "
                "or high dimensions; compute the frequencies in float64 or in log space",
                "precision",
            )
    return passed("check_positional_encoding", f"your table matches the reference on {len(sizes)} sizes.")
