"""The decoder: masked self-attention, cross-attention and feed-forward (Chapter 6),
with a key/value cache for step-by-step decoding (Chapter 8)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from . import _validate
from .attention import MultiHeadAttention
from .layers import LayerNorm, PositionwiseFeedForward

__all__ = ["DecoderLayer", "Decoder", "KVCache"]


class KVCache:
    """Keys and values a decoder keeps between decoding steps.

    For every layer it holds the self-attention keys and values of all the
    target positions decoded so far (one step appends one position), and the
    cross-attention keys and values of the encoder's memory, computed once at
    the first step and reused afterwards. Without the cache, each step would
    recompute all of them for the whole prefix.

    Attributes:
        layers: one dict per decoder layer with the tensors ``self_k``,
            ``self_v`` of shape (B, H, t, d_k) and ``cross_k``, ``cross_v`` of
            shape (B, H, S, d_k).
        length: number of target positions t cached so far.

    See Chapter 8.
    """

    def __init__(self, n_layers: int) -> None:
        _validate.positive_int("n_layers", n_layers)
        self.layers: list[dict[str, Tensor]] = [{} for _ in range(n_layers)]
        self.length = 0

    def reorder(self, index: Tensor) -> None:
        """Keep the batch rows ``index`` (in that order), e.g. the surviving beams.

        Shape:
            - index: (B',) long, values in [0, B)
        """
        for cache in self.layers:
            for name, tensor in cache.items():
                cache[name] = tensor.index_select(0, index)  # (B', H, ·, d_k)

    def __repr__(self) -> str:
        return f"KVCache(n_layers={len(self.layers)}, length={self.length})"


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
          (B, 1, T, T) from :func:`target_mask`; with a cache, (B, 1, T, t + T)
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
        cache: dict[str, Tensor] | None = None,
    ) -> Tensor:
        """Run the layer; ``cache`` is this layer's dict of a :class:`KVCache`, or ``None``."""
        self.self_attn._check_input("x", x)
        self.cross_attn._check_input("memory", memory)
        if x.shape[0] != memory.shape[0]:
            raise ValueError(
                f"x and memory must have the same batch size, got {x.shape[0]} and {memory.shape[0]}"
            )
        if self.norm_first:
            x = x + self.dropout1(self._self_attend(self.norm1(x), tgt_mask, cache))
            x = x + self.dropout2(self._cross_attend(self.norm2(x), memory, src_mask, cache))
            x = x + self.dropout3(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout1(self._self_attend(x, tgt_mask, cache)))
            x = self.norm2(x + self.dropout2(self._cross_attend(x, memory, src_mask, cache)))
            x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x

    def _self_attend(self, x: Tensor, mask: Tensor | None, cache: dict[str, Tensor] | None) -> Tensor:
        attn = self.self_attn
        q, k, v = attn.project_qkv(x)  # (B, H, T, d_k) each
        if cache is not None:
            if "self_k" in cache:  # append this step's keys and values to the earlier ones
                k = torch.cat([cache["self_k"], k], dim=2)  # (B, H, t + T, d_k)
                v = torch.cat([cache["self_v"], v], dim=2)  # (B, H, t + T, d_k)
            cache["self_k"], cache["self_v"] = k, v
        return attn.attend(q, k, v, mask, need_weights=False)[0]

    def _cross_attend(
        self, x: Tensor, memory: Tensor, mask: Tensor | None, cache: dict[str, Tensor] | None
    ) -> Tensor:
        attn = self.cross_attn
        q = attn.split_heads(attn.w_q(x))  # (B, H, T, d_k)
        if cache is not None and "cross_k" in cache:  # the memory does not change between steps
            k, v = cache["cross_k"], cache["cross_v"]
        else:
            k, v = attn.project_kv(memory, memory)  # (B, H, S, d_k) each
            if cache is not None:
                cache["cross_k"], cache["cross_v"] = k, v
        return attn.attend(q, k, v, mask, need_weights=False)[0]


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
        """Run the stack. With a ``cache``, ``x`` holds only the new positions."""
        if cache is not None and len(cache.layers) != len(self.layers):
            raise ValueError(
                f"cache has {len(cache.layers)} layers, the decoder has {len(self.layers)}; "
                "create it with KVCache(n_layers)"
            )
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, src_mask, tgt_mask, None if cache is None else cache.layers[i])
        if cache is not None:
            cache.length += x.shape[1]
        return x if self.norm is None else self.norm(x)
