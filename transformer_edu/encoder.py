"""The encoder: a stack of self-attention + feed-forward layers (Chapter 5)."""

from __future__ import annotations

from torch import Tensor, nn

from . import _validate
from .attention import MultiHeadAttention
from .layers import LayerNorm, PositionwiseFeedForward

__all__ = ["EncoderLayer", "Encoder"]


class EncoderLayer(nn.Module):
    """One encoder layer: self-attention, then the feed-forward network.

    Each sublayer is wrapped in a residual connection and a layer norm. In the
    paper's post-LN order (``norm_first=False``) that is
    ``x = LayerNorm(x + Dropout(Sublayer(x)))``; in the pre-LN order used by
    later models it is ``x = x + Dropout(Sublayer(LayerNorm(x)))``.

    Args:
        d_model: model width D.
        n_heads: number of attention heads H.
        d_ff: hidden width of the feed-forward network.
        dropout: dropout on attention weights, hidden activations and sublayer outputs.
        norm_first: pre-LN (``True``) instead of the paper's post-LN (``False``).

    Shape:
        - x: (B, S, D)
        - mask: boolean, ``True`` = may attend; usually (B, 1, 1, S) from :func:`padding_mask`
        - output: (B, S, D)

    See Chapter 5.
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = False
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = bool(norm_first)

    @_validate.door(lambda self, x, mask=None: _validate.encoder_inputs(self.self_attn, x, mask))
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        def self_attention(y: Tensor) -> Tensor:
            return self.self_attn(y, y, y, mask, need_weights=False)[0]

        if self.norm_first:
            x = x + self.dropout1(self_attention(self.norm1(x)))
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout1(self_attention(x)))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x


class Encoder(nn.Module):
    """A stack of ``n_layers`` :class:`EncoderLayer` (embeddings not included).

    With ``norm_first=True`` a final :class:`LayerNorm` follows the stack, as in
    ``nn.Transformer``: pre-LN layers leave their output un-normalised.

    Args:
        n_layers: number of layers N (the paper uses 6).
        d_model, n_heads, d_ff, dropout, norm_first: as in :class:`EncoderLayer`.

    Shape:
        - x: (B, S, D)
        - mask: boolean, ``True`` = may attend, broadcastable to (B, H, S, S)
        - output: (B, S, D)

    See Chapter 5.
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
            EncoderLayer(d_model, n_heads, d_ff, dropout, norm_first) for _ in range(n_layers)
        )
        self.norm = LayerNorm(d_model) if norm_first else None

    @_validate.door(lambda self, x, mask=None: _validate.encoder_inputs(self.layers[0].self_attn, x, mask))
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        for layer in self.layers:
            x = layer(x, mask)
        return x if self.norm is None else self.norm(x)
