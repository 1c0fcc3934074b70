"""Chapter 7's training loop at scale (Chapter 9).

:func:`~transformer_edu.training.loop.fit` makes one update per batch, in one
process, in float32. :func:`fit_at_scale` runs the same loop with what
Chapter 9 adds, each a change to one update (:class:`Updater`) or to the loop:

* **several processes** (:mod:`~transformer_edu.training.distributed`): each
  takes its share of every batch, the model is wrapped in
  :class:`~torch.nn.parallel.DistributedDataParallel`, which adds up the
  gradients, and only rank 0 shows the progress bar;
* **gradient accumulation**: each share runs in ``accumulate`` micro-batches
  whose gradients add up before the one update;
* **mixed precision** (:func:`autocast`): the forward pass in bfloat16 or
  float16, with a :class:`torch.amp.GradScaler` for float16;
* **a budget of updates** (``max_steps``) that may end in the middle of an
  epoch, and **resuming** there (``start_batch``).

Every part's mean loss is weighted by its share of the batch's target tokens,
so that the update is the one of the whole batch, whatever the number of
processes and micro-batches; with one process, one micro-batch and float32,
an update is exactly :func:`~transformer_edu.training.loop.fit`'s.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn
from tqdm.auto import tqdm

from .. import _validate
from ..data.batching import Batch
from .distributed import World, my_parts
from .loop import (
    NOT_VALIDATED,
    Batches,
    Tally,
    check_start,
    end_early,
    epoch_batches,
    evaluate,
    model_device,
    new_history,
)

__all__ = ["AMP_DTYPES", "autocast", "check_amp", "Update", "Updater", "fit_at_scale"]

#: The names ``amp=`` takes, and the dtype each one computes in.
AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def check_amp(amp: str | None) -> None:
    """Raise a ValueError unless ``amp`` is ``None``, ``"bf16"`` or ``"fp16"``."""
    if amp is not None and amp not in AMP_DTYPES:
        raise ValueError(f"amp must be None, 'bf16' or 'fp16', got {amp!r}")


def autocast(device: torch.device | str, amp: str | None):
    """The context in which to run the model for ``amp`` on ``device``.

    ``None`` is float32 (a context that changes nothing); ``"bf16"`` and
    ``"fp16"`` are :func:`torch.autocast` with that dtype: matrix products in
    16 bits; on CUDA softmax and normalisation stay in float32 (on the CPU,
    autocast leaves softmax in bfloat16); the package computes its losses in
    float32 either way. bfloat16 keeps
    float32's range, so it needs nothing else; float16 gradients can underflow,
    so :class:`Updater` scales the loss with a :class:`torch.amp.GradScaler`
    (as on a Colab T4, which has no bfloat16 units).

    Example::

        with autocast("cuda", "bf16"):
            logits = model(src, tgt_in)
    """
    check_amp(amp)
    if amp is None:
        return nullcontext()
    return torch.autocast(device_type=torch.device(device).type, dtype=AMP_DTYPES[amp])


@dataclass
class Update:
    """What one update did: ``loss_sum`` over this process's ``loss_tokens`` target tokens,
    ``tokens`` in the whole batch, the gradient norm before clipping (``None`` without clipping),
    and whether float16 overflowed, so that the update was ``skipped``."""

    loss_sum: float
    loss_tokens: int
    tokens: int
    grad_norm: torch.Tensor | None
    skipped: bool = False


class Updater:
    """One optimizer update on a batch, as Chapter 9 makes it.

    Calling it with a batch (on the model's device) runs, on this process's
    share of the batch (:func:`~transformer_edu.training.distributed.my_parts`),
    in ``accumulate`` micro-batches: the forward pass under :func:`autocast`,
    the loss weighted by the part's share of the batch's target tokens (times
    the number of processes, which DDP's all-reduce divides by again), the
    backward pass; gradients are exchanged once, after the last part. Then
    clipping, the optimizer's step and the schedule's step, as in
    :func:`~transformer_edu.training.loop.fit`. Under float16 the loss is
    scaled; an update whose gradients overflowed is skipped (the scaler
    lowers its scale) and does not advance the schedule.

    Args:
        model: a :class:`~transformer_edu.Transformer`.
        optimizer, loss_fn, scheduler, clip_norm: as for :func:`~transformer_edu.training.loop.fit`.
        world: the :class:`~transformer_edu.training.distributed.World` of a
            ``torchrun`` job; ``None``: one process.
        accumulate: micro-batches per process and update (gradient accumulation:
            the same update with less memory).
        amp: ``None`` (float32, the paper's setting), ``"bf16"`` or ``"fp16"``.
            The weights and Adam's moments stay float32 either way.

    See Chapter 9.
    """

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, loss_fn: nn.Module,
                 scheduler: torch.optim.lr_scheduler.LRScheduler | None = None, clip_norm: float | None = 1.0, *,
                 world: World | None = None, accumulate: int = 1, amp: str | None = None) -> None:
        check_amp(amp)
        _validate.positive_int("accumulate", accumulate)
        if clip_norm is not None:
            _validate.positive_number("clip_norm", clip_norm)
        world = World() if world is None else world
        if not isinstance(world, World):
            raise TypeError(f"world must be a transformer_edu.training.distributed.World or None, "
                            f"got {type(world).__name__}")
        self.model, self.optimizer, self.loss_fn, self.scheduler = model, optimizer, loss_fn, scheduler
        self.clip_norm, self.world, self.accumulate, self.amp = clip_norm, world, accumulate, amp
        device = model_device(model)
        # Disabled (amp None or "bf16"), the scaler passes everything through: scale(loss) is loss,
        # unscale_ does nothing and step(optimizer) is optimizer.step().
        self.scaler = torch.amp.GradScaler(device.type, enabled=amp == "fp16")
        self.trainer = model if not world.distributed else nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None)

    def __call__(self, batch: Batch) -> Update:
        world, scaler = self.world, self.scaler
        self.optimizer.zero_grad(set_to_none=True)
        tokens = int((batch.tgt_out != self.model.config.pad_id).sum())  # the batch's, over every process
        parts = my_parts(batch, world, self.accumulate)
        loss_sum, loss_tokens = 0.0, 0
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            with nullcontext() if last or not world.distributed else self.trainer.no_sync():
                with autocast(batch.tgt_out.device, self.amp):
                    if part is None:  # no row for this part: a zero loss still joins the all-reduce
                        loss = sum(p.sum() for p in self.trainer.parameters()) * 0.0
                    else:
                        loss = self.loss_fn(self.trainer(*part.inputs), part.tgt_out)  # the part's mean
                weight = (part.n_tokens if part is not None else 0) / tokens * world.size
                scaler.scale(loss * weight).backward()
            if part is not None:
                loss_sum, loss_tokens = loss_sum + float(loss.detach()) * part.n_tokens, loss_tokens + part.n_tokens
        scaler.unscale_(self.optimizer)  # true gradients, so clipping sees their real norm
        norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_norm) \
            if self.clip_norm is not None else None
        scale = scaler.get_scale() if scaler.is_enabled() else None
        scaler.step(self.optimizer)
        scaler.update()
        skipped = scale is not None and scaler.get_scale() < scale  # fp16 overflow: no step was taken
        if not skipped and self.scheduler is not None:
            self.scheduler.step()
        return Update(loss_sum, loss_tokens, tokens, norm, skipped)


def fit_at_scale(
    model: nn.Module,
    train_batches: Batches,
    valid_batches: Batches | None = None,
    *,
    epochs: int,
    updater: Updater,
    max_steps: int | None = None,
    start_epoch: int = 0,
    start_batch: int = 0,
    history: dict[str, list] | None = None,
    on_epoch_end: Callable[[int, dict[str, list]], bool | None] | None = None,
    progress: bool = True,
) -> dict[str, list]:
    """Chapter 7's :func:`~transformer_edu.training.loop.fit`, with the updates of an :class:`Updater`.

    The loop is ``fit``'s: the epochs' batches, one update each, after each
    epoch a validation pass (under the updater's autocast), a record in the
    history and ``on_epoch_end``. What it adds:

    Args:
        model, train_batches, valid_batches, epochs, history, on_epoch_end:
            as for ``fit``. Under ``torchrun``, every process calls
            ``on_epoch_end`` and rank 0's answer decides for all.
        updater: makes each update (several processes, micro-batches, autocast);
            its optimizer's learning rate goes into the history.
        max_steps: stop after this many batches in all (counting those of
            earlier calls, ``history["step"]``), even in the middle of an
            epoch; that last, partial epoch gets a record and an
            ``on_epoch_end`` call like a whole one. The progress bar then
            counts updates. ``None``: no limit.
        start_epoch: epochs already done.
        start_batch: batches of epoch ``start_epoch`` already done (to resume
            in the middle of an epoch; those first batches are skipped). If
            ``history`` ends with the record of that partial epoch (a run
            stopped by ``max_steps``), the record is taken back and the
            epoch's record, when it ends, counts its batches too.
        progress: show a progress bar on rank 0.

    Returns:
        The history, as ``fit``'s; ``updates`` leaves out the updates float16
        skipped, and ``train_loss`` is the mean over every process's tokens.

    See Chapter 9.
    """
    if not isinstance(updater, Updater):
        raise TypeError(f"updater must be an Updater, got {type(updater).__name__}")
    _validate.positive_int("epochs", epochs)
    check_start(start_epoch, epochs, updater.clip_norm)
    _validate.non_negative_int("start_batch", start_batch)
    if max_steps is not None:
        _validate.positive_int("max_steps", max_steps)
    world = updater.world
    resumed = None  # the record of the partial epoch this call goes on with, if any
    if start_batch > 0 and history and history.get("epoch") and history["epoch"][-1] == start_epoch + 1:
        n = len(history["epoch"])
        resumed = {k: v.pop() for k, v in history.items() if isinstance(v, list) and len(v) == n}
    history = new_history(history, start_epoch)
    device = model_device(model)
    step = ((history["step"] or [None])[-1] or 0) + start_batch
    if max_steps is not None and step >= max_steps:
        raise ValueError(f"max_steps = {max_steps} batches are already done (step {step}): nothing to train")
    by_steps = max_steps is not None
    bar = tqdm(total=max_steps if by_steps else epochs, initial=step if by_steps else start_epoch,
               unit="step" if by_steps else "epoch", disable=not (progress and world.is_main))
    for epoch in range(start_epoch, epochs):
        model.train()
        start, tally, skipped = time.perf_counter(), Tally(), 0
        for index, batch in enumerate(epoch_batches(train_batches, epoch)):
            if epoch == start_epoch and index < start_batch:
                continue  # done before the checkpoint this run resumed from
            update = updater(batch.to(device))
            step += 1
            if by_steps:
                bar.update()
            if update.skipped:
                skipped += 1
            else:
                tally.add(update.loss_sum, update.loss_tokens, update.tokens, update.grad_norm)
                bar.set_postfix(loss=f"{update.loss_sum / max(update.loss_tokens, 1):.3f}", refresh=False)
            if by_steps and step >= max_steps:
                break
        if world.distributed:  # the epoch's loss over every process's share
            tally.loss_sum, tally.loss_tokens = world.all_reduce_sum([tally.loss_sum, tally.loss_tokens])
        seconds = time.perf_counter() - start
        if resumed is not None and epoch == start_epoch and "tokens" in resumed:  # the batches before the resume
            tally = Tally(tally.loss_sum + resumed["train_loss"] * resumed["tokens"],
                          tally.loss_tokens + resumed["tokens"], tally.tokens + resumed["tokens"],
                          tally.grad_sum + (resumed["grad_norm"] * resumed["updates"]
                                            if updater.clip_norm is not None else 0.0),
                          tally.updates + resumed["updates"])
            seconds += resumed["seconds"]
        if tally.updates == 0:
            if skipped:
                raise FloatingPointError(f"every one of the {skipped} updates of epoch {epoch} overflowed in float16")
            raise ValueError(f"train_batches gave no batches in epoch {epoch}")
        with autocast(device, updater.amp):
            valid = evaluate(model, epoch_batches(valid_batches, epoch, "valid_batches"), updater.loss_fn) \
                if valid_batches is not None else NOT_VALIDATED
        record = tally.record(epoch, step, valid, updater.optimizer.param_groups[0]["lr"], seconds,
                              clipped=updater.clip_norm is not None)
        for key, value in record.items():
            history[key].append(value)
        postfix = {"train": f"{record['train_loss']:.3f}", "valid": f"{record['valid_loss']:.3f}"}
        bar.set_postfix(postfix)
        if not by_steps:
            bar.update()
        stop = on_epoch_end is not None and on_epoch_end(epoch + 1, history)
        if world.broadcast(bool(stop)):  # rank 0 decides, so that no process waits for the others forever
            end_early(bar, step if by_steps else epoch + 1, epochs, postfix)
            break
        if by_steps and step >= max_steps:
            break
    bar.close()
    return history
