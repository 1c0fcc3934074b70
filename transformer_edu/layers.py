"""Layer normalisation and the position-wise feed-forward network (Chapter 4)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import _validate

__all__ = ["LayerNorm", "PositionwiseFeedForward"]


class LayerNorm(nn.Module):
    r"""Layer normalisation over the last dimension, the same function as ``nn.LayerNorm``.

    y = γ · (x − μ) / √(σ² + ε) + β, where μ and σ² are the mean and the
    *biased* variance (divided by D, not D − 1) of each position's D features,
    and ε sits inside the square root. Normalising ``x.std() + eps`` instead
    is a different function (Chapter 4 shows how different).

    The arithmetic runs in PyTorch's fused kernel, which computes exactly this
    formula; Chapter 4 builds it from scratch and checks the two agree.

    Args:
        d_model: number of features D.
        eps: added to the variance for numerical stability.

    Shape:
        - x: (…, D)
        - output: (…, D)
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.d_model = _validate.positive_int("d_model", d_model)
        self.eps = _validate.positive_number("eps", eps)
        self.gamma = nn.Parameter(torch.ones(d_model))  # scale γ
        self.beta = nn.Parameter(torch.zeros(d_model))  # shift β

    @_validate.door(lambda self, x: _validate.features("x", x, self.d_model))
    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, (self.d_model,), self.gamma, self.beta, self.eps)

    def extra_repr(self) -> str:
        return f"{self.d_model}, eps={self.eps}"


class PositionwiseFeedForward(nn.Module):
    r"""FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to every position alike.

    Equivalent to two convolutions with kernel size 1. Dropout sits after the
    ReLU, as in ``nn.TransformerEncoderLayer``.

    Args:
        d_model: input and output width D.
        d_ff: hidden width (the paper uses 4 · d_model = 2048).
        dropout: dropout probability on the hidden activations.

    Shape:
        - x: (B, L, D)
        - output: (B, L, D)

    See Chapter 4.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        _validate.positive_int("d_model", d_model)
        _validate.positive_int("d_ff", d_ff)
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(_validate.probability("dropout", dropout))

    @_validate.door(lambda self, x: _validate.features("x", x, self.w_1.in_features))
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.relu(self.w_1(x))  # (B, L, d_ff)
        return self.w_2(self.dropout(hidden))
