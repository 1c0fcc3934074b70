"""The sinusoidal positional encoding (Chapter 3)."""

import math

import pytest
import torch

import transformer_edu as te


def test_sinusoidal_table_matches_the_formula():
    d_model, max_len = 16, 50
    table = te.sinusoidal_table(max_len, d_model)
    assert table.shape == (max_len, d_model)
    for pos in range(max_len):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert table[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_positional_encoding_is_a_buffer():
    pe = te.SinusoidalPositionalEncoding(8, max_len=20)
    assert list(pe.parameters()) == []
    assert "pe" in pe.state_dict()
    x = torch.zeros(2, 5, 8)
    assert torch.equal(pe(x)[0], te.sinusoidal_table(20, 8)[:5])
    assert torch.equal(pe(x, offset=3)[0], te.sinusoidal_table(20, 8)[3:8])
    assert pe.to(torch.float64).pe.dtype == torch.float64
