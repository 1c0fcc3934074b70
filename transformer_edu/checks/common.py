"""What every check shares: the failure it raises, and the diagnosis by known mistakes."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["CheckFailed"]


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
class Mistake:
    name: str  # short key, CheckFailed.mistake
    description: str  # what the variant does wrong, in words
    fix: str  # what to change


def close(actual: Tensor, expected: Tensor, atol: float, rtol: float = 1e-4) -> bool:
    if actual.shape != expected.shape:
        return False
    both_nan = torch.isnan(actual) & torch.isnan(expected)
    return bool(torch.allclose(actual.masked_fill(both_nan, 0), expected.masked_fill(both_nan, 0), atol=atol, rtol=rtol))


def diagnose(
    what: str,
    case: str,
    actual: Tensor,
    expected: Tensor,
    variants: list[tuple[Mistake, Tensor]],
    atol: float,
) -> None:
    """Raise CheckFailed naming the first variant that ``actual`` matches."""
    for mistake, output in variants:
        if close(actual, output, atol):
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


def call(what: str, fn: Callable, *args, **kwargs):
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


def split_output(result, what: str) -> tuple[Tensor, Tensor | None]:
    if isinstance(result, (tuple, list)):
        if not result:
            raise CheckFailed(f"{what} returned an empty tuple; return the output or (output, weights)", "contract")
        output, weights = result[0], (result[1] if len(result) > 1 else None)
    else:
        output, weights = result, None
    if not isinstance(output, Tensor):
        raise CheckFailed(f"{what} returned {type(output).__name__}; expected a tensor or (output, weights)", "contract")
    return output.detach().float(), (weights.detach().float() if isinstance(weights, Tensor) else None)


def accepts_mask(fn: Callable) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 4 or any(p.kind == p.VAR_POSITIONAL or p.name == "mask" for p in parameters)


def passed(name: str, detail: str) -> bool:
    print(f"✓ {name}: {detail}")
    return True
