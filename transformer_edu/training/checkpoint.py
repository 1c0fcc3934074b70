"""Saving and loading checkpoints (Chapter 7).

Two files, because they serve two purposes and differ tenfold in size:

* the **checkpoint** (``checkpoint.pt``): the model to keep, translate with
  or share: its configuration, its weights and whatever the caller adds (the
  vocabularies, the tokenizers, the training history). About the size of the
  weights.
* the **training state** (``resume.pt``), to resume training exactly where
  it stopped: the weights training reached, the optimizer's state (Adam keeps
  two numbers per weight), the scheduler's, the random number generators and
  whatever the caller adds (the epoch, the history, the averaged weights).
  Only resuming reads it.

Both store only tensors and plain Python values (dict, list, tuple, str, int,
float, bool, None), so they load with ``torch.load(..., weights_only=True)``,
which refuses to run code hidden in a pickle. Both are written atomically: to
a temporary file in the same directory, flushed to disk, then renamed over
the old file in one step, so a run killed at any moment leaves the previous
file whole.
"""

from __future__ import annotations

import os
import pickle
import random
import secrets
import zipfile
from pathlib import Path

import torch
from torch import Tensor, nn

from ..model import Transformer, TransformerConfig

__all__ = [
    "CHECKPOINT_NAME",
    "RESUME_NAME",
    "save_checkpoint",
    "load_checkpoint",
    "load_model",
    "save_training_state",
    "load_training_state",
    "resume",
]

FORMAT_VERSION = 2
"""Version 1 (until 2026-11-28) kept the training state inside the checkpoint."""
CHECKPOINT_NAME = "checkpoint.pt"  # the model, in a run's directory
RESUME_NAME = "resume.pt"  # the training state, beside it
MODEL, TRAINING_STATE = "model", "training state"  # the two kinds of file
WRITER = "python -m transformer_edu.train"  # named in the messages, as users know it
_PLAIN = (str, int, float, bool, type(None), Tensor)


def _resolve(path: str | os.PathLike, name: str) -> Path:
    """A directory stands for the file ``name`` inside it."""
    path = Path(path)
    return path / name if path.is_dir() else path


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


def _write(path: Path, content: dict) -> Path:
    """Write ``content`` to ``path`` atomically, with the permissions of any new file (0666 less the umask).

    A run killed mid-write leaves the old file whole and a temporary file
    ``.NAME.*.tmp`` beside it, which the next write to ``path`` removes.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to any new file
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(content, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable
        directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    return path


def _read(path: str | os.PathLike, name: str, map_location: str | torch.device) -> dict:
    """Load a file written by :func:`_write` without running any code; a clear ValueError if it is not one."""
    file = _resolve(path, name)
    if Path(path).is_dir() and not file.exists():
        raise FileNotFoundError(f"{str(path)!r} is a directory without {name}; give the directory "
                                f"{WRITER} --out wrote, or the file itself")
    if not file.is_file():
        raise FileNotFoundError(f"no checkpoint at {str(file)!r}: no such file or directory")
    not_ours = f"{str(file)!r} is not a checkpoint written by {WRITER}"
    if not zipfile.is_zipfile(file):  # torch.save writes a zip archive; a cut-off one has lost its directory
        raise ValueError(f"{not_ours}: it is not a PyTorch file, or it was cut off while it was written")
    try:
        content = torch.load(file, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        lines = [line for line in str(error).splitlines() if "Unsupported global" in line]
        reason = (lines[0].split("error:")[-1].strip() if lines else str(error).strip().splitlines()[-1])[:200]
        raise ValueError(
            f"{not_ours}: it holds objects other than tensors and plain Python values, which could run code "
            f"when loaded, so it was not opened (PyTorch says: {reason})"
        ) from None
    except (RuntimeError, EOFError, OSError) as error:
        raise ValueError(f"{not_ours}, or it is damaged: PyTorch cannot read it ({error})") from None
    version = content.get("format_version") if isinstance(content, dict) else None
    if version not in (1, FORMAT_VERSION):
        raise ValueError(f"{not_ours}: it holds no transformer_edu format_version (found {version!r})")
    return content


def save_checkpoint(path: str | os.PathLike, model: Transformer, *, extra: dict | None = None) -> Path:
    """Write the model's checkpoint: its configuration, its weights and ``extra``, atomically.

    Args:
        path: the file, or an existing directory (then ``path / CHECKPOINT_NAME``).
        model: the :class:`~transformer_edu.Transformer`; its config and weights are stored.
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
    return _write(_resolve(path, CHECKPOINT_NAME), {
        "format_version": FORMAT_VERSION,
        "kind": MODEL,
        "torch_version": str(torch.__version__),  # TorchVersion is not a plain str
        "config": model.config.to_dict(),
        "model": model.state_dict(),
        "extra": extra,
    })


def load_checkpoint(path: str | os.PathLike, *, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint written by :func:`save_checkpoint`, without running any code.

    Args:
        path: the file, or a directory holding ``CHECKPOINT_NAME``.
        map_location: where to put the tensors.

    Returns:
        A dict with ``config``, ``model`` (the weights), ``extra`` and ``format_version``.

    Raises:
        FileNotFoundError: nothing at ``path``, or a directory without a checkpoint.
        ValueError: the file is not a checkpoint written by this package: another kind of
            file, one cut off while it was written, one holding objects other than tensors
            and plain values (loading them could execute code), or a training state.
    """
    checkpoint = _read(path, CHECKPOINT_NAME, map_location)
    if checkpoint.get("kind") == TRAINING_STATE:
        raise ValueError(f"{str(path)!r} is the state {WRITER} keeps to resume training ({RESUME_NAME}), not "
                         f"a model; give its {CHECKPOINT_NAME}, or the directory holding both")
    checkpoint["model"] = _renamed(checkpoint["model"])
    return {key: checkpoint[key] for key in ("format_version", "config", "model", "extra")}


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


def save_training_state(
    path: str | os.PathLike,
    model: Transformer,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    *,
    epoch: int | None = None,
    extra: dict | None = None,
) -> Path:
    """Write what resuming training needs, atomically: the weights, the optimizer's and the
    scheduler's states, the random generators, ``epoch`` and ``extra`` (e.g. the history).

    Args:
        path: the file, or an existing directory (then ``path / RESUME_NAME``).
        model: the :class:`~transformer_edu.Transformer` being trained.
        optimizer, scheduler: their states are stored.
        epoch: epochs completed so far.
        extra: plain values to keep alongside, e.g. ``{"history": history}``.

    Returns:
        The path of the file written.

    See Chapter 7.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer (its config is stored), got {type(model).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
    extra = {} if extra is None else extra
    if not isinstance(extra, dict):
        raise TypeError(f"extra must be a dict, got {type(extra).__name__}")
    _check_plain(extra, "extra")
    return _write(_resolve(path, RESUME_NAME), {
        "format_version": FORMAT_VERSION,
        "kind": TRAINING_STATE,
        "torch_version": str(torch.__version__),
        "config": model.config.to_dict(),
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "rng": _rng_states(),
        "epoch": epoch,
        "extra": extra,
    })


def load_training_state(path: str | os.PathLike, *, map_location: str | torch.device = "cpu") -> dict:
    """Read a training state written by :func:`save_training_state`, without running any code.

    Args:
        path: the file, or a directory holding ``RESUME_NAME``.
        map_location: where to put the tensors.

    Returns:
        A dict with ``config``, ``model``, ``optimizer``, ``scheduler``, ``rng``, ``epoch`` and ``extra``.

    Raises:
        FileNotFoundError, ValueError: as :func:`load_checkpoint`; also for a model checkpoint,
            which holds no training state.
    """
    state = _read(path, RESUME_NAME, map_location)
    if state.get("kind") != TRAINING_STATE:
        old = " (an earlier version of transformer_edu kept it inside checkpoint.pt, format 1; " \
              "such a run can be translated with, not resumed)" if state["format_version"] == 1 else ""
        raise ValueError(f"{str(path)!r} holds a model, not the state to resume training ({RESUME_NAME}){old}")
    return state


def resume(
    path: str | os.PathLike,
    model: Transformer,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    *,
    restore_rng: bool = True,
) -> dict:
    """Load a training state into existing objects, to continue training exactly.

    Restores the weights, the optimizer and scheduler states (when given) and,
    with ``restore_rng``, the random generators, so that dropout draws the
    same numbers as in an uninterrupted run. Then call
    ``fit(..., start_epoch=state["epoch"], history=state["extra"]["history"])``.

    Returns:
        The training state (for ``epoch`` and ``extra``).

    See Chapter 7.
    """
    state = load_training_state(path, map_location=next(model.parameters()).device)
    _check_state_dict(model, state["model"])
    model.load_state_dict(state["model"])
    for name, obj in (("optimizer", optimizer), ("scheduler", scheduler)):
        if obj is not None:
            if state[name] is None:
                raise ValueError(f"the training state holds no {name} state; save it with "
                                 f"save_training_state(..., {name})")
            obj.load_state_dict(state[name])
    if restore_rng:
        _set_rng_states(state["rng"])
    return state
