"""copy_weights_from_torch: our modules take a PyTorch module's weights, and refuse what does not fit."""

import pytest
from torch import nn

import transformer_edu as te


def test_copy_weights_refuses_mismatches():
    with pytest.raises(ValueError, match="n_heads"):
        te.copy_weights_from_torch(te.MultiHeadAttention(16, 4), nn.MultiheadAttention(16, 2, batch_first=True))
    with pytest.raises(ValueError, match="norm_first"):
        te.copy_weights_from_torch(
            te.EncoderLayer(16, 2, 32, norm_first=True),
            nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, norm_first=False),
        )
    with pytest.raises(ValueError, match="activation"):
        te.copy_weights_from_torch(
            te.EncoderLayer(16, 2, 32), nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, activation="gelu")
        )
    with pytest.raises(ValueError, match="final layer norm"):
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, norm_first=True)
        te.copy_weights_from_torch(
            te.Encoder(2, 16, 2, 32, norm_first=True), nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        )
    with pytest.raises(ValueError, match="number of layers"):
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        te.copy_weights_from_torch(te.Encoder(3, 16, 2, 32), nn.TransformerEncoder(layer, 2, enable_nested_tensor=False))
    with pytest.raises(TypeError, match="cannot copy"):
        te.copy_weights_from_torch(te.LayerNorm(4), nn.Linear(4, 4))
