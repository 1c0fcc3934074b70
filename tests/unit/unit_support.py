"""Helpers several unit-test modules share (each once, here)."""

from __future__ import annotations

import copy

import torch

# d_model, heads, d_ff, T, S of the parity tests against PyTorch's layers
PARITY_SIZES = [(16, 2, 32, 5, 7), (32, 4, 64, 8, 3), (24, 8, 48, 1, 6)]


def padding_keep(batch: int, length: int, seed: int) -> torch.Tensor:
    """A (batch, length) bool mask, True at real tokens: each row ends in 0 … length − 1 pads."""
    g = torch.Generator().manual_seed(seed)
    keep = torch.ones(batch, length, dtype=torch.bool)
    for row in range(batch):
        n_pad = int(torch.randint(0, length, (1,), generator=g))  # at least one real token
        if n_pad:
            keep[row, -n_pad:] = False
    return keep


def without_dropout(module: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``module`` with every dropout probability set to 0 (same weights)."""
    clean = copy.deepcopy(module)
    for m in clean.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    return clean


def tokens(batch: int, length: int, vocab: int, seed: int) -> torch.Tensor:
    """(batch, length) token ids in [1, vocab), from a seeded generator."""
    return torch.randint(1, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))
