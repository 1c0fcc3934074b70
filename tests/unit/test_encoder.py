"""The encoder layer and stack equal PyTorch's, weights copied (Chapter 5)."""

import pytest
import torch
from torch import nn

import transformer_edu as te

if __package__:
    from .unit_support import PARITY_SIZES, padding_keep
else:
    from unit_support import PARITY_SIZES, padding_keep


@pytest.mark.parametrize("d_model,n_heads,d_ff,t,s", PARITY_SIZES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_and_stack(d_model, n_heads, d_ff, t, s, norm_first):
    torch.manual_seed(d_model)
    layer = nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout=0.1, batch_first=True, norm_first=norm_first)
    ours = te.copy_weights_from_torch(te.EncoderLayer(d_model, n_heads, d_ff, norm_first=norm_first), layer)
    layer.eval(), ours.eval()
    x, keep = torch.randn(3, s, d_model), padding_keep(3, s, d_model)
    ref = layer(x, src_key_padding_mask=~keep)
    out = ours(x, keep[:, None, None, :])
    real = keep[..., None]
    assert ((out - ref) * real).abs().max() < 1e-5

    stack = nn.TransformerEncoder(
        layer, num_layers=3, norm=nn.LayerNorm(d_model) if norm_first else None, enable_nested_tensor=False
    ).eval()
    ours_stack = te.Encoder(3, d_model, n_heads, d_ff, norm_first=norm_first)
    te.copy_weights_from_torch(ours_stack, stack).eval()
    ref = stack(x, src_key_padding_mask=~keep)
    out = ours_stack(x, keep[:, None, None, :])
    assert ((out - ref) * real).abs().max() < 1e-5
