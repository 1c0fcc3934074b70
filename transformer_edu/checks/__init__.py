"""Checks for the reader's own implementations, with a diagnosis when they fail.

Each chapter asks you to write a piece from scratch. Hand it to the matching
check and it is compared with the package's reference on random inputs of
several sizes, with and without masks::

    from transformer_edu import checks

    checks.check_attention(my_attention)          # Chapter 1
    checks.check_multi_head(MyMultiHeadAttention)  # Chapter 2

On success a check prints one line and returns ``True``. On failure it raises
:class:`CheckFailed` (an ``AssertionError``) whose message names the likely
mistake. The diagnosis works by running *reference versions that commit a
known mistake* (no √d_k, softmax over the wrong axis, reversed mask, …) and
telling you which one your output matches. The mistake's short name is in
``CheckFailed.mistake``.

Contracts (the shapes use the book's legend: B batch, H heads, L length,
D = d_model, d_k = D / H; masks are boolean with ``True`` = may attend):

- :func:`check_attention`: ``fn(query, key, value, mask=None)`` returns the
  output, or ``(output, weights)``. Inputs (B, L, d_k) and (B, H, L, d_k).
- :func:`check_multi_head`: ``cls(d_model, n_heads)`` builds an
  ``nn.Module`` whose ``forward(query, key, value, mask=None)`` maps (B, L, D)
  inputs to (B, Lq, D), or to ``(output, weights)`` with weights
  (B, H, Lq, Lk). To compare, the check copies the reference's weights into
  your layer: give it four ``nn.Linear(d_model, d_model)`` attributes named
  ``w_q``, ``w_k``, ``w_v``, ``w_o`` (the package's names), or a method
  ``load_from(ref)`` that copies them from a
  :class:`~transformer_edu.MultiHeadAttention` ``ref`` yourself.
- :func:`check_padding_mask`: ``fn(tokens, pad_id)`` returns a (B, 1, 1, L) mask.
- :func:`check_causal_mask`: ``fn(size)`` returns an (L, L) or (1, 1, L, L) mask.
- :func:`check_positional_encoding`: ``fn(max_len, d_model)`` returns the
  (max_len, d_model) sinusoidal table.
- :func:`check_layer_norm`: ``cls(d_model)`` builds a module normalising the
  last dimension; its scale and shift are found as ``gamma`` / ``beta``
  (or ``weight`` / ``bias``, ``a_2`` / ``b_2``), its ε as ``eps``.
"""

from .attention import check_attention, check_causal_mask, check_padding_mask
from .common import CheckFailed
from .layer_norm import check_layer_norm
from .multi_head import check_multi_head
from .positional import check_positional_encoding

__all__ = [
    "CheckFailed",
    "check_attention",
    "check_causal_mask",
    "check_layer_norm",
    "check_multi_head",
    "check_padding_mask",
    "check_positional_encoding",
]
