"""The loss of Chapter 7: label smoothing, and the perplexity.

Shape legend: B batch, T target length, V target vocabulary size, N = B · T positions.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import _validate

__all__ = ["LabelSmoothingLoss", "perplexity"]


class LabelSmoothingLoss(nn.Module):
    r"""Label-smoothed loss in its KL-divergence form, ignoring padding.

    Instead of the one-hot target, the model is asked to match the smoothed
    distribution q that keeps 1 − ε of the mass on the gold token and spreads
    ε uniformly over *all* V tokens, the gold one included:

        q(k) = (1 − ε) · [k = gold] + ε / V

    This is the convention of ``nn.CrossEntropyLoss(label_smoothing=ε)``. (The
    paper's tensor2tensor code spreads ε over the V − 1 other tokens instead,
    which is the same distribution with ε' = ε · V / (V − 1).) The loss is

        KL(q ‖ p) = Σ_k q(k) · (log q(k) − log p(k)) = CE_ε(p) − H(q),

    so it has the same gradients as PyTorch's label-smoothed cross-entropy
    CE_ε and differs from it by the constant entropy H(q) of the target; a
    model that predicts exactly q reaches a loss of 0. The paper gives only
    the value ε_ls = 0.1; this KL form follows tensor2tensor's implementation.

    Args:
        vocab_size: number of target tokens V.
        smoothing: the mass ε moved off the gold token, in [0, 1).
        pad_id: target id of padding; those positions do not count.

    Shape:
        - logits: (B, T, V) or (N, V), unnormalised scores
        - target: (B, T) or (N,), token ids
        - output: scalar, the mean over the non-padding positions

    See Chapter 7.
    """

    def __init__(self, vocab_size: int, smoothing: float = 0.1, pad_id: int = 0) -> None:
        super().__init__()
        self.vocab_size = _validate.positive_int("vocab_size", vocab_size)
        self.smoothing = _validate.probability("smoothing", smoothing)
        if isinstance(pad_id, bool) or not isinstance(pad_id, int) or not 0 <= pad_id < vocab_size:
            raise ValueError(f"pad_id must be an id in [0, {vocab_size - 1}], got {pad_id!r}")
        self.pad_id = pad_id

    def target_distribution(self, target: Tensor) -> Tensor:
        """The smoothed distribution q for each target id (padding included).

        Shape:
            - target: (*), token ids
            - output: (*, V), each row sums to 1
        """
        self._check_ids(target)
        eps = self.smoothing
        q = torch.full((*target.shape, self.vocab_size), eps / self.vocab_size, device=target.device)
        return q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1.0 - eps))  # (*, V)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        _validate.float_tensor("logits", logits, (2, 3))
        _validate.width("logits", logits, self.vocab_size, "vocab_size")
        if tuple(target.shape) != tuple(logits.shape[:-1]):
            raise ValueError(
                f"target of shape {tuple(target.shape)} does not match logits of shape "
                f"{tuple(logits.shape)}; expected target shape {tuple(logits.shape[:-1])}"
            )
        log_probs = logits.float().log_softmax(dim=-1).reshape(-1, self.vocab_size)  # (N, V)
        target = target.reshape(-1)  # (N,)
        real = target != self.pad_id
        n_real = int(real.sum())
        if n_real == 0:
            raise ValueError(f"target holds only padding (pad_id = {self.pad_id}): no position to learn from")
        q = self.target_distribution(target[real])  # (n, V)
        return F.kl_div(log_probs[real], q, reduction="sum") / n_real

    def _check_ids(self, target: Tensor) -> None:
        _validate.tensor("target", target)
        if target.is_floating_point() or target.dtype == torch.bool:
            raise TypeError(f"target must hold integer token ids, got dtype {target.dtype}")
        if target.numel() and (int(target.min()) < 0 or int(target.max()) >= self.vocab_size):
            raise ValueError(
                f"target holds ids in [{int(target.min())}, {int(target.max())}], "
                f"outside the vocabulary [0, {self.vocab_size - 1}]"
            )

    def extra_repr(self) -> str:
        return f"vocab_size={self.vocab_size}, smoothing={self.smoothing}, pad_id={self.pad_id}"


def perplexity(mean_nll: float | Tensor) -> float:
    """exp(mean negative log-likelihood per token), in nats.

    Use the plain cross-entropy (e.g. ``evaluate(...)["nll"]``), not the
    label-smoothed loss, which is not a log-likelihood.
    """
    return math.exp(float(mean_nll))
