"""Boolean attention masks (Chapter 1).

Polarity, everywhere in this package: ``True`` means *may attend*, ``False``
means *blocked*. This is the polarity of
:func:`torch.nn.functional.scaled_dot_product_attention`'s boolean ``attn_mask``
and the opposite of ``nn.MultiheadAttention``'s ``key_padding_mask``.

Every mask is shaped to broadcast against the attention scores (B, H, Lq, Lk).
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import _validate

__all__ = ["padding_mask", "causal_mask", "target_mask"]


@_validate.door(lambda tokens, pad_id=0: _validate.tensor("tokens", tokens, 2))
def padding_mask(tokens: Tensor, pad_id: int = 0) -> Tensor:
    """Mask that lets every query attend to the real (non-padding) keys.

    Args:
        tokens: token ids, padded with ``pad_id``.
        pad_id: the id of the padding token.

    Returns:
        Boolean mask, ``True`` where the key is a real token.

    Shape:
        - tokens: (B, L)
        - output: (B, 1, 1, L), broadcasting over heads and queries.
    """
    return (tokens != pad_id)[:, None, None, :]  # (B, 1, 1, L)


@_validate.door(_validate.causal_mask_inputs)
def causal_mask(size: int, device: torch.device | str | None = None, offset: int = 0) -> Tensor:
    """Look-ahead mask: position ``i`` may attend to positions ``0 … i`` only.

    With an ``offset``, the L positions come after ``offset`` earlier ones (a
    decoding step with a key/value cache, Chapter 8): position ``i`` may
    attend to the earlier ones and to ``0 … i`` of its own.

    Args:
        size: the sequence length L.
        device: where to create the mask.
        offset: the number of earlier positions every position may see.

    Returns:
        Boolean mask, ``True`` on and below the diagonal (moved right by ``offset``).

    Shape:
        - output: (1, 1, L, offset + L)
    """
    allowed = torch.ones(size, offset + size, dtype=torch.bool, device=device).tril(diagonal=offset)
    return allowed[None, None]  # (1, 1, L, offset + L)


@_validate.door(lambda tokens, pad_id=0: _validate.tensor("tokens", tokens, 2))
def target_mask(tokens: Tensor, pad_id: int = 0) -> Tensor:
    """Decoder self-attention mask: causal *and* not padding.

    Args:
        tokens: target token ids, padded with ``pad_id``.
        pad_id: the id of the padding token.

    Returns:
        Boolean mask, ``True`` where query ``i`` may attend to key ``j``:
        ``j <= i`` and token ``j`` is not padding.

    Shape:
        - tokens: (B, T)
        - output: (B, 1, T, T)
    """
    return padding_mask(tokens, pad_id) & causal_mask(tokens.shape[1], tokens.device)  # (B, 1, T, T)
