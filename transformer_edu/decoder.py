"""The decoder: masked self-attention, cross-attention and feed-forward (Chapter 6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from torch import Tensor, nn

from . import _validate
from .attention import MultiHeadAttention
from .layers import LayerNorm, PositionwiseFeedForward

if TYPE_CHECKING:
    from .kv_cache import KVCache, LayerCache

__all__ = ["Decoder", "DecoderLayer"]


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

    See Chapter 6, and Chapter 8 for the cache.
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

    @_validate.door(_validate.decoder_layer_inputs)
    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: LayerCache | None = None,
    ) -> Tensor:
        """Run the layer.

        With a ``cache`` (this layer's part of a :class:`~transformer_edu.KVCache`,
        Chapter 8), ``x`` holds only the new positions: the self-attention adds
        their keys and values to the cached ones, and the cross-attention
        projects the memory at the first step only.
        """
        self_cache, memory_cache = (None, None) if cache is None else cache

        def self_attention(y: Tensor) -> Tensor:
            return self.self_attn(y, y, y, tgt_mask, need_weights=False, cache=self_cache)[0]

        def cross_attention(y: Tensor) -> Tensor:
            return self.cross_attn(y, memory, memory, src_mask, need_weights=False, cache=memory_cache)[0]

        if self.norm_first:
            x = x + self.dropout1(self_attention(self.norm1(x)))
            x = x + self.dropout2(cross_attention(self.norm2(x)))
            x = x + self.dropout3(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout1(self_attention(x)))
            x = self.norm2(x + self.dropout2(cross_attention(x)))
            x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x


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

    @_validate.door(_validate.decoder_stack_inputs)
    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: KVCache | None = None,
    ) -> Tensor:
        """Run the stack. With a ``cache``, ``x`` holds only the new positions, and each layer gets its part.

        This is the code every decoding loop runs (:mod:`~transformer_edu.decoding`),
        one new position per step, with a :class:`~transformer_edu.KVCache`.
        """
        caches = [None] * len(self.layers) if cache is None else cache.layers
        for layer, layer_cache in zip(self.layers, caches):
            x = layer(x, memory, src_mask, tgt_mask, layer_cache)  # (B, T, D)
        return x if self.norm is None else self.norm(x)
