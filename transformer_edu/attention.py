"""Scaled dot-product attention (Chapter 1) and multi-head attention (Chapter 2).

Shape legend: B batch, H heads, Lq query length, Lk key length, D = d_model,
d_k = D / H. Masks are boolean with ``True`` = *may attend*.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import _validate

if TYPE_CHECKING:
    from .kv_cache import MemoryCache, SelfAttentionCache
    from .positional import RotaryPositionalEncoding

__all__ = ["scaled_dot_product_attention", "MultiHeadAttention", "record_attention"]


@_validate.door(_validate.heads_inputs)
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[Tensor, Tensor]:
    r"""Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V, returning the weights too.

    Blocked scores are filled with the smallest value of the dtype (not −inf,
    whose softmax over a fully blocked row is 0/0, NaN, until the zeroing below
    removes it, and not −1e9, which overflows in float16), and blocked keys
    then get exactly zero weight. A query whose keys are all blocked gets
    all-zero weights and a zero output.

    Args:
        query: the queries Q.
        key: the keys K; same last dimension d_k as ``query``.
        value: the values V; same length Lk as ``key``.
        mask: boolean, ``True`` where a query may attend to a key; must
            broadcast to the scores' shape (..., Lq, Lk).
        dropout_p: probability of zeroing an attention weight (applied
            whenever > 0, as in :func:`torch.nn.functional.scaled_dot_product_attention`;
            the weights kept are scaled by 1 / (1 − ``dropout_p``)).

    Returns:
        ``(output, weights)``: the weighted sums of the values and the
        attention weights they used (each row sums to 1, or to 0 if fully
        blocked; after dropout, when ``dropout_p`` > 0).

    Shape:
        - query: (..., Lq, d_k)
        - key: (..., Lk, d_k)
        - value: (..., Lk, d_v)
        - mask: broadcastable to (..., Lq, Lk)
        - output: (..., Lq, d_v)
        - weights: (..., Lq, Lk)

    See Chapter 1.
    """
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])  # (..., Lq, Lk)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # exact zeros; fully blocked rows become 0
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ value, weights  # (..., Lq, d_v), (..., Lq, Lk)


class MultiHeadAttention(nn.Module):
    r"""Multi-head attention: H attentions of width d_k = D / H side by side.

    MultiHead(Q, K, V) = Concat(head_1, …, head_H) W_O with
    head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i). The per-head projections are
    stored as one D × D matrix each (``w_q``, ``w_k``, ``w_v``), so the layer
    has the same number of parameters as a single head of full width.

    Args:
        d_model: width D of the inputs and outputs.
        n_heads: number of heads H; must divide ``d_model``.
        dropout: dropout probability on the attention weights.
        bias: whether the four projections have biases. The key projection's
            bias is kept at zero and not trained (``requires_grad=False``): it
            adds q · b_K to every score of a query, the same for all keys, and
            softmax ignores such a shift, so its gradient is exactly zero. In
            float arithmetic the gradient is rounding noise instead (of order
            1e-11 to 1e-10), and Adam, which divides by the gradient's running
            size plus eps = 1e-9, turns it into steps of about 1 % of the
            learning rate, some 10^8 times what plain gradient descent would
            take: the bias drifts, differently in runs that should agree
            (Chapter 9 measures it). Fixed at zero, it changes nothing the
            model computes and keeps such runs' weights comparable. It is
            there so that the weights of ``nn.MultiheadAttention``, which has
            it, load unchanged (Chapter 2).
        n_kv_heads: number of key/value heads H_kv (keyword only); must
            divide ``n_heads``. ``None`` (the paper): one per query head.
            Fewer is grouped-query attention (Ainslie et al., 2023): each
            key/value head serves a group of H / H_kv query heads, and the
            key/value cache holds H_kv heads instead of H; 1 is multi-query
            attention (Shazeer, 2019). See Chapter 10.
        rotary: a :class:`~transformer_edu.RotaryPositionalEncoding` over
            d_k (keyword only): the queries and keys are rotated by their
            positions (RoPE, Chapter 10), before the keys enter a cache. For
            self-attention only: the keys are taken to sit at the queries'
            positions. ``None``: no rotation (the paper, whose positions are
            added to the embeddings).

    Shape:
        - query: (B, Lq, D)
        - key, value: (B, Lk, D)
        - mask: boolean, ``True`` = may attend, broadcastable to (B, H, Lq, Lk),
          e.g. (B, 1, 1, Lk) from :func:`padding_mask` or (B, 1, Lq, Lk) from
          :func:`target_mask`
        - output: (B, Lq, D)
        - weights: (B, H, Lq, Lk)

    See Chapter 2, Chapter 8 for the cache, and Chapter 10 for grouped
    key/value heads and rotary positions.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        *,
        n_kv_heads: int | None = None,
        rotary: RotaryPositionalEncoding | None = None,
    ) -> None:
        super().__init__()
        _validate.positive_int("d_model", d_model)
        _validate.positive_int("n_heads", n_heads)
        _validate.heads_divide(d_model, n_heads)
        n_kv_heads = n_heads if n_kv_heads is None else _validate.positive_int("n_kv_heads", n_kv_heads)
        _validate.kv_heads_divide(n_heads, n_kv_heads)
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.d_k = d_model // n_heads
        if rotary is not None:
            _validate.rotary_fits(rotary, self.d_k)
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, n_kv_heads * self.d_k, bias=bias)  # (D, D) unless heads share keys
        self.w_v = nn.Linear(d_model, n_kv_heads * self.d_k, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        if bias:  # softmax ignores the shift q · b_K: the key bias changes nothing, so it is not trained
            nn.init.zeros_(self.w_k.bias)
            self.w_k.bias.requires_grad_(False)
        self.rotary = rotary
        self.dropout = nn.Dropout(_validate.probability("dropout", dropout))
        self._recorder: tuple[dict[str, Tensor], str] | None = None  # see record_attention

    @_validate.door(_validate.attention_inputs)
    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = True,
        *,
        cache: SelfAttentionCache | MemoryCache | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key`` / ``value``.

        Args:
            query: the sequence asking (the decoder's, in cross-attention).
            key: the sequence being searched.
            value: what is returned; usually the same tensor as ``key``.
            mask: boolean, ``True`` = may attend; broadcastable to (B, H, Lq, Lk).
            need_weights: return the attention weights, computed by
                :func:`scaled_dot_product_attention` (Chapter 1). ``False``
                runs PyTorch's fused
                :func:`torch.nn.functional.scaled_dot_product_attention`
                instead, which computes the same output faster and returns
                ``None`` for the weights.
            cache: while decoding step by step (Chapter 8), this layer's part
                of a :class:`~transformer_edu.KVCache`: a
                :class:`~transformer_edu.kv_cache.SelfAttentionCache` (the
                keys and values of ``key``'s new positions are added to the
                cached ones, and the mask covers them all) or a
                :class:`~transformer_edu.kv_cache.MemoryCache` (the keys and
                values of the memory, projected at the first step only).

        Returns:
            ``(output, weights)`` with weights of shape (B, H, Lq, Lk), or
            ``None`` when ``need_weights`` is ``False``.
        """
        q = self.split_heads(self.w_q(query))  # (B, H, Lq, d_k)
        if cache is not None and cache.holds_memory:  # cross-attention after the first step (Chapter 8):
            k, v = cache.keys, cache.values  # the memory's keys and values, kept
        else:
            k = self.split_heads(self.w_k(key), self.n_kv_heads)  # (B, H_kv, Lk, d_k)
            v = self.split_heads(self.w_v(value), self.n_kv_heads)  # (B, H_kv, Lk, d_k)
            if self.rotary is not None:  # self-attention with RoPE (Chapter 10): the new positions come
                offset = 0 if cache is None else cache.length  # after the cached ones
                q, k = self.rotary(q, offset), self.rotary(k, offset)  # rotated before the cache keeps k
            if cache is not None:  # keep them for the next steps; self-attention gets the cached
                k, v = cache.update(k, v)  # positions, then the new ones: (B, H_kv, t + Lk, d_k)
        if self.n_kv_heads < self.n_heads:  # grouped-query attention (Chapter 10): each key/value head
            k, v = self.share_kv_heads(k), self.share_kv_heads(v)  # serves its group: (B, H, Lk, d_k)
        p = self.dropout.p if self.training else 0.0
        if need_weights or self._recorder is not None:
            out, weights = scaled_dot_product_attention(q, k, v, mask, p)  # (B, H, Lq, d_k), (B, H, Lq, Lk)
            if self._recorder is not None:
                maps, name = self._recorder
                maps[name] = weights.detach()
        else:  # the same attention in PyTorch's fused kernel, which keeps no weights
            out, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p), None
        return self.w_o(self.merge_heads(out)), (weights if need_weights else None)

    def split_heads(self, x: Tensor, heads: int | None = None) -> Tensor:
        """(B, L, heads · d_k) → (B, heads, L, d_k); ``heads`` defaults to H."""
        batch, length, _ = x.shape
        x = x.view(batch, length, heads or self.n_heads, self.d_k)  # (B, L, heads, d_k)
        return x.transpose(1, 2)  # (B, heads, L, d_k)

    def share_kv_heads(self, x: Tensor) -> Tensor:
        """(B, H_kv, L, d_k) → (B, H, L, d_k): key/value head j serves query heads j·G … (j + 1)·G − 1.

        G = H / H_kv is the size of a group.

        The heads are repeated as a view (``expand``), then made one tensor
        for the attention; the cache keeps only the H_kv heads.
        """
        batch, kv_heads, length, d_k = x.shape
        group = self.n_heads // kv_heads
        x = x[:, :, None].expand(batch, kv_heads, group, length, d_k)  # (B, H_kv, G, L, d_k), no copy
        return x.reshape(batch, self.n_heads, length, d_k)  # (B, H, L, d_k)

    def merge_heads(self, x: Tensor) -> Tensor:
        """(B, H, L, d_k) → (B, L, D), the concatenation of the heads."""
        batch, _, length, _ = x.shape
        x = x.transpose(1, 2)  # (B, L, H, d_k), no longer contiguous
        return x.reshape(batch, length, self.d_model)  # (B, L, D)


@contextmanager
def record_attention(model: nn.Module) -> Iterator[dict[str, Tensor]]:
    """Record the attention weights of every :class:`MultiHeadAttention` in ``model``.

    Inside the ``with`` block, each attention layer computes its weights with
    :func:`scaled_dot_product_attention` (rather than PyTorch's fused kernel)
    and stores them, detached, in the yielded dictionary under its module name
    (e.g. ``"encoder.layers.0.self_attn"``), shaped (B, H, Lq, Lk): the
    weights it applied, so after dropout in training mode. The last call of
    each layer wins.

    Example::

        with record_attention(model) as maps:
            model(src, tgt)
        maps["decoder.layers.1.cross_attn"]  # (B, H, T, S)

    See Chapter 7.
    """
    maps: dict[str, Tensor] = {}
    layers = [(name, m) for name, m in model.named_modules() if isinstance(m, MultiHeadAttention)]
    _validate.has_attention(model, layers)
    for name, layer in layers:
        layer._recorder = (maps, name)
    try:
        yield maps
    finally:
        for _, layer in layers:
            layer._recorder = None
