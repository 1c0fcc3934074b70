"""Layer normalisation and the position-wise feed-forward network (Chapter 4), and their
successors in today's language models, RMSNorm and SwiGLU (Chapter 10)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import _validate

__all__ = ["LayerNorm", "RMSNorm", "PositionwiseFeedForward", "SwiGLUFeedForward"]


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


class RMSNorm(nn.Module):
    r"""Root-mean-square normalisation: layer norm without the mean and without β.

    y = γ · x / √(mean(x²) + ε), the mean over each position's D features
    (Zhang and Sennrich, 2019). It does not centre the features, and it has
    no shift β: D parameters instead of layer norm's 2D, and one reduction
    instead of two. T5 and LLaMA use it. On features whose mean is already
    zero it equals :class:`LayerNorm` with β = 0 (Chapter 4's exercise).

    The arithmetic runs in PyTorch's ``F.rms_norm``; Chapter 10 writes it
    out and checks the two agree.

    Args:
        d_model: number of features D.
        eps: added to the mean square for numerical stability.

    Shape:
        - x: (…, D)
        - output: (…, D)

    See Chapters 4 and 10.
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.d_model = _validate.positive_int("d_model", d_model)
        self.eps = _validate.positive_number("eps", eps)
        self.gamma = nn.Parameter(torch.ones(d_model))  # scale γ

    @_validate.door(lambda self, x: _validate.features("x", x, self.d_model))
    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, (self.d_model,), self.gamma, self.eps)

    def extra_repr(self) -> str:
        return f"{self.d_model}, eps={self.eps}"


_ACTIVATIONS = {"relu": F.relu, "gelu": lambda x: F.gelu(x, approximate="tanh")}


class PositionwiseFeedForward(nn.Module):
    r"""FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to every position alike.

    Equivalent to two convolutions with kernel size 1. Dropout sits after the
    ReLU, as in ``nn.TransformerEncoderLayer``.

    Args:
        d_model: input and output width D.
        d_ff: hidden width (the paper uses 4 · d_model = 2048).
        dropout: dropout probability on the hidden activations.
        activation: ``"relu"`` (the paper) or ``"gelu"``, GELU in the tanh
            approximation that GPT and BERT use (Chapter 10).
        bias: whether W_1 and W_2 have biases b_1 and b_2 (the paper's do).

    Shape:
        - x: (B, L, D)
        - output: (B, L, D)

    See Chapter 4.
    """

    def __init__(
        self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu", bias: bool = True
    ) -> None:
        super().__init__()
        _validate.positive_int("d_model", d_model)
        _validate.positive_int("d_ff", d_ff)
        self.activation = _validate.choice("activation", activation, tuple(_ACTIVATIONS))
        self.w_1 = nn.Linear(d_model, d_ff, bias=_validate.boolean("bias", bias))
        self.w_2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(_validate.probability("dropout", dropout))

    @_validate.door(lambda self, x: _validate.features("x", x, self.w_1.in_features))
    def forward(self, x: Tensor) -> Tensor:
        hidden = _ACTIVATIONS[self.activation](self.w_1(x))  # (B, L, d_ff)
        return self.w_2(self.dropout(hidden))


class SwiGLUFeedForward(nn.Module):
    r"""The gated feed-forward block of PaLM and LLaMA: FFN(x) = (Swish(x W_1) ⊙ x W_3) W_2.

    Swish(z) = z · σ(z) (PyTorch's SiLU). One projection, passed through
    Swish, gates the other element by element (Shazeer, 2020). It replaces
    the whole two-layer ReLU network, with three weight matrices instead of
    two, so at equal parameters its hidden width is ⅔ of the ReLU block's:
    ⅔ · 4D instead of 4D (LLaMA rounds it up to a multiple of 256). The names
    follow Meta's LLaMA code: W_1 and W_2 have the roles of the paper's
    (in, out), W_3 is the new, linear branch. Dropout sits on the gated
    hidden activations, as in :class:`PositionwiseFeedForward`.

    Args:
        d_model: input and output width D.
        d_ff: hidden width of each branch.
        dropout: dropout probability on the hidden activations.
        bias: whether the three projections have biases (LLaMA's have none).

    Shape:
        - x: (B, L, D)
        - output: (B, L, D)

    See Chapter 10.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, bias: bool = False) -> None:
        super().__init__()
        _validate.positive_int("d_model", d_model)
        _validate.positive_int("d_ff", d_ff)
        _validate.boolean("bias", bias)
        self.w_1 = nn.Linear(d_model, d_ff, bias=bias)  # the gate, through Swish
        self.w_3 = nn.Linear(d_model, d_ff, bias=bias)  # the linear branch it gates
        self.w_2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(_validate.probability("dropout", dropout))

    @_validate.door(lambda self, x: _validate.features("x", x, self.w_1.in_features))
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.silu(self.w_1(x)) * self.w_3(x)  # (B, L, d_ff)
        return self.w_2(self.dropout(hidden))
