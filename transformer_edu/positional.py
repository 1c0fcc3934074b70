"""Sinusoidal positional encoding (Chapter 3) and rotary position embeddings (Chapters 3, 10).

PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

RoPE rotates feature pair (2i, 2i + 1) of every query and key at position
pos by the angle pos · ω_i, with the same frequencies ω_i = 1 / 10000^(2i / d)
over a head's width d = d_k.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from . import _validate

__all__ = ["sinusoidal_table", "SinusoidalPositionalEncoding", "rotary_angles", "RotaryPositionalEncoding"]


def _angles(max_len: int, width: int, base: float) -> Tensor:
    """pos · ω_i for every position and pair, ω_i = base^(−2i / width) computed in log space, in float64.

    Shape:
        - output: (max_len, width / 2)
    """
    position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    frequency = torch.exp(torch.arange(0, width, 2, dtype=torch.float64) * (-math.log(base) / width))  # (width / 2,)
    return position * frequency  # (max_len, width / 2)


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
    angle = _angles(max_len, d_model, 10000.0)  # (max_len, d_model / 2)
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


def rotary_angles(max_len: int, d_k: int, base: float = 10000.0) -> Tensor:
    """The angles by which RoPE turns each feature pair of a query or key, one row per position.

    Row ``pos``, column ``i`` is pos · ω_i with ω_i = base^(−2i / d_k): the
    angles of the sinusoidal table, over a head's width instead of the
    model's.

    Args:
        max_len: number of positions (rows).
        d_k: width of one head; must be even, so the features pair up.
        base: the base of the frequencies (10000 in RoFormer and LLaMA;
            later models raise it for longer contexts).

    Returns:
        Float64 tensor of angles.

    Shape:
        - output: (max_len, d_k / 2)

    See Chapters 3 and 10.
    """
    _validate.positive_int("max_len", max_len)
    _validate.even("d_k", d_k, "for rotary embeddings (features rotate in pairs)")
    _validate.positive_number("base", base)
    return _angles(max_len, d_k, float(base))


class RotaryPositionalEncoding(nn.Module):
    r"""Rotary position embeddings (RoPE): rotate queries and keys by their positions.

    Feature pair (2i, 2i + 1) of a vector at position pos is turned by the
    angle pos · ω_i::

        y[2i]     = x[2i] · cos(pos ω_i) − x[2i+1] · sin(pos ω_i)
        y[2i + 1] = x[2i] · sin(pos ω_i) + x[2i+1] · cos(pos ω_i)

    Applied to the queries at positions m and the keys at positions n, the
    dot product of a query and a key depends on the positions only through
    n − m (a rotation by m, then by n, leaves the angle n − m between them):
    attention sees relative positions, and nothing is added to the
    embeddings. The values are not rotated. Pairs are neighbouring features,
    as in RoFormer (Su et al.), Chapter 3 and Meta's LLaMA code; Hugging
    Face's ``LlamaModel`` pairs feature i with feature i + d_k / 2 instead
    ("rotate half"), the same function after a permutation of each head's
    query and key features (Chapter 10 maps one onto the other).

    The cosines and sines are buffers that are not saved in the
    ``state_dict`` (they follow from ``d_k``, ``max_len`` and ``base``). A
    :class:`~transformer_edu.MultiHeadAttention` given one applies it to its
    queries and keys before they enter the key/value cache.

    Args:
        d_k: width of one head (even).
        max_len: the most positions it covers.
        base: the base of the frequencies.

    Shape:
        - x: (B, H, L, d_k), the queries or keys of positions offset … offset + L − 1
        - output: (B, H, L, d_k)

    See Chapters 3 and 10.
    """

    def __init__(self, d_k: int, max_len: int = 5000, base: float = 10000.0) -> None:
        super().__init__()
        angle = rotary_angles(max_len, d_k, base)  # (max_len, d_k / 2)
        self.d_k, self.max_len, self.base = d_k, max_len, float(base)
        self.register_buffer("cos", torch.cos(angle).float(), persistent=False)  # (max_len, d_k / 2)
        self.register_buffer("sin", torch.sin(angle).float(), persistent=False)

    @_validate.door(_validate.rotary_inputs)
    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Rotate the vectors of positions ``offset … offset + L − 1``."""
        length = x.shape[-2]
        cos = self.cos[offset : offset + length].to(x.dtype)  # (L, d_k / 2)
        sin = self.sin[offset : offset + length].to(x.dtype)
        even, odd = x[..., 0::2], x[..., 1::2]  # (..., L, d_k / 2) each
        rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)  # (..., L, d_k / 2, 2)
        return rotated.flatten(-2)  # (..., L, d_k): the pairs side by side again

    def extra_repr(self) -> str:
        return f"d_k={self.d_k}, max_len={self.max_len}, base={self.base:g}"
