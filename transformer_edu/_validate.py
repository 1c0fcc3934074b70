"""Argument checks, each written once, and the doors where they run.

Every check raises a ``TypeError`` (a value of the wrong type) or a
``ValueError`` (the right type, a wrong value) whose message names the
argument, the value it got and what was expected, so that a learner sees what
to fix instead of a stack trace from deep inside PyTorch.

Checks run at the doors. :func:`door` wraps a public function or a module's
``forward``: a call from outside the package checks its arguments once, and
what that call runs in turn (the layers of a model, the steps of a decoding
loop) computes without checking again, since its arguments come from code
that has passed a door already. So ``te.LayerNorm(8)(x)`` checks ``x``, and
the layer norms inside a model do not. ``torch.nn`` works the same way: its
functional entry points check, the layers inside trust their caller.

The checks never import the package's classes: a cache or a model is checked
by what the code uses of it (its attributes), so that every module may import
this one and none of them imports it back.
"""

from __future__ import annotations

import functools
import threading
from typing import Callable, TypeVar

import torch
from torch import Tensor, nn

F = TypeVar("F", bound=Callable[..., object])


# --------------------------------------------------------------------------
# The doors
# --------------------------------------------------------------------------


class _Calls(threading.local):
    inside = False  # a checked call is running in this thread


_calls = _Calls()


def door(check: Callable[..., object]) -> Callable[[F], F]:
    """Decorate a public entry point: ``check`` the arguments of a call from outside the package.

    ``check`` is called with the decorated function's own arguments (``self``
    first, for a method) and raises for bad input. While the checked call
    runs, every door it passes lets its arguments through unchecked: they come
    from the package's own code.

    Example::

        @_validate.door(lambda self, x: _validate.features("x", x, self.d_model))
        def forward(self, x):
            ...
    """

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def checked_call(*args, **kwargs):
            if _calls.inside:  # called by the package: checked at the outer door
                return function(*args, **kwargs)
            check(*args, **kwargs)
            _calls.inside = True
            try:
                return function(*args, **kwargs)
            finally:
                _calls.inside = False

        return checked_call  # type: ignore[return-value]

    return decorate


# --------------------------------------------------------------------------
# Numbers and other plain values
# --------------------------------------------------------------------------


def int_in_range(
    name: str, value: object, low: int, high: int | None = None, *, where: str = "", why: str = ""
) -> int:
    """Return ``value`` if it is an int (not a bool) with ``low ≤ value`` (``≤ high``), else raise.

    ``where`` (e.g. ``"make_batches"``) prefixes the message with the function's
    name; ``why`` (e.g. ``" (the exporter's oldest)"``) follows the expected range.
    """
    prefix = f"{where}: " if where else ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{prefix}{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < low or (high is not None and value > high):
        expected = f"at least {low}" if high is None else f"in {low} … {high}"
        raise ValueError(f"{prefix}{name} must be {expected}{why}, got {value}")
    return value


def int_choices(name: str, values: object, low: int, high: int) -> tuple[int, ...]:
    """Return ``values`` as a tuple of distinct ints in ``low … high`` (at least one), else raise."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of ints, got {type(values).__name__} ({values!r})")
    values = tuple(values)
    if not values:
        raise ValueError(f"{name} must hold at least one value, got an empty sequence")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must hold ints, got {type(value).__name__} ({value!r})")
        if not low <= value <= high:
            raise ValueError(f"{name} must hold ints in {low} … {high}, got {value!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a value, got {values}")
    return values


def positive_int(name: str, value: object, *, where: str = "") -> int:
    """Return ``value`` if it is an integer ≥ 1, else raise."""
    return int_in_range(name, value, 1, where=where)


def non_negative_int(name: str, value: object) -> int:
    """Return ``value`` if it is an integer ≥ 0, else raise."""
    return int_in_range(name, value, 0)


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


def even(name: str, value: object, why: str = "") -> int:
    """Return ``value`` if it is an even integer ≥ 1, else raise (``why``: what needs it even)."""
    positive_int(name, value)
    if value % 2:
        raise ValueError(f"{name} must be even{' ' + why if why else ''}, got {value}")
    return value


def heads_divide(d_model: int, n_heads: int) -> None:
    """Raise unless ``n_heads`` divides ``d_model`` (both already checked to be positive ints)."""
    if d_model % n_heads:
        raise ValueError(
            f"n_heads = {n_heads} must divide d_model = {d_model} (each head gets d_model / n_heads features)"
        )


def kv_heads_divide(n_heads: int, n_kv_heads: int) -> None:
    """Raise unless ``n_kv_heads`` divides ``n_heads`` (both already checked to be positive ints)."""
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_kv_heads = {n_kv_heads} must divide n_heads = {n_heads} "
            "(each key/value head serves an equal group of query heads)"
        )


def rotary_fits(rotary: object, d_k: int) -> None:
    """Raise unless ``rotary`` is a rotary encoding over a head's width ``d_k``."""
    if not (isinstance(rotary, nn.Module) and hasattr(rotary, "d_k") and hasattr(rotary, "max_len")):
        raise TypeError(f"rotary must be a RotaryPositionalEncoding or None, got {type(rotary).__name__}")
    if rotary.d_k != d_k:
        raise ValueError(
            f"rotary rotates vectors of width d_k = {rotary.d_k}, but the heads have d_k = {d_k} "
            "(d_model / n_heads); create it with RotaryPositionalEncoding(d_model // n_heads)"
        )


def number_in_range(
    name: str, value: object, low: float, high: float | None = None, *, open_low: bool = False,
    open_high: bool = False, where: str = "",
) -> float:
    """Return ``value`` as a float if it is a number (not a bool) from ``low`` to ``high``, else raise.

    The ends belong to the range unless ``open_low`` / ``open_high``.
    """
    prefix = f"{where}: " if where else ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{prefix}{name} must be a number, got {type(value).__name__} ({value!r})")
    too_low = value <= low if open_low else value < low
    too_high = high is not None and (value >= high if open_high else value > high)
    if too_low or too_high:
        if high is None:
            expected = f"above {low}" if open_low else f"at least {low}"
        else:
            expected = f"in {'(' if open_low else '['}{low}, {high}{')' if open_high else ']'}"
        raise ValueError(f"{prefix}{name} must be {expected}, got {value}")
    return float(value)


def positive_number(name: str, value: object, *, where: str = "") -> float:
    """Return ``value`` as a float if it is a finite number > 0, else raise."""
    prefix = f"{where}: " if where else ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{prefix}{name} must be a number, got {type(value).__name__} ({value!r})")
    if not 0 < value < float("inf"):
        raise ValueError(f"{prefix}{name} must be a positive number, got {value!r}")
    return float(value)


def probability(name: str, value: object) -> float:
    """Return ``value`` if it is a number in [0, 1), else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a float in [0, 1), got {type(value).__name__} ({value!r})")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value}")
    return float(value)


def boolean(name: str, value: object, *, where: str = "") -> bool:
    """Return ``value`` if it is a bool, else raise."""
    if not isinstance(value, bool):
        prefix = f"{where}: " if where else ""
        raise TypeError(f"{prefix}{name} must be a bool (True or False), got {type(value).__name__} ({value!r})")
    return value


def choice(name: str, value: object, options: tuple[str, ...], *, where: str = "") -> str:
    """Return ``value`` if it is one of the strings ``options``, else raise."""
    prefix = f"{where}: " if where else ""
    if not isinstance(value, str):
        raise TypeError(f"{prefix}{name} must be one of {list(options)}, got {type(value).__name__} ({value!r})")
    if value not in options:
        raise ValueError(f"{prefix}{name} must be one of {list(options)}, got {value!r}")
    return value


def token_id(name: str, value: object, vocab_size: int, vocabulary: str = "target vocabulary") -> int:
    """Return ``value`` if it is an int id of a vocabulary of ``vocab_size`` tokens, else raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int token id, got {type(value).__name__} ({value!r})")
    if not 0 <= value < vocab_size:
        raise ValueError(f"{name} = {value} is outside the {vocabulary} [0, {vocab_size - 1}]")
    return value


def not_above(name: str, value: int, limit: int, limit_name: str, why: str = "") -> None:
    """Raise if ``value`` exceeds ``limit`` (e.g. a length above the model's ``max_len``)."""
    if value > limit:
        raise ValueError(f"{name} = {value} exceeds {limit_name} = {limit}{why}")


def instance(name: str, value: object, types: type | tuple[type, ...], what: str, *, where: str = "") -> object:
    """Return ``value`` if it is an instance of ``types``, else raise a TypeError saying ``what`` it must be."""
    if not isinstance(value, types):
        prefix = f"{where}: " if where else ""
        raise TypeError(f"{prefix}{name} must be {what}, got {type(value).__name__}")
    return value


def text(name: str, value: object, *, where: str = "", nonempty: bool = False) -> str:
    """Return ``value`` if it is a str (with a word in it, if ``nonempty``), else raise."""
    instance(name, value, str, "a str", where=where)
    if nonempty and not value.split():
        prefix = f"{where}: " if where else ""
        raise ValueError(f"{prefix}{name} must be a non-empty sentence, got {value!r}")
    return value


def not_a_file(name: str, path: object) -> None:
    """Raise if ``path`` (a ``pathlib.Path``) names an existing file: a directory is expected."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} {str(path)!r} is a file; expected a directory to write into")


def function(name: str, value: object, what: str = "a function") -> Callable:
    """Return ``value`` if it can be called, else raise."""
    if not callable(value):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    return value


# --------------------------------------------------------------------------
# Tensors
# --------------------------------------------------------------------------


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
    if value.dim() == 0 or value.shape[-1] != expected:
        got = value.shape[-1] if value.dim() else "none"
        raise ValueError(
            f"{name} has last dimension {got} (shape {tuple(value.shape)}), expected {what} = {expected}"
        )


def features(name: str, value: object, d_model: int) -> Tensor:
    """A floating-point tensor (…, D) of width ``d_model``: the input of a layer norm or feed-forward network."""
    float_tensor(name, value)
    width(name, value, d_model)
    return value


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


def token_ids(name: str, value: object, vocab_size: int, max_len: int | None = None) -> Tensor:
    """Check a (B, L) tensor of token ids against the vocabulary and length.

    It reads the ids' smallest and largest value (on a GPU, the host waits
    for them): a door runs it once, on what the user passed.
    """
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
            raise ValueError(f"{name} holds token id {bad}, outside the vocabulary [0, {vocab_size - 1}]")
    return value


def positions(start: int, length: int, max_len: int) -> None:
    """Check that positions ``start … start + length − 1`` are in a positional table of ``max_len`` rows."""
    end = start + length
    if start < 0 or end > max_len:
        raise ValueError(
            f"positions {start}…{end - 1} are outside the table of max_len = {max_len}; "
            "raise max_len or shorten the input"
        )


def boolean_mask(name: str, value: object, target_shape: tuple[int, ...]) -> Tensor | None:
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
    if boolean_mask(name, value, (batch, heads, queries, keys)) is None:
        return
    if value.dim() != 4:
        raise ValueError(
            f"{name} must be 4-D (B or 1, 1 or H, Lq or 1, Lk), got shape {tuple(value.shape)}; "
            "build it with padding_mask (B, 1, 1, S), causal_mask (1, 1, L, L) or target_mask (B, 1, T, T)"
        )


# --------------------------------------------------------------------------
# The checks of the model's doors (Chapters 1-6) and of the cache (Chapter 8)
# --------------------------------------------------------------------------


def causal_mask_inputs(size: object, device: object = None, offset: object = 0) -> None:
    """The checks of :func:`~transformer_edu.causal_mask`."""
    positive_int("size", size)
    int_in_range("offset", offset, 0)


def positional_inputs(encoding: nn.Module, x: object, offset: object = 0) -> None:
    """The checks of :class:`~transformer_edu.SinusoidalPositionalEncoding`: (B, L, D) embeddings, positions in the table."""
    float_tensor("x", x, 3)
    width("x", x, encoding.d_model)
    int_in_range("offset", offset, 0)
    positions(offset, x.shape[1], encoding.max_len)


def rotary_inputs(encoding: nn.Module, x: object, offset: object = 0) -> None:
    """The checks of :class:`~transformer_edu.RotaryPositionalEncoding`: (..., L, d_k) vectors at positions it covers."""
    float_tensor("x", x)
    if x.dim() < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., L, d_k), got shape {tuple(x.shape)}")
    width("x", x, encoding.d_k, "d_k")
    int_in_range("offset", offset, 0)
    positions(offset, x.shape[-2], encoding.max_len)


def heads_inputs(query: object, key: object, value: object, mask: object = None, dropout_p: object = 0.0) -> None:
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
    if mask is not None:
        scores = (*torch.broadcast_shapes(query.shape[:-2], key.shape[:-2]), query.shape[-2], key.shape[-2])
        boolean_mask("mask", mask, scores)


def attention_inputs(
    attention: nn.Module, query: object, key: object, value: object, mask: object = None,
    need_weights: object = True, *, cache: object = None,
) -> None:
    """The checks of :meth:`MultiHeadAttention.forward <transformer_edu.MultiHeadAttention.forward>`.

    With a ``cache`` (one attention layer's, e.g. ``model.new_cache().layers[0].self_attn``)
    the mask covers the cached positions too.
    """
    d_model, heads = attention.d_model, attention.n_heads
    for name, x in (("query", query), ("key", key), ("value", value)):
        sequence(name, x, d_model)
    if not (query.shape[0] == key.shape[0] == value.shape[0]):
        raise ValueError(
            f"query, key and value must have the same batch size, got "
            f"{query.shape[0]}, {key.shape[0]} and {value.shape[0]}"
        )
    if key.shape[1] != value.shape[1]:
        raise ValueError(f"key and value must have the same length, got {key.shape[1]} and {value.shape[1]}")
    keys = key.shape[1]
    rotary = getattr(attention, "rotary", None)
    if rotary is not None:  # queries and keys are rotated by the same positions: self-attention only
        if key.shape[1] != query.shape[1]:
            raise ValueError(
                f"an attention with rotary positions is a self-attention: query and key must have the same "
                f"length (the same positions), got {query.shape[1]} and {key.shape[1]}"
            )
        if cache is not None and not hasattr(cache, "length"):
            raise TypeError("an attention with rotary positions takes a SelfAttentionCache, not a memory's cache")
        start = 0 if cache is None else cache.length
        positions(start, key.shape[1], rotary.max_len)
    if cache is not None:
        if not all(hasattr(cache, a) for a in ("update", "holds_memory", "batch_size")):
            raise TypeError(
                "cache must be one attention layer's cache (a SelfAttentionCache or a MemoryCache, e.g. "
                f"model.new_cache().layers[0].self_attn), got {type(cache).__name__}"
            )
        _cache_rows(cache.batch_size, query.shape[0], "query")
        if cache.holds_memory:  # the memory's keys, kept: key is not read
            keys = cache.keys.shape[2]
        elif hasattr(cache, "length"):  # earlier positions: the new ones come after them
            _cache_room(cache.length, cache.capacity, key.shape[1])
            keys = cache.length + key.shape[1]
    attention_mask("mask", mask, query.shape[0], heads, query.shape[1], keys)


def encoder_inputs(attention: nn.Module, x: object, mask: object = None) -> None:
    """The checks of an encoder layer or stack: ``x`` (B, S, D) and its self-attention mask."""
    sequence("x", x, attention.d_model)
    attention_mask("mask", mask, x.shape[0], attention.n_heads, x.shape[1], x.shape[1])


def decoder_inputs(
    attention: nn.Module, x: object, memory: object, src_mask: object, tgt_mask: object, cached: int = 0,
    name: str = "x",
) -> None:
    """The checks shared by the decoder's doors: ``x`` (B, T, D), ``memory`` (B, S, D) and the masks.

    ``cached`` target positions are in a key/value cache already: the target
    mask covers them and the ``T`` new ones, (B, H, T, cached + T).
    """
    sequence(name, x, attention.d_model)
    _memory_and_masks(attention.n_heads, attention.d_model, x.shape[0], x.shape[1], memory, src_mask, tgt_mask,
                      cached, name)


def _memory_and_masks(heads: int, d_model: int, batch: int, steps: int, memory: object, src_mask: object,
                      tgt_mask: object, cached: int, name: str) -> None:
    sequence("memory", memory, d_model)
    if batch != memory.shape[0]:
        raise ValueError(f"{name} and memory must have the same batch size, got {batch} and {memory.shape[0]}")
    attention_mask("src_mask", src_mask, batch, heads, steps, memory.shape[1])
    attention_mask("tgt_mask", tgt_mask, batch, heads, steps, cached + steps)


def decoder_layer_inputs(layer: nn.Module, x: object, memory: object, src_mask: object = None,
                         tgt_mask: object = None, cache: object = None) -> None:
    """The checks of :class:`~transformer_edu.DecoderLayer`; ``cache`` is one layer's (``KVCache.layers[i]``)."""
    sequence("x", x, layer.self_attn.d_model)
    cached = 0
    if cache is not None:
        if not (hasattr(cache, "self_attn") and hasattr(cache, "cross_attn")):
            raise TypeError(
                "cache must be one decoder layer's cache (a LayerCache, e.g. model.new_cache().layers[0]), "
                f"got {type(cache).__name__}"
            )
        _cache_rows(cache.self_attn.batch_size, x.shape[0], "x")
        _cache_room(cache.self_attn.length, cache.self_attn.capacity, x.shape[1])
        cached = cache.self_attn.length
    decoder_inputs(layer.self_attn, x, memory, src_mask, tgt_mask, cached)


def kv_cache(cache: object, n_layers: int, batch: int, steps: int, name: str) -> int:
    """Check a decoder's :class:`~transformer_edu.KVCache` for ``steps`` new positions of ``batch`` rows.

    Returns the number of positions it holds already.
    """
    if not (hasattr(cache, "layers") and hasattr(cache, "length") and hasattr(cache, "reorder")):
        raise TypeError(f"cache must be a KVCache (see Transformer.new_cache), got {type(cache).__name__}")
    if len(cache.layers) != n_layers:
        raise ValueError(
            f"cache has {len(cache.layers)} layers, the decoder has {n_layers}; create it with KVCache(n_layers)"
        )
    _cache_rows(cache.batch_size, batch, name)
    _cache_room(cache.length, cache.capacity, steps)
    return cache.length


def decoder_stack_inputs(decoder: nn.Module, x: object, memory: object, src_mask: object = None,
                         tgt_mask: object = None, cache: object = None) -> None:
    """The checks of :class:`~transformer_edu.Decoder`."""
    sequence("x", x, decoder.layers[0].self_attn.d_model)
    cached = 0 if cache is None else kv_cache(cache, len(decoder.layers), x.shape[0], x.shape[1], "x")
    decoder_inputs(decoder.layers[0].self_attn, x, memory, src_mask, tgt_mask, cached)


def _cache_rows(rows: int | None, batch: int | None, name: str) -> None:
    if rows is not None and batch is not None and rows != batch:
        raise ValueError(
            f"the cache holds {rows} rows but {name} has batch size {batch}; "
            "use one cache per batch (cache.reorder keeps or repeats rows)"
        )


def _cache_room(length: int, capacity: int | None, new_positions: int) -> None:
    if capacity is not None and length + new_positions > capacity:
        raise ValueError(
            f"the cache holds {length} positions and has capacity = {capacity}: "
            f"{new_positions} more do not fit; create it with a larger capacity, e.g. "
            f"model.new_cache({length + new_positions})"
        )


def reorder_index(cache: object, index: object, shared_memory: object = False) -> None:
    """The checks of :meth:`KVCache.reorder <transformer_edu.KVCache.reorder>`."""
    index = tensor("index", index, 1)
    if index.is_floating_point() or index.dtype == torch.bool:
        raise TypeError(f"index must hold integer row numbers (torch.long), got dtype {index.dtype}")
    boolean("shared_memory", shared_memory)
    if shared_memory and index.shape[0] != cache.batch_size:
        raise ValueError(
            f"shared_memory=True keeps the number of rows: the cache holds {cache.batch_size}, "
            f"index has {index.shape[0]}; rows that leave or repeat take their memory's keys along"
        )


# --------------------------------------------------------------------------
# The checks of the whole model's doors (Chapter 6)
# --------------------------------------------------------------------------


def model_forward_inputs(model: nn.Module, src: object, tgt: object, src_mask: object = None,
                         tgt_mask: object = None) -> None:
    """The checks of :meth:`Transformer.forward <transformer_edu.Transformer.forward>`."""
    c = model.config
    token_ids("src", src, c.src_vocab_size, c.max_len)
    token_ids("tgt", tgt, c.tgt_vocab_size, c.max_len)
    (batch, s), t = src.shape, tgt.shape[1]
    if tgt.shape[0] != batch:
        raise ValueError(f"src and tgt must have the same batch size, got {batch} and {tgt.shape[0]}")
    attention_mask("src_mask", src_mask, batch, c.n_heads, s, s)  # the encoder's self-attention …
    attention_mask("src_mask", src_mask, batch, c.n_heads, t, s)  # … and the decoder's cross-attention
    attention_mask("tgt_mask", tgt_mask, batch, c.n_heads, t, t)


def model_encode_inputs(model: nn.Module, src: object, src_mask: object = None) -> None:
    """The checks of :meth:`Transformer.encode <transformer_edu.Transformer.encode>`."""
    c = model.config
    token_ids("src", src, c.src_vocab_size, c.max_len)
    attention_mask("src_mask", src_mask, src.shape[0], c.n_heads, src.shape[1], src.shape[1])


def model_source_ids(model: nn.Module, src: object) -> None:
    """The checks of :meth:`Transformer.embed_source <transformer_edu.Transformer.embed_source>`."""
    token_ids("src", src, model.config.src_vocab_size, model.config.max_len)


def model_target_ids(model: nn.Module, tgt: object, offset: object = 0) -> None:
    """The checks of :meth:`Transformer.embed_target <transformer_edu.Transformer.embed_target>`."""
    token_ids("tgt", tgt, model.config.tgt_vocab_size)
    int_in_range("offset", offset, 0)
    positions(offset, tgt.shape[1], model.config.max_len)


def model_decode_inputs(model: nn.Module, tgt: object, memory: object, src_mask: object = None,
                        tgt_mask: object = None, cache: object = None, *, last_only: object = False) -> None:
    """The checks of :meth:`Transformer.decode <transformer_edu.Transformer.decode>`."""
    c = model.config
    token_ids("tgt", tgt, c.tgt_vocab_size, c.max_len)
    boolean("last_only", last_only)
    batch, steps = tgt.shape
    cached = 0 if cache is None else kv_cache(cache, c.n_layers, batch, steps, "tgt")
    positions(cached, steps, c.max_len)
    _memory_and_masks(c.n_heads, c.d_model, batch, steps, memory, src_mask, tgt_mask, cached, "tgt")


# --------------------------------------------------------------------------
# The checks of the decoder-only model's doors (Chapter 10)
# --------------------------------------------------------------------------


def lm_layer_inputs(layer: nn.Module, x: object, mask: object = None, cache: object = None) -> None:
    """The checks of :class:`~transformer_edu.LanguageModelLayer`; ``cache`` is a KVCache layer's ``self_attn``."""
    attention = layer.self_attn
    sequence("x", x, attention.d_model)
    cached = 0
    if cache is not None:
        if not all(hasattr(cache, a) for a in ("update", "length", "capacity")):
            raise TypeError(
                "cache must be one layer's self-attention cache (e.g. model.new_cache().layers[0].self_attn), "
                f"got {type(cache).__name__}"
            )
        _cache_rows(cache.batch_size, x.shape[0], "x")
        _cache_room(cache.length, cache.capacity, x.shape[1])
        cached = cache.length
    if attention.rotary is not None:
        positions(cached, x.shape[1], attention.rotary.max_len)
    attention_mask("mask", mask, x.shape[0], attention.n_heads, x.shape[1], cached + x.shape[1])


def lm_forward_inputs(model: nn.Module, tokens: object, mask: object = None, cache: object = None, *,
                      last_only: object = False) -> None:
    """The checks of :meth:`LanguageModel.forward <transformer_edu.LanguageModel.forward>`."""
    c = model.config
    token_ids("tokens", tokens, c.vocab_size, c.max_len)
    boolean("last_only", last_only)
    batch, steps = tokens.shape
    cached = 0 if cache is None else kv_cache(cache, c.n_layers, batch, steps, "tokens")
    positions(cached, steps, c.max_len)
    attention_mask("mask", mask, batch, c.n_heads, steps, cached + steps)


def generate_inputs(
    model: object, prompt: object, *, max_new_tokens: object, eos_id: object = None, do_sample: object = False,
    temperature: object = 1.0, top_k: object = None, top_p: object = None, generator: object = None,
    never: object = (), use_cache: object = True,
) -> None:
    """The checks of :func:`~transformer_edu.language_model.generate`."""
    if not (isinstance(model, nn.Module) and hasattr(model, "config") and hasattr(model, "new_cache")
            and hasattr(model.config, "vocab_size")):
        raise TypeError(f"model must be a LanguageModel, got {type(model).__name__}")
    c = model.config
    tensor("prompt", prompt)
    if prompt.dim() != 2:
        raise ValueError(
            f"prompt must be 2-D (B, P) token ids, got shape {tuple(prompt.shape)}; "
            "for one prompt use prompt.unsqueeze(0)"
        )
    if prompt.shape[0] == 0:
        raise ValueError(f"prompt holds no sequences (shape {tuple(prompt.shape)}); pass at least one")
    token_ids("prompt", prompt, c.vocab_size, c.max_len)
    if bool((prompt == c.pad_id).any()):
        raise ValueError(
            f"prompt holds the padding id {c.pad_id}: every prompt of a batch must have the same length, "
            "without padding; complete() takes prompts of different lengths"
        )
    device = next(model.parameters()).device
    if prompt.device != device:
        raise ValueError(
            f"prompt is on {prompt.device} but the model is on {device}; move it with prompt.to({str(device)!r})"
        )
    positive_int("max_new_tokens", max_new_tokens)
    not_above("prompt length + max_new_tokens", prompt.shape[1] + max_new_tokens, c.max_len,
              "the model's max_len", " positions")
    if eos_id is not None:
        token_id("eos_id", eos_id, c.vocab_size, "vocabulary")
    if isinstance(never, (str, bytes)) or not hasattr(never, "__iter__"):
        raise TypeError(f"never must be a sequence of token ids, got {type(never).__name__}")
    for i in never:
        token_id("never", i, c.vocab_size, "vocabulary")
    if eos_id is not None and (eos_id == c.pad_id or eos_id in never):
        raise ValueError(f"eos_id = {eos_id} is never generated (it is pad_id or in never)")
    boolean("do_sample", do_sample)
    boolean("use_cache", use_cache)
    sampling_settings(temperature, top_k, top_p)
    if generator is not None:
        instance("generator", generator, torch.Generator, "a torch.Generator")


# --------------------------------------------------------------------------
# The checks of the decoding loops (Chapter 8)
# --------------------------------------------------------------------------


def decoding_inputs(
    model: object, src: object, *, max_len: object, bos_id: object, eos_id: object, pad_id: object = None,
    unk_id: object = None, src_mask: object = None, min_len: object = 0, use_cache: object = True,
    beam_size: object = 1, length_penalty: object = 0.0, temperature: object = 1.0, top_k: object = None,
    top_p: object = None, generator: object = None,
) -> None:
    """The checks of the decoding functions (:func:`~transformer_edu.greedy_decode`, …)."""
    if not (isinstance(model, nn.Module) and hasattr(model, "config") and hasattr(model, "decode")):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
    config = model.config
    tensor("src", src)
    if src.dim() != 2:
        raise ValueError(
            f"src must be 2-D (B, S) token ids, got shape {tuple(src.shape)}; for one sentence use src.unsqueeze(0)"
        )
    if src.shape[0] == 0:
        raise ValueError(f"src holds no sentences (shape {tuple(src.shape)}); pass at least one")
    token_ids("src", src, config.src_vocab_size, config.max_len)
    device = next(model.parameters()).device
    if src.device != device:
        raise ValueError(
            f"src is on {src.device} but the model is on {device}; move it with src.to({str(device)!r})"
        )
    positive_int("max_len", max_len)
    not_above("max_len", max_len, config.max_len, "the model's max_len", " positions")
    int_in_range("min_len", min_len, 0, max_len)
    token_id("bos_id", bos_id, config.tgt_vocab_size)
    token_id("eos_id", eos_id, config.tgt_vocab_size)
    never = {bos_id, config.pad_id if pad_id is None else token_id("pad_id", pad_id, config.tgt_vocab_size)}
    if unk_id is not None:
        never.add(token_id("unk_id", unk_id, config.tgt_vocab_size))
    if eos_id in never:
        raise ValueError(f"eos_id = {eos_id} must differ from bos_id, pad_id and unk_id ({sorted(never)})")
    attention_mask("src_mask", src_mask, src.shape[0], config.n_heads, 1, src.shape[1])
    boolean("use_cache", use_cache)
    positive_int("beam_size", beam_size)
    number_in_range("length_penalty", length_penalty, 0)
    sampling_settings(temperature, top_k, top_p)
    if generator is not None:
        instance("generator", generator, torch.Generator, "a torch.Generator")


def sampling_settings(temperature: object, top_k: object, top_p: object) -> None:
    """The temperature (> 0), ``top_k`` (an int ≥ 1 or ``None``) and ``top_p`` (in (0, 1] or ``None``) of sampling."""
    positive_number("temperature", temperature)
    if top_k is not None:
        positive_int("top_k", top_k)
    if top_p is not None:
        number_in_range("top_p", top_p, 0.0, 1.0, open_low=True)


def sampling_inputs(logits: object, *, temperature: object = 1.0, top_k: object = None,
                    top_p: object = None) -> None:
    """The checks of :func:`~transformer_edu.decoding.sampling_distribution`: (B, V) logits and the settings."""
    float_tensor("logits", logits, 2)
    sampling_settings(temperature, top_k, top_p)


def trace_inputs(model: object, src: object, **arguments: object) -> None:
    """The checks of :func:`~transformer_edu.decoding.beam_search_trace`: one source, shape (1, S)."""
    tensor("src", src)
    if src.dim() != 2 or src.shape[0] != 1:
        raise ValueError(
            f"beam_search_trace follows one source: src must have shape (1, S), got {tuple(src.shape)}"
        )
    decoding_inputs(model, src, **arguments)


def has_attention(model: nn.Module, layers: list) -> None:
    """Raise if ``model`` has no attention layers to record (:func:`~transformer_edu.record_attention`)."""
    if not layers:
        raise ValueError(f"model ({type(model).__name__}) has no MultiHeadAttention layers to record")
