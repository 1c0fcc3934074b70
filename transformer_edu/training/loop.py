"""The training loop of Chapter 7.

Each update: the batch's forward pass, the loss, the backward pass, gradient
clipping, the optimizer's step and the schedule's step. After each epoch the
validation loss is measured (dropout off) and one record is appended to the
history. That is all of :func:`fit`; Chapter 9 runs the same loop on several
processes, in micro-batches and in 16-bit precision
(:func:`~transformer_edu.training.scale.fit_at_scale`).

Shape legend: B batch, S source length, T target length, V target vocabulary
size.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable

import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from .. import _validate

__all__ = ["evaluate", "fit", "Tally", "epoch_batches"]

Batches = Callable[[int], Iterable] | Iterable
"""Batches of one epoch: a function ``epoch -> batches``, or a collection reused every epoch."""

HISTORY_KEYS = ("epoch", "train_loss", "valid_loss", "valid_nll", "lr", "grad_norm", "tokens_per_s", "seconds",
                "step", "tokens", "updates")


def epoch_batches(batches: Batches, epoch: int, name: str = "train_batches") -> Iterable:
    """The batches of ``epoch``: call a function with the epoch, or reuse a collection."""
    if callable(batches):
        return batches(epoch)
    if iter(batches) is batches:
        raise TypeError(
            f"{name} is a one-pass iterator, which would be empty from the second epoch on; "
            "pass a list of batches, or a function epoch -> batches, e.g. "
            "lambda epoch: make_batches(pairs, src_vocab, tgt_vocab, 64, shuffle=True, seed=epoch)"
        )
    return batches


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's parameters, where its batches go."""
    return next(model.parameters()).device


def new_history(history: dict[str, list] | None = None, start_epoch: int = 0) -> dict[str, list]:
    """An empty history, or ``history`` checked to hold one record per epoch before ``start_epoch``."""
    history = {key: [] for key in HISTORY_KEYS} if history is None else history
    for key in ("step", "tokens", "updates"):  # a history from before these were recorded
        if key not in history and "epoch" in history:
            history[key] = [None] * len(history["epoch"])
    if not set(HISTORY_KEYS) <= set(history) or len(history["epoch"]) != start_epoch:
        raise ValueError(
            f"history must be the dict fit returned, with one record per epoch done "
            f"(start_epoch = {start_epoch}); got keys {sorted(history)} and "
            f"{len(history.get('epoch', []))} records"
        )
    return history


@dataclass
class Tally:
    """Sums over the updates of one epoch, for its record in the history.

    ``loss_sum`` is the loss summed over ``loss_tokens`` target tokens (the
    mean loss of each update times its tokens); ``tokens`` counts the target
    tokens trained on, ``grad_sum`` the gradient norms before clipping,
    ``updates`` the updates made. (One process sees all of them; in
    Chapter 9, ``loss_sum`` and ``loss_tokens`` are a process's share.)
    """

    loss_sum: float = 0.0
    loss_tokens: int = 0
    tokens: int = 0
    grad_sum: float = 0.0
    updates: int = 0

    def add(self, loss_sum: float, loss_tokens: int, tokens: int, grad_norm: torch.Tensor | None) -> None:
        """Count one update."""
        if grad_norm is not None:
            self.grad_sum += float(grad_norm)
        self.loss_sum, self.loss_tokens = self.loss_sum + loss_sum, self.loss_tokens + loss_tokens
        self.tokens, self.updates = self.tokens + tokens, self.updates + 1

    def record(self, epoch: int, step: int, valid: dict, lr: float, seconds: float, clipped: bool) -> dict:
        """The history's record of the epoch (``epoch`` counted from 0, the record counts from 1)."""
        return {
            "epoch": epoch + 1,
            "train_loss": self.loss_sum / self.loss_tokens,
            "valid_loss": valid["loss"],
            "valid_nll": valid["nll"],
            "lr": lr,
            "grad_norm": self.grad_sum / self.updates if clipped else float("nan"),
            "tokens_per_s": self.tokens / seconds,
            "seconds": seconds,
            "step": step,
            "tokens": self.tokens,
            "updates": self.updates,
        }


NOT_VALIDATED = {"loss": float("nan"), "nll": float("nan")}


@torch.no_grad()
def evaluate(model: nn.Module, batches: Iterable, loss_fn: nn.Module | None = None) -> dict[str, float]:
    """Loss over ``batches`` with teacher forcing, dropout off.

    Args:
        model: a :class:`~transformer_edu.Transformer` (or a :class:`~transformer_edu.LanguageModel`).
        batches: :class:`~transformer_edu.data.batching.Batch` es (``src``, ``tgt_in``, ``tgt_out``), or
            any batches with ``inputs`` (what the model takes) and ``tgt_out``, such as the
            decoder-only model's :class:`~transformer_edu.data.sequences.SequenceBatch` (Chapter 10).
        loss_fn: e.g. a :class:`~transformer_edu.training.loss.LabelSmoothingLoss`; its mean per
            token is reported as ``"loss"``.

    Returns:
        ``{"loss": …, "nll": …, "tokens": …}``: ``nll`` is the plain cross-entropy per
        target token (no smoothing), so ``perplexity(result["nll"])`` is the perplexity.
        The losses are computed in float32, also when the model runs under
        :func:`~transformer_edu.training.scale.autocast` (Chapter 9).
    """
    was_training = model.training
    model.eval()
    device, pad_id = model_device(model), model.config.pad_id
    loss_sum = nll_sum = 0.0
    tokens = 0
    for batch in batches:
        batch = batch.to(device)
        logits = model(*batch.inputs).float()  # (B, T, V), the losses in float32
        n = int((batch.tgt_out != pad_id).sum())
        nll = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=pad_id, reduction="sum")
        nll_sum += float(nll)
        if loss_fn is not None:
            loss_sum += float(loss_fn(logits, batch.tgt_out)) * n
        tokens += n
    model.train(was_training)
    if tokens == 0:
        raise ValueError("batches held no target tokens to evaluate")
    loss = loss_sum / tokens if loss_fn is not None else float("nan")
    return {"loss": loss, "nll": nll_sum / tokens, "tokens": tokens}


def fit(
    model: nn.Module,
    train_batches: Batches,
    valid_batches: Batches | None = None,
    *,
    epochs: int,
    optimizer: torch.optim.Optimizer,
    loss_fn: nn.Module,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    clip_norm: float | None = 1.0,
    start_epoch: int = 0,
    history: dict[str, list] | None = None,
    on_epoch_end: Callable[[int, dict[str, list]], bool | None] | None = None,
    progress: bool = True,
) -> dict[str, list]:
    """Train with teacher forcing for epochs ``start_epoch … epochs − 1``.

    Each update: forward pass, ``loss_fn(logits, tgt_out)``, backward pass,
    gradient clipping to a total norm of ``clip_norm``, ``optimizer.step()``
    and ``scheduler.step()``. After each epoch the validation loss is
    measured (dropout off) and one record is appended to ``history``.

    Batches are moved to the device of the model's parameters. On CPU,
    training is deterministic given ``torch.manual_seed`` and the batch order.

    Args:
        model: a :class:`~transformer_edu.Transformer` (or a :class:`~transformer_edu.LanguageModel`,
            with batches of :mod:`~transformer_edu.data.sequences`).
        train_batches: a function ``epoch -> batches`` (so each epoch can be
            shuffled differently, e.g. with ``seed=epoch``) or a list of batches.
        valid_batches: the same for validation, or ``None``.
        epochs: the total number of epochs, counting those before ``start_epoch``.
        optimizer, scheduler: see :func:`~transformer_edu.training.schedule.make_optimizer`,
            :func:`~transformer_edu.training.schedule.warmup_schedule`.
        loss_fn: e.g. :class:`~transformer_edu.training.loss.LabelSmoothingLoss`; returns the
            mean loss per token.
        clip_norm: largest total gradient norm; ``None`` turns clipping off.
            Clipping is our addition, not the paper's recipe (tensor2tensor's
            base setting clips nothing).
        start_epoch: epochs already done, to resume from a checkpoint
            (restore the model, optimizer, scheduler and RNG first, see
            :func:`~transformer_edu.training.checkpoint.resume`).
        history: the history returned earlier, to extend when resuming.
        on_epoch_end: called as ``on_epoch_end(epoch, history)`` after each
            epoch (``epoch`` counts from 1); return ``True`` to stop early.
            Use it to plot curves, save checkpoints or translate examples.
        progress: show a progress bar (``tqdm.auto``: it renders in Jupyter too).
            When ``on_epoch_end`` stops training early, the bar ends full,
            its total cut to the epochs run, and its postfix says so
            (``stopped=early, 8 planned``).

    Returns:
        The history, a dict of equally long lists, one entry per epoch:
        ``epoch``, ``train_loss``, ``valid_loss``, ``valid_nll`` (plain
        cross-entropy; ``NaN`` without validation), ``lr`` (after the epoch),
        ``grad_norm`` (mean norm before clipping), ``tokens_per_s``,
        ``seconds``, ``step`` (updates done in all, by the end of the
        epoch), ``tokens`` (target tokens trained on) and ``updates``.
        ``on_epoch_end`` may add lists of its own (e.g. a validation exact match).

    See Chapter 7.
    """
    _validate.positive_int("epochs", epochs)
    check_start(start_epoch, epochs, clip_norm)
    history = new_history(history, start_epoch)
    device = model_device(model)
    step = (history["step"] or [0])[-1] or 0
    bar = tqdm(total=epochs, initial=start_epoch, unit="epoch", disable=not progress)
    for epoch in range(start_epoch, epochs):
        model.train()
        start, tally = time.perf_counter(), Tally()
        for batch in epoch_batches(train_batches, epoch):
            batch = batch.to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(*batch.inputs), batch.tgt_out)  # the mean over the batch's tokens
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), clip_norm) if clip_norm is not None else None
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            step += 1
            mean = float(loss.detach())
            tally.add(mean * batch.n_tokens, batch.n_tokens, batch.n_tokens, norm)
            bar.set_postfix(loss=f"{mean:.3f}", refresh=False)
        if tally.updates == 0:
            raise ValueError(f"train_batches gave no batches in epoch {epoch}")
        valid = evaluate(model, epoch_batches(valid_batches, epoch, "valid_batches"), loss_fn) \
            if valid_batches is not None else NOT_VALIDATED
        record = tally.record(epoch, step, valid, optimizer.param_groups[0]["lr"], time.perf_counter() - start,
                              clipped=clip_norm is not None)
        for key, value in record.items():
            history[key].append(value)
        postfix = {"train": f"{record['train_loss']:.3f}", "valid": f"{record['valid_loss']:.3f}"}
        bar.set_postfix(postfix)
        bar.update()
        if on_epoch_end is not None and on_epoch_end(epoch + 1, history):
            end_early(bar, epoch + 1, epochs, postfix)
            break
    bar.close()
    return history


def check_start(start_epoch: int, epochs: int, clip_norm: float | None) -> None:
    """Check the arguments :func:`fit` and Chapter 9's ``fit_at_scale`` share."""
    if isinstance(start_epoch, bool) or not isinstance(start_epoch, int) or not 0 <= start_epoch <= epochs:
        raise ValueError(f"start_epoch must be an int in [0, epochs = {epochs}], got {start_epoch!r}")
    if clip_norm is not None:
        _validate.positive_number("clip_norm", clip_norm)


def end_early(bar: tqdm, done: int, planned: int, postfix: dict) -> None:
    """End a progress bar stopped at ``done`` of its total full, not red like a crash, saying why."""
    if done >= bar.total:
        return
    bar.total = done
    if hasattr(bar, "container"):  # tqdm.notebook keeps the maximum in its widget too
        bar.container.children[1].max = done
    bar.set_postfix({**postfix, "stopped": f"early, {planned} planned"})
