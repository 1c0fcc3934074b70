"""Scaled dot-product attention (Chapter 1) and multi-head attention (Chapter 2).

Shape legend: B batch, H heads, Lq query length, Lk key length, D = d_model,
d_k = D / H. Masks are boolean with ``True`` = *may attend*.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import _validate

__all__ = [
    "scaled_dot_product_attention",
    "MultiHeadAttention",
    "record_attention",
    "stacked_projections",
]


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
            whenever > 0, as in :func:`torch.nn.functional.scaled_dot_product_attention`).

    Returns:
        ``(output, weights)``: the weighted sums of the values and the
        attention weights (each row sums to 1, or to 0 if fully blocked).

    Shape:
        - query: (..., Lq, d_k)
        - key: (..., Lk, d_k)
        - value: (..., Lk, d_v)
        - mask: broadcastable to (..., Lq, Lk)
        - output: (..., Lq, d_v)
        - weights: (..., Lq, Lk)

    See Chapter 1.
    """
    _validate.heads_inputs(query, key, value, mask, dropout_p)
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

    Shape:
        - query: (B, Lq, D)
        - key, value: (B, Lk, D)
        - mask: boolean, ``True`` = may attend, broadcastable to (B, H, Lq, Lk),
          e.g. (B, 1, 1, Lk) from :func:`padding_mask` or (B, 1, Lq, Lk) from
          :func:`target_mask`
        - output: (B, Lq, D)
        - weights: (B, H, Lq, Lk)

    See Chapter 2.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True) -> None:
        super().__init__()
        _validate.positive_int("d_model", d_model)
        _validate.positive_int("n_heads", n_heads)
        if d_model % n_heads:
            raise ValueError(
                f"n_heads = {n_heads} must divide d_model = {d_model} "
                f"(each head gets d_model / n_heads features)"
            )
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        if bias:  # softmax ignores the shift q · b_K: the key bias changes nothing, so it is not trained
            nn.init.zeros_(self.w_k.bias)
            self.w_k.bias.requires_grad_(False)
        self.dropout = nn.Dropout(_validate.probability("dropout", dropout))
        self._recorder: tuple[dict[str, Tensor], str] | None = None
        self._frozen: dict[int, tuple[Tensor, Tensor | None]] | None = None  # see stacked_projections

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = True,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key`` / ``value``.

        Args:
            query: the sequence asking (the decoder's, in cross-attention).
            key: the sequence being searched.
            value: what is returned; usually the same tensor as ``key``.
            mask: boolean, ``True`` = may attend; broadcastable to (B, H, Lq, Lk).
            need_weights: return the attention weights. ``False`` takes the
                fused :func:`torch.nn.functional.scaled_dot_product_attention`
                path, which is faster and returns ``None`` for the weights.

        Returns:
            ``(output, weights)`` with weights of shape (B, H, Lq, Lk), or
            ``None`` when ``need_weights`` is ``False``.
        """
        _validate.attention_inputs(query, key, value, mask, self.d_model, self.n_heads)
        if query is key and key is value:  # self-attention: one matrix product for Q, K and V
            q, k, v = self.project_qkv(query)
        else:
            q = self.split_heads(self.w_q(query))
            k, v = self.project_kv(key, value)
        return self.attend(q, k, v, mask, need_weights)

    def split_heads(self, x: Tensor) -> Tensor:
        """(B, L, D) → (B, H, L, d_k)."""
        batch, length, _ = x.shape
        x = x.view(batch, length, self.n_heads, self.d_k)  # (B, L, H, d_k)
        return x.transpose(1, 2)  # (B, H, L, d_k)

    def merge_heads(self, x: Tensor) -> Tensor:
        """(B, H, L, d_k) → (B, L, D), the concatenation of the heads."""
        batch, _, length, _ = x.shape
        x = x.transpose(1, 2)  # (B, L, H, d_k), no longer contiguous
        return x.reshape(batch, length, self.d_model)  # (B, L, D)

    def project_kv(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Project keys and values and split them into heads, (B, Lk, D) → (B, H, Lk, d_k).

        Exposed so a decoder can cache the result (Chapter 8).
        """
        if key is value:  # cross-attention reads one memory: one product for K and V
            k, v = self._project_heads(key, (self.w_k, self.w_v))
            return k, v
        return self.split_heads(self.w_k(key)), self.split_heads(self.w_v(value))

    def project_qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Self-attention's Q, K and V of one sequence, split into heads, (B, L, D) → 3 × (B, H, L, d_k).

        Computes x [W_Q | W_K | W_V] as one matrix product, which is faster
        than three and gives the same numbers up to rounding.
        """
        q, k, v = self._project_heads(x, (self.w_q, self.w_k, self.w_v))
        return q, k, v

    def _project_heads(self, x: Tensor, linears: tuple[nn.Linear, ...]) -> tuple[Tensor, ...]:
        """x [W_1 | … | W_n] as one matrix product, split into n projections of H heads each.

        The same as ``split_heads(linear(x))`` for each of the n linears, in
        three cheap view operations instead of 3n (it matters while decoding,
        where every step pays for every operation).

        Shape:
            - x: (B, L, D)
            - output: n × (B, H, L, d_k)
        """
        if self._frozen is not None:  # decoding: the stacked matrix is made once, not at every step
            key = len(linears)  # 3: W_Q|W_K|W_V, 2: W_K|W_V
            if key not in self._frozen:
                self._frozen[key] = _stack(linears)
            weight, bias = self._frozen[key]
        else:
            weight, bias = _stack(linears)
        return self.split_stacked_heads(F.linear(x, weight, bias), len(linears))

    def split_stacked_heads(self, y: Tensor, n: int) -> tuple[Tensor, ...]:
        """n projections side by side, each split into heads: (B, L, n·D) → n × (B, H, L, d_k), views."""
        batch, length, _ = y.shape
        y = y.view(batch, length, n, self.n_heads, self.d_k)  # (B, L, n, H, d_k)
        return y.permute(2, 0, 3, 1, 4).unbind(0)  # n × (B, H, L, d_k)

    def attend(
        self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, need_weights: bool = True
    ) -> tuple[Tensor, Tensor | None]:
        """Attention over already projected heads, then the output projection W_O.

        The second half of :meth:`forward`, for a caller that projects (and
        caches) the heads itself, as :class:`~transformer_edu.DecoderLayer`
        does; it checks nothing: :meth:`forward`, or the caller's own entry
        point, has.

        Shape:
            - q: (B, H, Lq, d_k); k, v: (B, H, Lk, d_k)
            - mask: boolean, ``True`` = may attend, broadcastable to (B, H, Lq, Lk)
            - output: (B, Lq, D); weights: (B, H, Lq, Lk) or ``None``
        """
        p = self.dropout.p if self.training else 0.0
        if need_weights or self._recorder is not None:
            out, weights = scaled_dot_product_attention(q, k, v, mask)
            if self._recorder is not None:
                maps, name = self._recorder
                maps[name] = weights.detach()
            if p > 0.0:  # dropout on the weights, the recorded picture stays clean
                weights = self.dropout(weights)
                out = weights @ v
        else:
            out, weights = _fused_attention(q, k, v, mask, p), None
        return self.w_o(self.merge_heads(out)), (weights if need_weights else None)


def _stack(linears: tuple[nn.Linear, ...]) -> tuple[Tensor, Tensor | None]:
    """The weights (and biases) of several projections stacked, for one matrix product."""
    weight = torch.cat([linear.weight for linear in linears])  # (n·D, D)
    bias = None if linears[0].bias is None else torch.cat([linear.bias for linear in linears])  # (n·D,)
    return weight, bias


# Since PyTorch 2.5 every backend of F.scaled_dot_product_attention answers a
# query that may attend to no key with zeros, as our scaled_dot_product_attention
# does (pytorch/pytorch#131863); before, it returned NaN.
def _torch_version() -> tuple[int, int]:
    """PyTorch's (major, minor) version, read from its version string; (0, 0)
    where that is not a version (e.g. the book's API page, which documents the
    package with torch mocked)."""
    try:
        major, minor = str(torch.__version__).split("+")[0].split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return 0, 0


_KERNEL_ZEROES_BLOCKED_ROWS = _torch_version() >= (2, 5)


def _fused_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float) -> Tensor:
    """PyTorch's fused kernel, with fully blocked query rows answered by zeros.

    On PyTorch < 2.5 the kernel returns NaN for a query that may attend to
    nothing, so such rows are opened up for the kernel and zeroed afterwards.
    That needs to know whether there are any (``bool(…)``, a host–device
    synchronisation on a GPU), so newer versions skip it.
    """
    if mask is None or _KERNEL_ZEROES_BLOCKED_ROWS:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
    has_key = mask.any(dim=-1, keepdim=True)  # (…, Lq, 1)
    if bool(has_key.all()):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key, dropout_p=dropout_p)
    return out.masked_fill(~has_key, 0.0)


@contextmanager
def stacked_projections(model: nn.Module) -> Iterator[None]:
    """Stack each attention layer's projection matrices once for the whole ``with`` block.

    Self-attention computes x [W_Q | W_K | W_V] as one matrix product, and
    cross-attention m [W_K | W_V]; in training the stacked matrix is rebuilt at
    every call, as the weights change. While decoding they do not, and
    rebuilding it at every step would copy every projection matrix once per
    generated token. Inside the block, each :class:`MultiHeadAttention` of
    ``model`` builds it at its first call and reuses it; do not change the
    weights inside the block. Used by :mod:`transformer_edu.decoding`.
    """
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention) and m._frozen is None]
    for layer in layers:
        layer._frozen = {}
    try:
        yield
    finally:
        for layer in layers:
            layer._frozen = None


@contextmanager
def record_attention(model: nn.Module) -> Iterator[dict[str, Tensor]]:
    """Record the attention weights of every :class:`MultiHeadAttention` in ``model``.

    Inside the ``with`` block, each attention layer takes the path that
    computes weights and stores them, detached, in the yielded dictionary under
    its module name (e.g. ``"encoder.layers.0.self_attn"``), shaped
    (B, H, Lq, Lk). The last call of each layer wins.

    Example::

        with record_attention(model) as maps:
            model(src, tgt)
        maps["decoder.layers.1.cross_attn"]  # (B, H, T, S)

    See Chapter 7.
    """
    maps: dict[str, Tensor] = {}
    layers = [(name, m) for name, m in model.named_modules() if isinstance(m, MultiHeadAttention)]
    if not layers:
        raise ValueError(f"model ({type(model).__name__}) has no MultiHeadAttention layers to record")
    for name, layer in layers:
        layer._recorder = (maps, name)
    try:
        yield maps
    finally:
        for _, layer in layers:
            layer._recorder = None
