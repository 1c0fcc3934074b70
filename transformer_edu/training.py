"""Training the Transformer (Chapter 7).

The paper's recipe, piece by piece: a loss with label smoothing, the Adam
optimizer with β = (0.9, 0.98) and ε = 1e-9, a learning rate that warms up
linearly and then decays with the inverse square root of the step, a
training loop that reports the training and validation loss after every
epoch, and the average of the last checkpoints' weights. Gradient clipping
is our addition.

Shape legend: B batch, S source length, T target length, V target vocabulary
size, N = B · T positions.
"""

from __future__ import annotations

import math
import time
from collections import deque
from contextlib import contextmanager, nullcontext
from typing import Callable, Iterable, Iterator

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from tqdm.auto import tqdm

from . import _validate
from .distributed import World, my_parts

__all__ = [
    "LabelSmoothingLoss",
    "noam_rate",
    "noam_lambda",
    "warmup_schedule",
    "make_optimizer",
    "perplexity",
    "AMP_DTYPES",
    "autocast",
    "evaluate",
    "fit",
    "BestWeights",
    "AveragedWeights",
]


class LabelSmoothingLoss(nn.Module):
    r"""Label-smoothed loss in its KL-divergence form, ignoring padding.

    Instead of the one-hot target, the model is asked to match the smoothed
    distribution q that keeps 1 − ε of the mass on the gold token and spreads
    ε uniformly over *all* V tokens, the gold one included:

        q(k) = (1 − ε) · [k = gold] + ε / V

    This is the convention of ``nn.CrossEntropyLoss(label_smoothing=ε)``. (The
    paper's tensor2tensor code spreads ε over the V − 1 other tokens instead,
    which is the same distribution with ε' = ε · V / (V − 1).) The loss is

        KL(q ‖ p) = Σ_k q(k) · (log q(k) − log p(k)) = CE_ε(p) − H(q),

    so it has the same gradients as PyTorch's label-smoothed cross-entropy
    CE_ε and differs from it by the constant entropy H(q) of the target; a
    model that predicts exactly q reaches a loss of 0. The paper gives only
    the value ε_ls = 0.1; this KL form follows tensor2tensor's implementation.

    Args:
        vocab_size: number of target tokens V.
        smoothing: the mass ε moved off the gold token, in [0, 1).
        pad_id: target id of padding; those positions do not count.

    Shape:
        - logits: (B, T, V) or (N, V), unnormalised scores
        - target: (B, T) or (N,), token ids
        - output: scalar, the mean over the non-padding positions

    See Chapter 7.
    """

    def __init__(self, vocab_size: int, smoothing: float = 0.1, pad_id: int = 0) -> None:
        super().__init__()
        self.vocab_size = _validate.positive_int("vocab_size", vocab_size)
        self.smoothing = _validate.probability("smoothing", smoothing)
        if isinstance(pad_id, bool) or not isinstance(pad_id, int) or not 0 <= pad_id < vocab_size:
            raise ValueError(f"pad_id must be an id in [0, {vocab_size - 1}], got {pad_id!r}")
        self.pad_id = pad_id

    def target_distribution(self, target: Tensor) -> Tensor:
        """The smoothed distribution q for each target id (padding included).

        Shape:
            - target: (*), token ids
            - output: (*, V), each row sums to 1
        """
        self._check_ids(target)
        eps = self.smoothing
        q = torch.full((*target.shape, self.vocab_size), eps / self.vocab_size, device=target.device)
        return q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1.0 - eps))  # (*, V)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        _validate.float_tensor("logits", logits, (2, 3))
        _validate.width("logits", logits, self.vocab_size, "vocab_size")
        if tuple(target.shape) != tuple(logits.shape[:-1]):
            raise ValueError(
                f"target of shape {tuple(target.shape)} does not match logits of shape "
                f"{tuple(logits.shape)}; expected target shape {tuple(logits.shape[:-1])}"
            )
        log_probs = logits.float().log_softmax(dim=-1).reshape(-1, self.vocab_size)  # (N, V)
        target = target.reshape(-1)  # (N,)
        real = target != self.pad_id
        n_real = int(real.sum())
        if n_real == 0:
            raise ValueError(f"target holds only padding (pad_id = {self.pad_id}): no position to learn from")
        q = self.target_distribution(target[real])  # (n, V)
        return F.kl_div(log_probs[real], q, reduction="sum") / n_real

    def _check_ids(self, target: Tensor) -> None:
        _validate.tensor("target", target)
        if target.is_floating_point() or target.dtype == torch.bool:
            raise TypeError(f"target must hold integer token ids, got dtype {target.dtype}")
        if target.numel() and (int(target.min()) < 0 or int(target.max()) >= self.vocab_size):
            raise ValueError(
                f"target holds ids in [{int(target.min())}, {int(target.max())}], "
                f"outside the vocabulary [0, {self.vocab_size - 1}]"
            )

    def extra_repr(self) -> str:
        return f"vocab_size={self.vocab_size}, smoothing={self.smoothing}, pad_id={self.pad_id}"


# --------------------------------------------------------------------------
# Optimizer and learning-rate schedule
# --------------------------------------------------------------------------


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
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 0:
        raise ValueError(f"factor must be a positive number, got {factor!r}")
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


def perplexity(mean_nll: float | Tensor) -> float:
    """exp(mean negative log-likelihood per token), in nats.

    Use the plain cross-entropy (e.g. ``evaluate(...)["nll"]``), not the
    label-smoothed loss, which is not a log-likelihood.
    """
    return math.exp(float(mean_nll))


# --------------------------------------------------------------------------
# The training loop
# --------------------------------------------------------------------------

Batches = Callable[[int], Iterable] | Iterable


def _epoch_batches(name: str, batches: Batches, epoch: int) -> Iterable:
    """Batches of one epoch: call a function with the epoch, or reuse a collection."""
    if callable(batches):
        return batches(epoch)
    if iter(batches) is batches:
        raise TypeError(
            f"{name} is a one-pass iterator, which would be empty from the second epoch on; "
            "pass a list of batches, or a function epoch -> batches, e.g. "
            "lambda epoch: make_batches(pairs, src_vocab, tgt_vocab, 64, shuffle=True, seed=epoch)"
        )
    return batches


def _device_of(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


# --------------------------------------------------------------------------
# Mixed precision
# --------------------------------------------------------------------------

#: The names ``amp=`` takes, and the dtype each one computes in.
AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def _check_amp(amp: str | None) -> None:
    if amp is not None and amp not in AMP_DTYPES:
        raise ValueError(f"amp must be None, 'bf16' or 'fp16', got {amp!r}")


def autocast(device: torch.device | str, amp: str | None):
    """The context in which to run the model for ``amp`` on ``device``.

    ``None`` is float32 (a context that changes nothing); ``"bf16"`` and
    ``"fp16"`` are :func:`torch.autocast` with that dtype: matrix products in
    16 bits, softmax, normalisation and losses in float32. bfloat16 keeps
    float32's range, so it needs nothing else; float16 gradients can underflow,
    so :func:`fit` scales the loss with a :class:`torch.amp.GradScaler` (as on
    a Colab T4, which has no bfloat16 units).

    Example::

        with autocast("cuda", "bf16"):
            logits = model(src, tgt_in)
    """
    _check_amp(amp)
    if amp is None:
        return nullcontext()
    device_type = torch.device(device).type
    return torch.autocast(device_type=device_type, dtype=AMP_DTYPES[amp])


@torch.no_grad()
def evaluate(
    model: nn.Module, batches: Iterable, loss_fn: nn.Module | None = None, *, amp: str | None = None
) -> dict[str, float]:
    """Loss over ``batches`` with teacher forcing, dropout off.

    Args:
        model: a :class:`~transformer_edu.Transformer` (or a :class:`~transformer_edu.LanguageModel`).
        batches: :class:`~transformer_edu.data.batching.Batch` es (``src``, ``tgt_in``, ``tgt_out``), or
            any batches with ``inputs`` (what the model takes) and ``tgt_out``, such as the
            decoder-only model's :class:`~transformer_edu.data.sequences.SequenceBatch` (Chapter 10).
        loss_fn: e.g. a :class:`LabelSmoothingLoss`; its mean per token is reported as ``"loss"``.
        amp: ``None`` (float32), ``"bf16"`` or ``"fp16"``: see :func:`autocast`.

    Returns:
        ``{"loss": …, "nll": …, "tokens": …}``: ``nll`` is the plain cross-entropy per
        target token (no smoothing), so ``perplexity(result["nll"])`` is the perplexity.
    """
    _check_amp(amp)
    was_training = model.training
    model.eval()
    device, pad_id = _device_of(model), model.config.pad_id
    loss_sum = nll_sum = 0.0
    tokens = 0
    for batch in batches:
        batch = batch.to(device)
        with autocast(device, amp):
            logits = model(*batch.inputs)  # (B, T, V)
        logits = logits.float()  # the losses in float32
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
    amp: str | None = None,
    max_steps: int | None = None,
    start_batch: int = 0,
    accumulate: int = 1,
    world: World | None = None,
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
        optimizer, scheduler: see :func:`make_optimizer`, :func:`warmup_schedule`.
        loss_fn: e.g. :class:`LabelSmoothingLoss`; returns the mean loss per token.
        clip_norm: largest total gradient norm; ``None`` turns clipping off.
            Clipping is our addition, not the paper's recipe (tensor2tensor's
            base setting clips nothing).
        start_epoch: epochs already done, to resume from a checkpoint
            (restore the model, optimizer, scheduler and RNG first, see
            :func:`~transformer_edu.checkpoint.resume`).
        history: the history returned earlier, to extend when resuming.
        on_epoch_end: called as ``on_epoch_end(epoch, history)`` after each
            epoch (``epoch`` counts from 1); return ``True`` to stop early.
            Use it to plot curves, save checkpoints or translate examples.
        progress: show a progress bar (``tqdm.auto``: it renders in Jupyter too).
            When ``on_epoch_end`` stops training early, the bar ends full,
            its total cut to the epochs run, and its postfix says so
            (``stopped=early, 8 planned``).
        amp: ``None`` trains in float32 (the paper's setting); ``"bf16"``
            runs the forward pass and the loss under bfloat16 autocast;
            ``"fp16"`` under float16 autocast, with the loss scaled by a
            :class:`torch.amp.GradScaler` so small gradients do not flush to
            zero. An update whose gradients overflowed is skipped (the scaler
            lowers its scale) and does not advance the scheduler. Validation
            runs under the same autocast. The weights and Adam's moments stay
            float32 either way.
        max_steps: stop after this many batches in all (counting those of
            earlier calls, ``history["step"]``), even in the middle of an
            epoch; that last, partial epoch gets a record and an
            ``on_epoch_end`` call like a whole one. ``None``: no limit.
        start_batch: batches of epoch ``start_epoch`` already done (to resume
            in the middle of an epoch; those first batches are skipped). If
            ``history`` ends with the record of that partial epoch (a run
            stopped by ``max_steps``), the record is taken back and the
            epoch's record, when it ends, counts its batches too.
        accumulate: run each batch in this many micro-batches, adding up
            their gradients before the one update (gradient accumulation:
            the same update with less memory).
        world: the :class:`~transformer_edu.distributed.World` of a
            ``torchrun`` job (Chapter 9): the model is wrapped in
            ``DistributedDataParallel``, each process runs its share of every
            batch (:func:`~transformer_edu.distributed.my_parts`) and only
            rank 0 shows the progress bar. Every part's mean loss is weighted
            by its share of the batch's target tokens, so that the update is
            the one of the whole batch, whatever the number of processes and
            micro-batches. ``None``: one process.

    Returns:
        The history, a dict of equally long lists, one entry per epoch:
        ``epoch``, ``train_loss``, ``valid_loss``, ``valid_nll`` (plain
        cross-entropy; ``NaN`` without validation), ``lr`` (after the epoch),
        ``grad_norm`` (mean norm before clipping), ``tokens_per_s``,
        ``seconds``, ``step`` (batches done in all, by the end of the
        epoch), ``tokens`` (target tokens trained on) and ``updates`` (those
        not skipped by fp16). ``on_epoch_end`` may add lists of its own (e.g. a
        validation exact match).

    See Chapter 7.
    """
    _validate.positive_int("epochs", epochs)
    _validate.positive_int("accumulate", accumulate)
    if max_steps is not None:
        _validate.positive_int("max_steps", max_steps)
    _check_amp(amp)
    if isinstance(start_epoch, bool) or not isinstance(start_epoch, int) or not 0 <= start_epoch <= epochs:
        raise ValueError(f"start_epoch must be an int in [0, epochs = {epochs}], got {start_epoch!r}")
    if isinstance(start_batch, bool) or not isinstance(start_batch, int) or start_batch < 0:
        raise ValueError(f"start_batch must be an int >= 0, got {start_batch!r}")
    world = World() if world is None else world
    if not isinstance(world, World):
        raise TypeError(f"world must be a transformer_edu.distributed.World or None, got {type(world).__name__}")
    if clip_norm is not None and not clip_norm > 0:
        raise ValueError(f"clip_norm must be positive or None, got {clip_norm!r}")
    keys = ("epoch", "train_loss", "valid_loss", "valid_nll", "lr", "grad_norm", "tokens_per_s", "seconds")
    history = {k: [] for k in keys} if history is None else history
    resumed = None  # the record of the partial epoch this call goes on with, if any
    if start_batch > 0 and history.get("epoch") and history["epoch"][-1] == start_epoch + 1:
        n = len(history["epoch"])
        resumed = {k: v.pop() for k, v in history.items() if isinstance(v, list) and len(v) == n}
    if not set(keys) <= set(history) or len(history["epoch"]) != start_epoch:
        raise ValueError(
            f"history must be the dict fit returned, with one record per epoch done "
            f"(start_epoch = {start_epoch}); got keys {sorted(history)} and "
            f"{len(history.get('epoch', []))} records"
        )
    device, pad_id = _device_of(model), model.config.pad_id
    step = ((history.get("step") or [None])[-1] or 0) + start_batch if history["epoch"] else start_batch
    if max_steps is not None and step >= max_steps:
        raise ValueError(f"max_steps = {max_steps} batches are already done (step {step}): nothing to train")
    # Disabled (amp None or "bf16"), the scaler passes everything through: scale(loss) is loss,
    # unscale_ does nothing and step(optimizer) is optimizer.step().
    scaler = torch.amp.GradScaler(device.type, enabled=amp == "fp16")
    trainer = _data_parallel(model, world)
    by_steps = max_steps is not None
    bar = tqdm(total=max_steps if by_steps else epochs, initial=step if by_steps else start_epoch,
               unit="step" if by_steps else "epoch", disable=not (progress and world.is_main))
    for epoch in range(start_epoch, epochs):
        model.train()
        start = time.perf_counter()
        loss_sum, mine, grad_sum, tokens, updates, skipped = 0.0, 0, 0.0, 0, 0, 0
        earlier = {"loss_sum": 0.0, "tokens": 0, "grad_sum": 0.0, "updates": 0, "seconds": 0.0}
        if resumed is not None and epoch == start_epoch and "tokens" in resumed:  # the batches before the resume
            earlier = {"loss_sum": resumed["train_loss"] * resumed["tokens"], "tokens": resumed["tokens"],
                       "grad_sum": resumed["grad_norm"] * resumed["updates"] if clip_norm is not None else 0.0,
                       "updates": resumed["updates"], "seconds": resumed["seconds"]}
        for index, batch in enumerate(_epoch_batches("train_batches", train_batches, epoch)):
            if epoch == start_epoch and index < start_batch:
                continue  # done before the checkpoint this run resumed from
            batch = batch.to(device)
            optimizer.zero_grad(set_to_none=True)
            n = int((batch.tgt_out != pad_id).sum())  # the batch's target tokens, over every process
            part_loss, part_tokens = _accumulate_gradients(trainer, batch, n, loss_fn, scaler, world, accumulate, amp)
            scaler.unscale_(optimizer)  # true gradients, so clipping sees their real norm
            norm = nn.utils.clip_grad_norm_(model.parameters(), clip_norm) if clip_norm is not None else None
            scale = scaler.get_scale() if scaler.is_enabled() else None
            scaler.step(optimizer)
            scaler.update()
            step += 1
            if by_steps:
                bar.update()
            if scale is not None and scaler.get_scale() < scale:  # fp16 overflow: this update was skipped
                skipped += 1
            else:
                if norm is not None:
                    grad_sum += float(norm)
                if scheduler is not None:
                    scheduler.step()
                loss_sum, mine = loss_sum + part_loss, mine + part_tokens
                tokens, updates = tokens + n, updates + 1
                bar.set_postfix(loss=f"{part_loss / max(part_tokens, 1):.3f}", refresh=False)
            if by_steps and step >= max_steps:
                break
        if world.distributed:  # the epoch's loss over every process's share
            loss_sum, mine = world.all_reduce_sum([loss_sum, mine])
        loss_sum, mine, tokens = loss_sum + earlier["loss_sum"], mine + earlier["tokens"], tokens + earlier["tokens"]
        grad_sum, updates = grad_sum + earlier["grad_sum"], updates + earlier["updates"]
        if updates == 0:
            if skipped:
                raise FloatingPointError(f"every one of the {skipped} updates of epoch {epoch} overflowed in float16")
            raise ValueError(f"train_batches gave no batches in epoch {epoch}")
        seconds = time.perf_counter() - start + earlier["seconds"]
        valid = (
            evaluate(model, _epoch_batches("valid_batches", valid_batches, epoch), loss_fn, amp=amp)
            if valid_batches is not None
            else {"loss": float("nan"), "nll": float("nan")}
        )
        record = {
            "epoch": epoch + 1,
            "train_loss": loss_sum / mine,
            "valid_loss": valid["loss"],
            "valid_nll": valid["nll"],
            "lr": optimizer.param_groups[0]["lr"],
            "grad_norm": grad_sum / updates if clip_norm is not None else float("nan"),
            "tokens_per_s": tokens / seconds,
            "seconds": seconds,
            "step": step,
            "tokens": tokens,
            "updates": updates,
        }
        for key in ("step", "tokens", "updates"):  # a history from before these were recorded
            history.setdefault(key, [None] * len(history["epoch"]))
        for key, value in record.items():
            history[key].append(value)
        postfix = {"train": f"{record['train_loss']:.3f}", "valid": f"{record['valid_loss']:.3f}"}
        bar.set_postfix(postfix)
        if not by_steps:
            bar.update()
        stop = on_epoch_end is not None and on_epoch_end(epoch + 1, history)
        if world.broadcast(bool(stop)):  # rank 0 decides, so that no process waits for the others forever
            done = step if by_steps else epoch + 1
            if done < bar.total:  # stopped early: end the bar full, or Jupyter draws it red like a crash
                bar.total = done
                if hasattr(bar, "container"):  # tqdm.notebook keeps the maximum in its widget too
                    bar.container.children[1].max = done
                bar.set_postfix({**postfix, "stopped": f"early, {epochs} planned"})
            break
        if by_steps and step >= max_steps:
            break
    bar.close()
    return history


def _data_parallel(model: nn.Module, world: World) -> nn.Module:
    """``model`` wrapped in ``DistributedDataParallel`` for a job of several processes, else itself."""
    if not world.distributed:
        return model
    device = _device_of(model)
    return nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)


def _accumulate_gradients(trainer: nn.Module, batch, total: int, loss_fn: nn.Module, scaler: torch.amp.GradScaler,
                          world: World, accumulate: int, amp: str | None) -> tuple[float, int]:
    """Forward and backward passes over this process's share of ``batch``; returns the sum of its
    losses per target token and its number of target tokens. ``total``: the target tokens of the
    whole batch.

    Each part's mean loss is weighted by ``tokens in the part / tokens in the batch``, times the
    number of processes, which DDP's all-reduce divides by again: the gradients add up to those of
    the mean loss over the whole batch. Gradients are exchanged once, after the last part.
    """
    parts = my_parts(batch, world, accumulate)
    device = batch.tgt_out.device
    loss_sum, mine = 0.0, 0
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        sync = nullcontext() if last or not world.distributed else trainer.no_sync()
        with sync:
            with autocast(device, amp):
                if part is None:  # no row for this part: a zero loss still joins the all-reduce
                    loss = sum(p.sum() for p in trainer.parameters()) * 0.0
                else:
                    loss = loss_fn(trainer(*part.inputs), part.tgt_out)  # mean over the part's tokens
            weight = (part.n_tokens if part is not None else 0) / total * world.size
            scaler.scale(loss * weight).backward()
        if part is not None:
            loss_sum, mine = loss_sum + float(loss.detach()) * part.n_tokens, mine + part.n_tokens
    return loss_sum, mine



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
