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
    if not _broadcasts(tuple(value.shape), tuple(target_shape)):
        raise ValueError(
            f"{name} of shape {tuple(value.shape)} does not broadcast to the attention "
            f"scores of shape {tuple(target_shape)} (B, H, Lq, Lk)"
        )
    return value


def _broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (a plain tuple comparison, no tensor made)."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


def attention_mask(name: str, value: object, batch: int, heads: int, queries: int, keys: int) -> None:
    """Check a mask for the scores (B, H, Lq, Lk) of a multi-head attention; ``None`` passes.

    It must be boolean, 4-D (a (B, S) mask would silently line up B with the
    queries when B == S) and broadcast to (B, H, Lq, Lk).
    """
    if mask(name, value, (batch, heads, queries, keys)) is None:
        return
    if value.dim() != 4:
        raise ValueError(
            f"{name} must be 4-D (B or 1, 1 or H, Lq or 1, Lk), got shape {tuple(value.shape)}; "
            "build it with padding_mask (B, 1, 1, S), causal_mask (1, 1, L, L) or target_mask (B, 1, T, T)"
        )


def sequence(name: str, value: object, d_model: int) -> Tensor:
    """Check a batch of vectors (B, L, D): a 3-D floating-point tensor of width ``d_model``."""
    float_tensor(name, value)
    if value.dim() != 3:
        raise ValueError(
            f"{name} must be 3-D (B, L, D) with the batch first, got shape {tuple(value.shape)}; "
            "add a batch dimension with .unsqueeze(0)"
        )
    width(name, value, d_model)
    return value


def attention_inputs(query: object, key: object, value: object, mask: object, d_model: int, heads: int) -> None:
    """The checks of :meth:`MultiHeadAttention.forward <transformer_edu.MultiHeadAttention.forward>`."""
    for name, x in (("query", query), ("key", key), ("value", value)):
        sequence(name, x, d_model)
    if not (query.shape[0] == key.shape[0] == value.shape[0]):
        raise ValueError(
            f"query, key and value must have the same batch size, got "
            f"{query.shape[0]}, {key.shape[0]} and {value.shape[0]}"
        )
    if key.shape[1] != value.shape[1]:
        raise ValueError(f"key and value must have the same length, got {key.shape[1]} and {value.shape[1]}")
    attention_mask("mask", mask, query.shape[0], heads, query.shape[1], key.shape[1])


def heads_inputs(query: object, key: object, value: object, attn_mask: object, dropout_p: object) -> None:
    """The checks of :func:`~transformer_edu.scaled_dot_product_attention`: (..., L, d) tensors that fit."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        float_tensor(name, t)
        if t.dim() < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., L, d), got shape {tuple(t.shape)}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"query and key must have the same width d_k, got query {tuple(query.shape)} "
            f"and key {tuple(key.shape)}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"key and value must have the same length Lk, got key {tuple(key.shape)} "
            f"and value {tuple(value.shape)}"
        )
    probability("dropout_p", dropout_p)
    if attn_mask is not None:
        scores = (*torch.broadcast_shapes(query.shape[:-2], key.shape[:-2]), query.shape[-2], key.shape[-2])
        mask("mask", attn_mask, scores)


def decoder_inputs(
    x: object, memory: object, src_mask: object, tgt_mask: object, cache: object, *, cache_type: type,
    d_model: int, heads: int, n_layers: int | None = None, name: str = "x",
) -> None:
    """The checks of a decoder's entry points (:class:`~transformer_edu.DecoderLayer`,
    :class:`~transformer_edu.Decoder`, :meth:`Transformer.decode <transformer_edu.Transformer.decode>`).

    ``x`` is the decoder's input (B, T, D); with a ``cache`` (a
    ``cache_type``, i.e. :class:`~transformer_edu.KVCache`, of ``n_layers``
    layers unless that is ``None``) it holds only the new positions, and
    ``tgt_mask`` covers the cached ones too.
    """
    sequence(name, x, d_model)
    sequence("memory", memory, d_model)
    batch, steps = x.shape[:2]
    if batch != memory.shape[0]:
        raise ValueError(f"{name} and memory must have the same batch size, got {batch} and {memory.shape[0]}")
    cached = 0
    if cache is not None:
        if not isinstance(cache, cache_type):
            raise TypeError(f"cache must be a KVCache (see Transformer.new_cache), got {type(cache).__name__}")
        if n_layers is not None and len(cache.layers) != n_layers:
            raise ValueError(
                f"cache has {len(cache.layers)} layers, the decoder has {n_layers}; "
                "create it with KVCache(n_layers)"
            )
        rows = cache.batch_size
        if rows is not None and rows != batch:
            raise ValueError(
                f"the cache holds {rows} rows but {name} has batch size {batch}; "
                "use one cache per batch (cache.reorder keeps or repeats rows)"
            )
        cache.check_room(steps)
        cached = cache.length
    attention_mask("src_mask", src_mask, batch, heads, steps, memory.shape[1])
    attention_mask("tgt_mask", tgt_mask, batch, heads, steps, cached + steps)


def non_negative_int(name: str, value: object) -> int:
    """Return ``value`` if it is an integer ≥ 0, else raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < 0:
        raise ValueError(f"{name} must be at least 0, got {value}")
    return value


def positive_number(name: str, value: object) -> float:
    """Return ``value`` if it is a finite number > 0, else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} ({value!r})")
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be a positive number, got {value}")
    return float(value)


def one_of(name: str, value: object, choices: tuple) -> object:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def device(name: str, value: object) -> torch.device:
    """The ``torch.device`` ``value`` names, if this machine has it (``"cuda"`` needs a CUDA GPU), else raise."""
    if isinstance(value, torch.device):
        found = value
    else:
        try:
            found = torch.device(value)
        except (RuntimeError, TypeError, ValueError):
            raise ValueError(f"{name} must be a device such as 'cpu', 'cuda' or 'cuda:1', got {value!r}") from None
    if found.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"{name} is {str(value)!r}, but PyTorch sees no CUDA GPU on this machine; use 'cpu'")
        if found.index is not None and found.index >= count:
            raise ValueError(f"{name} is {str(value)!r}, but this machine has {count} CUDA GPU(s), numbered from 0")
    return found
