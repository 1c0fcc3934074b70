"""Keeping the best epoch's weights, and averaging the last epochs' weights (Chapter 7).

Both are ``on_epoch_end`` hooks of :func:`~transformer_edu.training.loop.fit`.
"""

from __future__ import annotations

import math
from collections import deque
from contextlib import contextmanager
from typing import Iterator

import torch
from torch import Tensor, nn

from .. import _validate

__all__ = ["BestWeights", "AveragedWeights"]


class BestWeights:
    """An ``on_epoch_end`` hook that remembers the weights of the best epoch so far.

    Validation scores do not improve smoothly: a late epoch can be worse than
    an earlier one. This hook copies the weights whenever ``history[metric]``
    reaches a new best (lowest for ``mode="min"``, highest for ``"max"``; a
    tie keeps the earlier epoch), and :meth:`restore` puts the best copy back
    after training. With ``patience``, it stops training (early stopping)
    after that many epochs without improvement.

    Example::

        best = BestWeights(model)
        fit(model, ..., on_epoch_end=best)
        best.restore()   # the weights of epoch best.epoch

    See Chapter 7.
    """

    def __init__(
        self, model: nn.Module, metric: str = "valid_loss", mode: str = "min", patience: int | None = None
    ) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' (for a loss) or 'max' (for an accuracy), got {mode!r}")
        if patience is not None:
            _validate.positive_int("patience", patience)
        self.model, self.metric, self.mode, self.patience = model, metric, mode, patience
        self.best = math.inf if mode == "min" else -math.inf
        self.epoch: int | None = None
        self._state: dict[str, Tensor] | None = None

    def __call__(self, epoch: int, history: dict[str, list]) -> bool:
        if self.metric not in history:
            raise ValueError(f"metric {self.metric!r} is not in the history; choose one of {sorted(history)}")
        value = history[self.metric][-1]
        if (value < self.best) if self.mode == "min" else (value > self.best):  # NaN never counts as better
            self.best, self.epoch = value, epoch
            self._state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        return self.patience is not None and self.epoch is not None and epoch - self.epoch >= self.patience

    def restore(self) -> int:
        """Load the best weights into the model; return their epoch (counted from 1)."""
        if self._state is None:
            raise ValueError(
                f"no epoch has been seen with a finite {self.metric!r} yet; pass validation batches to fit"
            )
        self.model.load_state_dict(self._state)
        return self.epoch

    def state_dict(self) -> dict:
        """What it remembers, as plain values and tensors (for a checkpoint, to resume training)."""
        return {"best": self.best, "epoch": self.epoch, "weights": self._state}

    def load_state_dict(self, state: dict) -> None:
        """Remember what :meth:`state_dict` returned."""
        self.best, self.epoch, self._state = state["best"], state["epoch"], state["weights"]


class AveragedWeights:
    """The average of the weights of the last ``last`` epochs: the paper's checkpoint averaging.

    The paper's base models are "a single model obtained by averaging the
    last 5 checkpoints" (written every 10 minutes; the last 20 for the big
    models). Late in training the weights wander around a good point from
    one update to the next; their average lies closer to it, and usually
    translates better than any one of them.

    Call it after every epoch (e.g. from ``on_epoch_end``) to remember that
    epoch's weights; :meth:`average` gives the mean of those remembered, and
    inside ``with averaged.applied():`` the model holds the average (e.g. to
    measure it) and gets its own weights back afterwards, so training goes
    on undisturbed. Non-floating tensors are taken from the latest epoch.

    Example::

        averaged = AveragedWeights(model, last=5)
        fit(model, ..., on_epoch_end=averaged)
        model.load_state_dict(averaged.average())

    See Chapter 7.
    """

    def __init__(self, model: nn.Module, last: int = 5) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
        self.model = model
        self.last = _validate.positive_int("last", last)
        self._states: deque[dict[str, Tensor]] = deque(maxlen=self.last)

    def __call__(self, epoch: int | None = None, history: dict | None = None) -> bool:
        """Remember the model's current weights; never asks to stop."""
        self._states.append({k: v.detach().clone() for k, v in self.model.state_dict().items()})
        return False

    def __len__(self) -> int:
        return len(self._states)

    def average(self) -> dict[str, Tensor]:
        """The element-wise mean of the remembered weights, as a ``state_dict``."""
        if not self._states:
            raise ValueError("no weights remembered yet; call the AveragedWeights after an epoch first")
        latest = self._states[-1]
        return {k: torch.stack([s[k] for s in self._states]).mean(dim=0) if v.is_floating_point() else v.clone()
                for k, v in latest.items()}

    def state_dict(self) -> dict:
        """The remembered weights, oldest first (for a checkpoint, to resume training)."""
        return {"last": self.last, "weights": list(self._states)}

    def load_state_dict(self, state: dict) -> None:
        """Remember the weights :meth:`state_dict` returned."""
        if state["last"] != self.last:
            raise ValueError(f"the state averages the last {state['last']} epochs, this one the last {self.last}")
        self._states = deque(state["weights"], maxlen=self.last)

    @contextmanager
    def applied(self) -> Iterator[dict[str, Tensor]]:
        """Load the average into the model for the ``with`` block, then restore the model's own weights."""
        own = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        average = self.average()
        self.model.load_state_dict(average)
        try:
            yield average
        finally:
            self.model.load_state_dict(own)
