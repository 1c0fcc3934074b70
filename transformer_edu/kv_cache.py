"""The key/value cache of step-by-step decoding (Chapter 8).

A decoder that writes one token at a time would recompute, at every step, the
keys and values of every earlier target position (they have not changed) and
of the encoder's memory (it never changes). The cache keeps them. It is
handed to each attention layer, and all it adds to Chapter 2's
:meth:`MultiHeadAttention.forward <transformer_edu.attention.MultiHeadAttention.forward>`
is a few lines around the key and value projections::

    q = split_heads(w_q(query))
    if cache is not None and cache.holds_memory:
        k, v = cache.keys, cache.values  # cross-attention: the memory's, kept
    else:
        k = split_heads(w_k(key))
        v = split_heads(w_v(value))
        if cache is not None:  # keep them; self-attention reads
            k, v = cache.update(k, v)  # the cached positions, then the new

A :class:`KVCache` holds one :class:`LayerCache` per decoder layer, which
holds the :class:`SelfAttentionCache` of its self-attention and the
:class:`MemoryCache` of its cross-attention.

Shape legend: B rows (sentences, or beams), H heads, t positions cached, T new
positions, S memory length, d_k = D / H. With grouped-query attention
(Chapter 10) the caches hold the H_kv key/value heads, not the H query heads.
"""

from __future__ import annotations

from typing import NamedTuple

from torch import Tensor

from . import _validate

__all__ = ["KVCache", "LayerCache", "MemoryCache", "SelfAttentionCache"]


class SelfAttentionCache:
    """The keys and values of the target positions decoded so far, for one self-attention layer.

    The keys and values live in buffers with room for ``capacity`` positions,
    allocated at the first step; each step writes its new positions into them
    in place. (Growing them with ``torch.cat`` instead would allocate new
    tensors and copy the whole prefix at every step, L²/2 position copies for
    L steps.) A full buffer is replaced by one twice as long, so without a
    ``capacity`` the copies add up to fewer than 2·L positions.

    Args:
        capacity: positions to make room for at the first step (e.g. the most
            tokens a decoding loop will generate); ``None``: as many as the
            first step brings, doubled when full.

    Attributes:
        length: number of positions t cached.
    """

    holds_memory = False  # every step brings new positions (compare MemoryCache)

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = capacity
        self.length = 0
        self._k: Tensor | None = None  # buffers (B, H, room, d_k)
        self._v: Tensor | None = None

    @property
    def keys(self) -> Tensor | None:
        """The cached keys, a view of shape (B, H, t, d_k); ``None`` before the first step."""
        return None if self._k is None else self._k[:, :, : self.length]  # (B, H, t, d_k)

    @property
    def values(self) -> Tensor | None:
        """The cached values, a view of shape (B, H, t, d_k); ``None`` before the first step."""
        return None if self._v is None else self._v[:, :, : self.length]  # (B, H, t, d_k)

    @property
    def batch_size(self) -> int | None:
        """Rows B of the cached tensors, or ``None`` before the first step."""
        return None if self._k is None else self._k.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes of the cached keys and values (the t positions held, not the buffers' spare room)."""
        return 0 if self._k is None else 2 * self.keys.numel() * self._k.element_size()

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write the new positions' keys and values after the cached ones; return all of them.

        Args:
            k, v: the keys and values of the T new positions.

        Returns:
            ``(keys, values)`` of the positions ``0 … t + T − 1``, views of the
            buffers (nothing is copied but the new positions).

        Shape:
            - k, v: (B, H, T, d_k)
            - keys, values: (B, H, t + T, d_k)
        """
        start, end = self.length, self.length + k.shape[2]
        if self._k is None or end > self._k.shape[2]:
            self._grow(k, v, end)
        self._k[:, :, start:end] = k  # in place: the earlier positions stay where they are
        self._v[:, :, start:end] = v
        self.length = end
        return self._k[:, :, :end], self._v[:, :, :end]  # (B, H, t + T, d_k)

    def _grow(self, k: Tensor, v: Tensor, end: int) -> None:
        """New buffers with room for ``capacity`` positions at first, then twice as many; the cached ones copied."""
        room = max(end, self.capacity or 0, 2 * (0 if self._k is None else self._k.shape[2]))
        buffers = []
        for old, new in ((self._k, k), (self._v, v)):
            buffer = new.new_empty(new.shape[0], new.shape[1], room, new.shape[3])  # (B, H, room, d_k)
            if old is not None:
                buffer[:, :, : self.length] = old[:, :, : self.length]
            buffers.append(buffer)
        self._k, self._v = buffers

    def reorder(self, index: Tensor) -> None:
        """Keep the rows ``index`` (in that order): gathered, and written back in place when their number is kept.

        Shape:
            - index: (B',) long, values in [0, B)
        """
        if self._k is None:
            return
        kept = [self.keys.index_select(0, index), self.values.index_select(0, index)]  # (B', H, t, d_k) each
        if kept[0].shape[0] != self._k.shape[0]:  # fewer or more rows: new buffers of the same room
            self._k, self._v = (b.new_empty(kept[0].shape[0], *b.shape[1:]) for b in (self._k, self._v))
        self._k[:, :, : self.length] = kept[0]
        self._v[:, :, : self.length] = kept[1]

    def __repr__(self) -> str:
        return f"SelfAttentionCache(length={self.length}, capacity={self.capacity})"


class MemoryCache:
    """The keys and values of the encoder's memory, for one cross-attention layer.

    The memory does not change while decoding, so neither do its keys and
    values: the first step projects them and stores them (contiguous, as every
    later step reads them), and the later steps reuse them.

    Attributes:
        keys: the memory's keys, shape (B, H, S, d_k); ``None`` before the first step.
        values: the memory's values, the same shape.
    """

    def __init__(self) -> None:
        self.keys: Tensor | None = None
        self.values: Tensor | None = None

    @property
    def holds_memory(self) -> bool:
        """Whether the memory's keys and values are stored, so the attention projects none."""
        return self.keys is not None

    @property
    def batch_size(self) -> int | None:
        return None if self.keys is None else self.keys.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes of the stored keys and values."""
        return 0 if self.keys is None else 2 * self.keys.numel() * self.keys.element_size()

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Store the memory's keys and values, (B, H, S, d_k) each, and return them."""
        self.keys, self.values = k.contiguous(), v.contiguous()
        return self.keys, self.values

    def reorder(self, index: Tensor) -> None:
        """Keep the rows ``index`` (in that order)."""
        if self.keys is not None:
            self.keys, self.values = self.keys.index_select(0, index), self.values.index_select(0, index)

    def __repr__(self) -> str:
        return f"MemoryCache(stored={self.holds_memory})"


class LayerCache(NamedTuple):
    """The caches of one decoder layer: its self-attention's and its cross-attention's."""

    self_attn: SelfAttentionCache
    cross_attn: MemoryCache


class KVCache:
    """Keys and values a decoder keeps between decoding steps: one :class:`LayerCache` per layer.

    For every layer it holds the self-attention keys and values of all the
    target positions decoded so far (each step adds the new ones) and the
    cross-attention keys and values of the encoder's memory (computed at the
    first step). :meth:`Transformer.decode <transformer_edu.model.Transformer.decode>`
    takes it, and hands each layer its own part.

    Args:
        n_layers: number of decoder layers.
        capacity: positions to make room for (e.g. the most tokens a
            decoding loop will generate); ``None`` grows the buffers on demand.

    Attributes:
        layers: one :class:`LayerCache` per decoder layer.

    See Chapter 8.
    """

    def __init__(self, n_layers: int, capacity: int | None = None) -> None:
        _validate.positive_int("n_layers", n_layers)
        if capacity is not None:
            _validate.positive_int("capacity", capacity)
        self.capacity = capacity
        self.layers = [LayerCache(SelfAttentionCache(capacity), MemoryCache()) for _ in range(n_layers)]

    @property
    def length(self) -> int:
        """Number of target positions t cached so far."""
        return self.layers[0].self_attn.length

    @property
    def batch_size(self) -> int | None:
        """Rows B of the cached tensors, or ``None`` while the cache is empty."""
        for layer in self.layers:
            for part in layer:
                if part.batch_size is not None:
                    return part.batch_size
        return None

    @property
    def nbytes(self) -> int:
        """Bytes of every cached key and value, all layers (Chapter 10 measures it per token)."""
        return sum(part.nbytes for layer in self.layers for part in layer)

    @_validate.door(_validate.reorder_index)
    def reorder(self, index: Tensor, shared_memory: bool = False) -> None:
        """Keep the batch rows ``index`` (in that order), e.g. the surviving beams.

        Args:
            index: the rows to keep.
            shared_memory: the rows that trade places read the same memory
                (the K beams of one source, in beam search), so the
                cross-attention keys and values are left as they are.

        Shape:
            - index: (B',) long, values in [0, B)
        """
        for layer in self.layers:
            layer.self_attn.reorder(index)
            if not shared_memory:
                layer.cross_attn.reorder(index)

    def __repr__(self) -> str:
        return f"KVCache(n_layers={len(self.layers)}, length={self.length}, capacity={self.capacity})"
