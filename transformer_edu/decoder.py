"""The decoder: masked self-attention, cross-attention and feed-forward (Chapter 6),
with a key/value cache for step-by-step decoding (Chapter 8)."""

from __future__ import annotations

from collections.abc import Callable

from torch import Tensor, nn

from . import _validate
from .attention import MultiHeadAttention
from .layers import LayerNorm, PositionwiseFeedForward

__all__ = ["Decoder", "DecoderLayer", "KVCache"]


class KVCache:
    """Keys and values a decoder keeps between decoding steps.

    For every layer it holds the self-attention keys and values of all the
    target positions decoded so far (each step adds the new ones), and the
    cross-attention keys and values of the encoder's memory, computed once at
    the first step and reused afterwards. Without the cache, each step would
    recompute all of them for the whole prefix.

    The self-attention keys and values live in buffers with room for
    ``capacity`` positions, allocated at the first step; each step writes its
    positions into them in place. (Growing them with ``torch.cat`` instead
    would allocate new tensors and copy the whole prefix at every step, L²/2
    position copies for L steps.) Without a ``capacity`` a full buffer is
    replaced by one twice as long, so the copies add up to fewer than 2·L
    positions. :meth:`reorder` (beam search) gathers the filled part in place.

    Attributes:
        layers: one dict per decoder layer with the tensors ``self_k``,
            ``self_v`` of shape (B, H, t, d_k), the filled part of the
            buffers, and ``cross_k``, ``cross_v`` of shape (B, H, S, d_k).
        length: number of target positions t cached so far; the decoder adds
            the new positions after its last layer.
        capacity: the most positions the cache holds, or ``None`` to grow as
            needed.

    Args:
        n_layers: number of decoder layers.
        capacity: positions to make room for (e.g. the most tokens a
            decoding loop will generate); ``None`` grows the buffers on demand.

    See Chapter 8.
    """

    def __init__(self, n_layers: int, capacity: int | None = None) -> None:
        _validate.positive_int("n_layers", n_layers)
        if capacity is not None:
            _validate.positive_int("capacity", capacity)
        self.layers: list[dict[str, Tensor]] = [{} for _ in range(n_layers)]
        self.length = 0
        self.capacity = capacity
        self._buffers: list[dict[str, Tensor]] = [{} for _ in range(n_layers)]  # (B, H, room, d_k) each

    @property
    def batch_size(self) -> int | None:
        """Rows B of the cached tensors, or ``None`` while the cache is empty."""
        for layer in self.layers:
            for tensor in layer.values():
                return tensor.shape[0]
        return None

    def check_room(self, new_positions: int) -> None:
        """Raise if ``new_positions`` more positions would not fit in ``capacity``."""
        if self.capacity is not None and self.length + new_positions > self.capacity:
            raise ValueError(
                f"the cache holds {self.length} positions and has capacity = {self.capacity}: "
                f"{new_positions} more do not fit; create it with a larger capacity, e.g. "
                f"model.new_cache({self.length + new_positions})"
            )

    def append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write the new positions' keys and values after the cached ones; return all of them.

        Args:
            layer: index of the decoder layer.
            k, v: the keys and values of the new positions.

        Returns:
            ``(keys, values)`` of the positions ``0 … length + T − 1``, views
            of the buffers (no copy).

        Shape:
            - k, v: (B, H, T, d_k)
            - keys, values: (B, H, length + T, d_k)
        """
        start, end = self.length, self.length + k.shape[2]
        buffers, cache = self._buffers[layer], self.layers[layer]
        if buffers and buffers["self_k"].shape[0] != k.shape[0]:
            raise ValueError(
                f"the cache holds {buffers['self_k'].shape[0]} rows but this step has batch size "
                f"{k.shape[0]}; use one cache per batch (cache.reorder keeps or repeats rows)"
            )
        if not buffers or end > buffers["self_k"].shape[2]:
            self.check_room(k.shape[2])
            room = end if self.capacity is None else self.capacity
            if buffers and self.capacity is None:
                room = max(end, 2 * buffers["self_k"].shape[2])  # double: few copies in all
            for name, new in (("self_k", k), ("self_v", v)):
                buffer = new.new_empty(new.shape[0], new.shape[1], room, new.shape[3])  # (B, H, room, d_k)
                if name in buffers:
                    buffer[:, :, :start] = buffers[name][:, :, :start]
                buffers[name] = buffer
        keys, values = buffers["self_k"], buffers["self_v"]
        keys.narrow(2, start, end - start).copy_(k)  # in place: the earlier positions stay where they are
        values.narrow(2, start, end - start).copy_(v)
        cache["self_k"] = keys = keys.narrow(2, 0, end)  # (B, H, t + T, d_k), a view
        cache["self_v"] = values = values.narrow(2, 0, end)
        return keys, values

    def memory_kv(self, layer: int, project: Callable[[], tuple[Tensor, Tensor]]) -> tuple[Tensor, Tensor]:
        """The cross-attention keys and values of ``layer``: ``project()`` at the first step, kept after.

        The encoder's memory does not change while decoding, so neither do
        its keys and values: they are computed once per layer and stored
        contiguous, as every later step reads them.

        Shape:
            - keys, values: (B, H, S, d_k)
        """
        entries = self.layers[layer]
        if "cross_k" not in entries:
            k, v = project()
            entries["cross_k"], entries["cross_v"] = k.contiguous(), v.contiguous()
        return entries["cross_k"], entries["cross_v"]

    def reorder(self, index: Tensor, shared_memory: bool = False) -> None:
        """Keep the batch rows ``index`` (in that order), e.g. the surviving beams.

        Every tensor of :attr:`layers` follows: the filled part of the
        self-attention buffers is gathered and written back in place (into new
        buffers when the number of rows changes); the others are gathered.

        Args:
            index: the rows to keep.
            shared_memory: the rows that trade places read the same memory
                (the K beams of one source, in beam search), so the
                cross-attention keys and values are left as they are.

        Shape:
            - index: (B',) long, values in [0, B)
        """
        if shared_memory and index.shape[0] != self.batch_size:
            raise ValueError(
                f"shared_memory=True keeps the number of rows: the cache holds {self.batch_size}, "
                f"index has {index.shape[0]}; rows that leave or repeat take their memory's keys along"
            )
        for buffers, cache in zip(self._buffers, self.layers):
            for name, tensor in cache.items():
                if name not in buffers:  # cross-attention keys and values
                    if not shared_memory:
                        cache[name] = tensor.index_select(0, index)  # (B', H, S, d_k)
                    continue
                kept = tensor.index_select(0, index)  # (B', H, t, d_k)
                buffer = buffers[name]
                if buffer.shape[0] != kept.shape[0]:
                    buffer = buffers[name] = buffer.new_empty(kept.shape[0], *buffer.shape[1:])
                buffer[:, :, : self.length] = kept
                cache[name] = buffer[:, :, : self.length]  # (B', H, t, d_k)

    def __repr__(self) -> str:
        return f"KVCache(n_layers={len(self.layers)}, length={self.length}, capacity={self.capacity})"


class DecoderLayer(nn.Module):
    """One decoder layer: masked self-attention, cross-attention, feed-forward.

    Queries of the cross-attention come from the decoder, its keys and values
    from the encoder's output ``memory``. Each sublayer has a residual
    connection and a layer norm, post-LN (the paper) or pre-LN.

    Args:
        d_model: model width D.
        n_heads: number of attention heads H.
        d_ff: hidden width of the feed-forward network.
        dropout: dropout on attention weights, hidden activations and sublayer outputs.
        norm_first: pre-LN (``True``) instead of the paper's post-LN (``False``).

    Shape:
        - x: (B, T, D)
        - memory: (B, S, D)
        - src_mask: ``True`` = may attend, broadcastable to (B, H, T, S), usually (B, 1, 1, S)
        - tgt_mask: ``True`` = may attend, broadcastable to (B, H, T, T), usually
          (B, 1, T, T) from :func:`target_mask`; with a cache holding t
          positions, (B, 1, T, t + T), or ``None`` for one new position
        - output: (B, T, D)

    See Chapter 6.
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = False
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.norm_first = bool(norm_first)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: KVCache | None = None,
        layer: int = 0,
    ) -> Tensor:
        """Run the layer; with a ``cache``, ``x`` holds only the new positions.

        ``layer`` is this layer's index in the cache. The caller advances
        ``cache.length`` once the new positions went through every layer
        (:class:`Decoder` does).
        """
        attn = self.self_attn
        _validate.decoder_inputs(x, memory, src_mask, tgt_mask, cache, cache_type=KVCache, d_model=attn.d_model,
                                 heads=attn.n_heads)
        if cache is not None and not (isinstance(layer, int) and 0 <= layer < len(cache.layers)):
            raise ValueError(f"layer must be an index of the cache's {len(cache.layers)} layers, got {layer!r}")
        if self.norm_first:
            x = x + self.dropout1(self._self_attention(self.norm1(x), tgt_mask, cache, layer))
            x = x + self.dropout2(self._cross_attention(self.norm2(x), memory, src_mask, cache, layer))
            x = x + self.dropout3(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout1(self._self_attention(x, tgt_mask, cache, layer)))
            x = self.norm2(x + self.dropout2(self._cross_attention(x, memory, src_mask, cache, layer)))
            x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x

    def _self_attention(self, x: Tensor, mask: Tensor | None, cache: KVCache | None, layer: int) -> Tensor:
        """Masked self-attention; with a cache the new positions also attend to the cached ones."""
        q, k, v = self.self_attn.project_qkv(x)  # (B, H, T, d_k) each
        if cache is not None:
            k, v = cache.append(layer, k, v)  # (B, H, t + T, d_k): the cached positions, then the new
        return self.self_attn.attend(q, k, v, mask, need_weights=False)[0]  # (B, T, D)

    def _cross_attention(
        self, x: Tensor, memory: Tensor, mask: Tensor | None, cache: KVCache | None, layer: int
    ) -> Tensor:
        """Attention from the decoder's positions to the memory; the cache keeps its keys and values."""
        attn = self.cross_attn
        q = attn.split_heads(attn.w_q(x))  # (B, H, T, d_k)
        if cache is None:
            k, v = attn.project_kv(memory, memory)  # (B, H, S, d_k) each
        else:  # the memory does not change between steps: projected at the first, reused after
            k, v = cache.memory_kv(layer, lambda: attn.project_kv(memory, memory))
        return attn.attend(q, k, v, mask, need_weights=False)[0]  # (B, T, D)


class Decoder(nn.Module):
    """A stack of ``n_layers`` :class:`DecoderLayer` (embeddings and output layer not included).

    With ``norm_first=True`` a final :class:`LayerNorm` follows the stack, as in
    ``nn.Transformer``.

    Args:
        n_layers: number of layers N (the paper uses 6).
        d_model, n_heads, d_ff, dropout, norm_first: as in :class:`DecoderLayer`.

    Shape:
        - x: (B, T, D); memory: (B, S, D)
        - src_mask, tgt_mask: as in :class:`DecoderLayer`
        - output: (B, T, D)

    See Chapter 6.
    """

    def __init__(
        self,
        n_layers: int,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        _validate.positive_int("n_layers", n_layers)
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, n_heads, d_ff, dropout, norm_first) for _ in range(n_layers)
        )
        self.norm = LayerNorm(d_model) if norm_first else None

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: KVCache | None = None,
    ) -> Tensor:
        """Run the stack. With a ``cache``, ``x`` holds only the new positions.

        This is the code every decoding loop runs (:mod:`~transformer_edu.decoding`):
        one new position per step, with a cache.
        """
        # The stack checks what only it knows; each layer checks the rest (the same
        # messages), so a decoding step does not check its inputs twice over.
        if isinstance(cache, KVCache) and len(cache.layers) != len(self.layers):
            raise ValueError(
                f"cache has {len(cache.layers)} layers, the decoder has {len(self.layers)}; "
                "create it with KVCache(n_layers)"
            )
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, src_mask, tgt_mask, cache, i)
        if cache is not None:
            cache.length += x.shape[1]
        return x if self.norm is None else self.norm(x)
