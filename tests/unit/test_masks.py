"""Padding, causal and target masks: shapes and polarity (Chapter 1)."""

import torch

import transformer_edu as te


def test_masks_shapes_and_polarity():
    tokens = torch.tensor([[5, 6, 0], [7, 0, 0]])
    pad = te.padding_mask(tokens)
    assert pad.shape == (2, 1, 1, 3) and pad.dtype == torch.bool
    assert pad[:, 0, 0].tolist() == [[True, True, False], [True, False, False]]
    causal = te.causal_mask(3)
    assert causal.shape == (1, 1, 3, 3)
    assert causal[0, 0].tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    tgt = te.target_mask(tokens)
    assert tgt.shape == (2, 1, 3, 3)
    assert tgt[1, 0].tolist() == [[True, False, False], [True, False, False], [True, False, False]]


def test_a_causal_mask_with_an_offset_lets_new_positions_see_the_earlier_ones():
    mask = te.causal_mask(2, offset=3)  # two new positions after three cached ones
    assert mask.shape == (1, 1, 2, 5)
    assert mask[0, 0].tolist() == [[True, True, True, True, False], [True, True, True, True, True]]
    assert torch.equal(te.causal_mask(5)[..., 3:, :], mask)  # the last two rows of the full mask
