"""Saving and loading checkpoints (Chapter 7).

A checkpoint is one file holding everything needed to rebuild the model and
to resume training exactly where it stopped: the configuration, the weights,
the optimizer's and the scheduler's state, the random number generators and
whatever the caller adds (the epoch, the history, the vocabularies).

Only tensors and plain Python values (dict, list, tuple, str, int, float,
bool, None) are stored, so the file loads with ``torch.load(...,
weights_only=True)``, which refuses to run code hidden in a pickle.
"""

from __future__ import annotations

import os
import pickle
import random
import tempfile
from pathlib import Path

import torch
from torch import Tensor, nn

from .model import Transformer, TransformerConfig

__all__ = ["CHECKPOINT_NAME", "save_checkpoint", "load_checkpoint", "load_model", "resume"]

FORMAT_VERSION = 1
CHECKPOINT_NAME = "checkpoint.pt"  # the file inside a checkpoint directory
_PLAIN = (str, int, float, bool, type(None), Tensor)


def _resolve(path: str | os.PathLike) -> Path:
    """A directory stands for the file ``CHECKPOINT_NAME`` inside it."""
    path = Path(path)
    return path / CHECKPOINT_NAME if path.is_dir() else path


def _check_plain(value: object, where: str) -> None:
    """Refuse, at save time, anything ``weights_only`` loading would refuse later."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int)):
                raise TypeError(f"{where} has a key of type {type(key).__name__}; use str or int keys")
            _check_plain(item, f"{where}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_plain(item, f"{where}[{i}]")
    elif not isinstance(value, _PLAIN):
        raise TypeError(
            f"{where} is a {type(value).__name__}; a checkpoint stores only tensors and plain values "
            "(dict, list, tuple, str, int, float, bool, None), e.g. vocab.to_dict() instead of the Vocab"
        )


def _rng_states() -> dict:
    states = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def _set_rng_states(states: dict) -> None:
    torch.set_rng_state(states["torch"].cpu())  # generator states live on the CPU
    random.setstate(states["python"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in states["cuda"]])


def save_checkpoint(
    path: str | os.PathLike,
    model: Transformer,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    *,
    epoch: int | None = None,
    extra: dict | None = None,
) -> Path:
    """Write a checkpoint atomically: a crash mid-write never leaves a broken file.

    The file is written under a temporary name in the same directory, flushed
    to disk (``fsync``) and then renamed over ``path`` in one step
    (``os.replace``).

    Args:
        path: the file, or an existing directory (then ``path / CHECKPOINT_NAME``).
        model: the :class:`~transformer_edu.Transformer`; its config and weights are stored.
        optimizer, scheduler: stored when given, to resume training.
        epoch: epochs completed so far.
        extra: plain values to keep alongside, e.g.
            ``{"src_vocab": src_vocab.to_dict(), "history": history}``.

    Returns:
        The path of the file written.

    See Chapter 7.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer (its config is stored), got {type(model).__name__}")
    extra = {} if extra is None else extra
    if not isinstance(extra, dict):
        raise TypeError(f"extra must be a dict, got {type(extra).__name__}")
    _check_plain(extra, "extra")
    checkpoint = {
        "format_version": FORMAT_VERSION,
        "torch_version": str(torch.__version__),  # TorchVersion is not a plain str
        "config": model.config.to_dict(),
        "model": model.state_dict(),
        "optimizer": None if optimizer is None else optimizer.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "rng": _rng_states(),
        "epoch": epoch,
        "step": None if scheduler is None else scheduler.last_epoch,
        "extra": extra,
    }
    path = _resolve(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(checkpoint, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(path: str | os.PathLike, *, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint written by :func:`save_checkpoint`, without running any code.

    Args:
        path: the file, or a directory holding ``CHECKPOINT_NAME``.
        map_location: where to put the tensors.

    Returns:
        A dict with ``config``, ``model``, ``optimizer``, ``scheduler``, ``rng``,
        ``epoch``, ``step``, ``extra`` and ``format_version``.

    Raises:
        FileNotFoundError: nothing at ``path``.
        ValueError: the file holds objects other than tensors and plain values
            (loading them could execute code), or is not a checkpoint of this format.
    """
    file = _resolve(path)
    if not file.is_file():
        raise FileNotFoundError(f"no checkpoint at {str(file)!r}")
    try:
        checkpoint = torch.load(file, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        lines = [line for line in str(error).splitlines() if "Unsupported global" in line]
        reason = (lines[0].split("error:")[-1].strip() if lines else str(error).strip().splitlines()[-1])[:200]
        raise ValueError(
            f"{str(file)!r} holds objects other than tensors and plain Python values, and loading "
            "them could run arbitrary code, so it was refused (weights_only=True). Only if you trust "
            f"the file, open it with torch.load(path, weights_only=False). PyTorch says: {reason}"
        ) from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format_version") != FORMAT_VERSION:
        version = checkpoint.get("format_version") if isinstance(checkpoint, dict) else None
        raise ValueError(
            f"{str(file)!r} is not a transformer_edu checkpoint of format version {FORMAT_VERSION} "
            f"(found format_version = {version!r}); write it with save_checkpoint"
        )
    checkpoint["model"] = _renamed(checkpoint["model"])
    return checkpoint


def _renamed(state: dict[str, Tensor]) -> dict[str, Tensor]:
    """The weights under today's names: the output layer was called ``generator`` until 2026-11-27."""
    return {("output." + k[len("generator."):] if k.startswith("generator.") else k): v for k, v in state.items()}


def _check_state_dict(model: nn.Module, state: dict[str, Tensor]) -> None:
    """A readable ValueError when ``state`` does not fit ``model``."""
    expected = model.state_dict()
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    shapes = [
        f"{k}: checkpoint {tuple(state[k].shape)}, model {tuple(expected[k].shape)}"
        for k in expected
        if k in state and tuple(state[k].shape) != tuple(expected[k].shape)
    ]
    if not (missing or unexpected or shapes):
        return

    def listing(title: str, items: list[str]) -> str:
        shown = "\n    ".join(items[:8])
        more = f"\n    … and {len(items) - 8} more" if len(items) > 8 else ""
        return f"\n  {title} ({len(items)}):\n    {shown}{more}" if items else ""

    raise ValueError(
        "the stored weights do not fit the model built from the stored config:"
        + listing("missing from the checkpoint", missing)
        + listing("unexpected in the checkpoint", unexpected)
        + listing("shape mismatches", shapes)
    )


def load_model(path: str | os.PathLike | dict, *, map_location: str | torch.device = "cpu") -> Transformer:
    """Rebuild the :class:`~transformer_edu.Transformer` of a checkpoint, in eval mode.

    Args:
        path: a checkpoint file or directory, or a dict from :func:`load_checkpoint`.
        map_location: the device of the model.

    Raises:
        ValueError: the weights do not fit the config; the message lists the
            missing and unexpected names and the shape mismatches.
    """
    checkpoint = path if isinstance(path, dict) else load_checkpoint(path, map_location=map_location)
    model = Transformer(TransformerConfig.from_dict(checkpoint["config"]))
    _check_state_dict(model, checkpoint["model"])
    model.load_state_dict(checkpoint["model"])
    return model.to(map_location).eval()


def resume(
    path: str | os.PathLike,
    model: Transformer,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    *,
    restore_rng: bool = True,
) -> dict:
    """Load a checkpoint's states into existing objects, to continue training exactly.

    Restores the weights, the optimizer and scheduler states (when given) and,
    with ``restore_rng``, the random generators, so that dropout draws the
    same numbers as in an uninterrupted run. Then call
    ``fit(..., start_epoch=checkpoint["epoch"], history=checkpoint["extra"]["history"])``.

    Returns:
        The checkpoint dict (for ``epoch`` and ``extra``).

    See Chapter 7.
    """
    checkpoint = load_checkpoint(path, map_location=next(model.parameters()).device)
    _check_state_dict(model, checkpoint["model"])
    model.load_state_dict(checkpoint["model"])
    for name, obj in (("optimizer", optimizer), ("scheduler", scheduler)):
        if obj is not None:
            if checkpoint[name] is None:
                raise ValueError(
                    f"the checkpoint holds no {name} state; save it with save_checkpoint(..., {name})"
                )
            obj.load_state_dict(checkpoint[name])
    if restore_rng:
        _set_rng_states(checkpoint["rng"])
    return checkpoint
