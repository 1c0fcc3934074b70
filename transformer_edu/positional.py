"""Sinusoidal positional encoding (Chapter 3).

PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from . import _validate

__all__ = ["sinusoidal_table", "SinusoidalPositionalEncoding"]


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """The table of sinusoidal encodings, one row per position.

    Even columns hold sines, odd columns cosines, and column pair ``i`` turns
    with the angular frequency 1 / 10000^(2i / d_model), computed in log space
    as exp(−2i · ln(10000) / d_model).

    Args:
        max_len: number of positions (rows).
        d_model: width of the model; must be even, so sines and cosines pair up.

    Returns:
        Float32 tensor of encodings.

    Shape:
        - output: (max_len, d_model)

    See Chapter 3.
    """
    _validate.positive_int("max_len", max_len)
    _validate.even("d_model", d_model, "for the sinusoidal encoding (sine and cosine pairs)")
    position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    frequency = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model)
    )  # (d_model / 2,)
    angle = position * frequency  # (max_len, d_model / 2)
    table = torch.empty(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.float()


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the sinusoidal encoding to a batch of embeddings, then dropout.

    The table is a buffer: it is not trained, it moves with ``.to(device)``
    and it is saved in the ``state_dict``.

    Args:
        d_model: width of the embeddings (even).
        max_len: longest sequence the table covers.
        dropout: dropout probability applied to the sum.

    Shape:
        - x: (B, L, D) with L + offset ≤ max_len
        - output: (B, L, D)

    See Chapter 3.
    """

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0) -> None:
        super().__init__()
        self.d_model = d_model
        self.max_len = max_len
        self.register_buffer("pe", sinusoidal_table(max_len, d_model))  # (max_len, D)
        self.dropout = nn.Dropout(_validate.probability("dropout", dropout))

    @_validate.door(_validate.positional_inputs)
    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Add the encodings of positions ``offset … offset + L − 1``.

        ``offset`` is the number of positions already decoded, for step-by-step
        decoding with a key/value cache (Chapter 8).
        """
        return self.dropout(x + self.pe[offset : offset + x.shape[1]].to(x.dtype))  # (B, L, D)
