"""The paper's optimizer and learning-rate schedule (Chapter 7): Adam with β = (0.9, 0.98) and
ε = 1e-9, and a rate that warms up linearly, then decays with the inverse square root of the step."""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from .. import _validate

__all__ = ["noam_rate", "noam_lambda", "warmup_schedule", "make_optimizer"]


def noam_rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    r"""The paper's learning rate at update ``step`` (counted from 1).

    lrate = factor · d_model^−0.5 · min(step^−0.5, step · warmup^−1.5): it grows
    linearly for ``warmup`` steps, peaks at factor · (d_model · warmup)^−0.5,
    then decays as 1 / √step.

    See Chapter 7.
    """
    _validate.positive_int("step", step)
    _validate.positive_int("d_model", d_model)
    _validate.positive_int("warmup", warmup)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def noam_lambda(d_model: int, warmup: int, factor: float = 1.0) -> Callable[[int], float]:
    """The :func:`noam_rate` schedule as a multiplier for ``LambdaLR``.

    ``LambdaLR`` calls the function with the number of scheduler steps taken
    so far, 0 before the first update; the function adds 1, so that the n-th
    optimizer update (n = 1, 2, …) uses ``noam_rate(n)``: no update gets a
    learning rate of 0 and none is used twice.
    """
    _validate.positive_int("d_model", d_model)
    _validate.positive_int("warmup", warmup)
    _validate.positive_number("factor", factor)
    return lambda steps_taken: noam_rate(steps_taken + 1, d_model, warmup, factor)


def warmup_schedule(
    optimizer: torch.optim.Optimizer, d_model: int, warmup: int, factor: float = 1.0
) -> torch.optim.lr_scheduler.LambdaLR:
    """A ``LambdaLR`` that sets the learning rate to the paper's schedule.

    The rate is the optimizer's base ``lr`` times :func:`noam_rate`, so leave
    the base at 1.0 (as :func:`make_optimizer` does) to get the paper's
    values. Call ``scheduler.step()`` after every ``optimizer.step()``.

    See Chapter 7.
    """
    return torch.optim.lr_scheduler.LambdaLR(optimizer, noam_lambda(d_model, warmup, factor))


def make_optimizer(
    model: nn.Module, lr: float = 1.0, betas: tuple[float, float] = (0.9, 0.98), eps: float = 1e-9
) -> torch.optim.Adam:
    """Adam with the paper's β1 = 0.9, β2 = 0.98 and ε = 1e-9.

    ``lr`` is a base value that :func:`warmup_schedule` multiplies; with the
    schedule, keep it at 1.0.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    return torch.optim.Adam(model.parameters(), lr=lr, betas=betas, eps=eps)
