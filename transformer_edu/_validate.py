"""Argument checks shared by the public entry points.

Every check raises a ``ValueError`` or ``TypeError`` whose message names the
argument, the value it got and what was expected, so that a learner sees what
to fix instead of a stack trace from deep inside PyTorch.
"""

from __future__ import annotations

import torch
from torch import Tensor


def positive_int(name: str, value: object) -> int:
    """Return ``value`` if it is an integer ≥ 1, else raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


def probability(name: str, value: object) -> float:
    """Return ``value`` if it is a number in [0, 1), else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a float in [0, 1), got {type(value).__name__} ({value!r})")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value}")
    return float(value)


def tensor(name: str, value: object, ndim: int | tuple[int, ...] | None = None) -> Tensor:
    """Check that ``value`` is a tensor with one of the allowed numbers of dimensions."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if value.dim() not in allowed:
            expected = " or ".join(f"{n}-D" for n in allowed)
            raise ValueError(f"{name} must be {expected}, got shape {tuple(value.shape)}")
    return value


def float_tensor(name: str, value: object, ndim: int | tuple[int, ...] | None = None) -> Tensor:
    """Like :func:`tensor`, and the dtype must be floating point."""
    value = tensor(name, value, ndim)
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    return value


def width(name: str, value: Tensor, expected: int, what: str = "d_model") -> None:
    """Check the size of the last dimension."""
    if value.shape[-1] != expected:
        raise ValueError(
            f"{name} has last dimension {value.shape[-1]} (shape {tuple(value.shape)}), "
            f"expected {what} = {expected}"
        )


def token_ids(name: str, value: object, vocab_size: int, max_len: int | None = None) -> Tensor:
    """Check a (B, L) tensor of token ids against the vocabulary and length."""
    value = tensor(name, value, 2)
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        raise TypeError(
            f"{name} must hold integer token ids (torch.long), got dtype {value.dtype}; "
            "embeddings look ids up, so cast with .long() if the values are whole numbers"
        )
    if value.shape[1] == 0:
        raise ValueError(f"{name} has length 0 (shape {tuple(value.shape)}): a sequence needs a token")
    if max_len is not None and value.shape[1] > max_len:
        raise ValueError(
            f"{name} has length {value.shape[1]}, longer than max_len = {max_len}; "
            "raise TransformerConfig.max_len or shorten the input"
        )
    if value.numel():
        low, high = int(value.min()), int(value.max())
        if low < 0 or high >= vocab_size:
            bad = low if low < 0 else high
            raise ValueError(
                f"{name} holds token id {bad}, outside the vocabulary [0, {vocab_size - 1}]"
            )
    return value


def mask(name: str, value: object, target_shape: tuple[int, ...]) -> Tensor | None:
    """Check that a boolean mask broadcasts to ``target_shape`` (True = may attend)."""
    if value is None:
        return None
    value = tensor(name, value)
    if value.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a boolean tensor (True = may attend), got dtype {value.dtype}; "
            "build one with padding_mask / causal_mask / target_mask"
        )
    try:
        fits = torch.broadcast_shapes(value.shape, target_shape) == torch.Size(target_shape)
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"{name} of shape {tuple(value.shape)} does not broadcast to the attention "
            f"scores of shape {tuple(target_shape)} (B, H, Lq, Lk)"
        )
    return value
