"""Check of Chapter 4: layer normalisation."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .common import CheckFailed, Mistake, call, close, diagnose, passed

__all__ = ["check_layer_norm"]


_LN_MISTAKES = {
    "eps_outside_sqrt": Mistake(
        "eps_outside_sqrt",
        "ε sits outside the square root: (x − μ) / (σ + ε) with the biased std σ",
        "divide by torch.sqrt(var + eps), with ε inside the square root",
    ),
    "unbiased_variance": Mistake(
        "unbiased_variance",
        "the variance is unbiased (divided by D − 1); layer norm uses the biased variance (divided by D)",
        "x.var(dim=-1, unbiased=False, keepdim=True) (torch.var and Tensor.std default to unbiased)",
    ),
    "unbiased_std_plus_eps": Mistake(
        "unbiased_std_plus_eps",
        "the denominator is the unbiased std plus ε, (x − μ) / (x.std() + ε): unbiased, and ε outside the square root",
        "use torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)",
    ),
    "no_centering": Mistake(
        "no_centering",
        "the mean is not subtracted",
        "normalise x − μ, with μ = x.mean(dim=-1, keepdim=True)",
    ),
    "wrong_axis": Mistake(
        "wrong_axis",
        "the statistics are taken over the wrong axis (across positions, as batch norm would)",
        "take the mean and variance over the last dimension: dim=-1, keepdim=True",
    ),
    "no_affine": Mistake(
        "no_affine",
        "the scale γ and shift β are not applied",
        "return gamma * normalised + beta",
    ),
}


def _reference_layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, mistake: str | None = None) -> Tensor:
    dim = -2 if mistake == "wrong_axis" else -1
    mean = x.mean(dim=dim, keepdim=True)
    centred = x if mistake == "no_centering" else x - mean
    if mistake == "no_centering":
        var = (x - mean).pow(2).mean(dim=dim, keepdim=True)
    else:
        var = x.var(dim=dim, unbiased=mistake in ("unbiased_variance", "unbiased_std_plus_eps"), keepdim=True)
    if mistake in ("eps_outside_sqrt", "unbiased_std_plus_eps"):
        normalised = centred / (var.sqrt() + eps)
    else:
        normalised = centred / torch.sqrt(var + eps)
    return normalised if mistake == "no_affine" else gamma * normalised + beta


def _find_affine(module: nn.Module, d_model: int) -> tuple[nn.Parameter | None, nn.Parameter | None]:
    for scale, shift in (("gamma", "beta"), ("weight", "bias"), ("a_2", "b_2"), ("g", "b"), ("scale", "shift")):
        gamma, beta = getattr(module, scale, None), getattr(module, shift, None)
        if isinstance(gamma, Tensor) and isinstance(beta, Tensor) and gamma.shape == beta.shape == (d_model,):
            return gamma, beta
    return None, None


def check_layer_norm(cls: Callable[[int], nn.Module], seed: int = 0) -> bool:
    """Check your layer norm against :func:`torch.nn.functional.layer_norm`.

    The inputs have a small spread (standard deviation about 0.01 to 1), so an
    ε in the wrong place shows.

    Args:
        cls: your class; ``cls(d_model)`` must build a module normalising the
            last dimension, with γ / β as ``gamma`` / ``beta`` (or ``weight`` /
            ``bias``, ``a_2`` / ``b_2``) and ε as ``eps`` (default 1e-5 if absent).
        seed: seed of the inputs and of the γ, β the check sets.

    Raises:
        CheckFailed: e.g. ``eps_outside_sqrt``, ``unbiased_variance``,
            ``unbiased_std_plus_eps``, ``no_centering``, ``wrong_axis``, ``no_affine``.
    """
    with torch.random.fork_rng(devices=[]):  # your layer's init must not move your RNG
        count = _check_layer_norm(cls, torch.Generator().manual_seed(seed))
    return passed("check_layer_norm", f"your layer norm matches the reference on {count} cases.")


def _check_layer_norm(cls: Callable[[int], nn.Module], generator: torch.Generator) -> int:
    count = 0
    for d_model, shape, spread in ((8, (2, 5), 0.01), (16, (3, 4), 1.0), (32, (1, 6), 0.003)):
        mine = call(f"{getattr(cls, '__name__', 'your class')}({d_model})", cls, d_model)
        if not isinstance(mine, nn.Module):
            raise CheckFailed(f"cls(d_model) built a {type(mine).__name__}, not an nn.Module", "contract")
        eps = float(getattr(mine, "eps", getattr(mine, "variance_epsilon", 1e-5)))
        gamma, beta = _find_affine(mine, d_model)
        if gamma is not None:
            with torch.no_grad():
                gamma.copy_(1.0 + 0.5 * torch.randn(d_model, generator=generator))
                beta.copy_(0.5 * torch.randn(d_model, generator=generator))
            gamma_ref, beta_ref = gamma.detach().clone(), beta.detach().clone()
        else:
            gamma_ref, beta_ref = torch.ones(d_model), torch.zeros(d_model)
        x = spread * (torch.randn(*shape, d_model, generator=generator) + 3 * torch.randn(*shape, 1, generator=generator))
        case = f"d_model={d_model}, input {tuple(x.shape)} with spread {spread}, eps={eps:g}"
        with torch.no_grad():
            output = call("your layer norm", mine, x)
        if not isinstance(output, Tensor):
            raise CheckFailed(f"your layer norm returned {type(output).__name__}; expected a tensor", "contract")
        expected = F.layer_norm(x, (d_model,), gamma_ref, beta_ref, eps)
        if not close(output.detach().float(), expected, atol=1e-4):
            variants = [(m, _reference_layer_norm(x, gamma_ref, beta_ref, eps, n)) for n, m in _LN_MISTAKES.items()]
            diagnose("your layer norm", case, output.detach().float(), expected, variants, atol=1e-4)
        count += 1
    return count
