"""Encoder / decoder layers and stacks equal PyTorch's, weights copied (Chapters 4-6)."""

import pytest
import torch
from torch import nn

import transformer_edu as te

SIZES = [(16, 2, 32, 5, 7), (32, 4, 64, 8, 3), (24, 8, 48, 1, 6)]  # d_model, heads, d_ff, T, S


def _padding(batch, length, seed):
    g = torch.Generator().manual_seed(seed)
    keep = torch.ones(batch, length, dtype=torch.bool)
    for row in range(batch):
        n_pad = int(torch.randint(0, length, (1,), generator=g))  # at least one real token
        if n_pad:
            keep[row, -n_pad:] = False
    return keep


@pytest.mark.parametrize("d_model,n_heads,d_ff,t,s", SIZES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_and_stack(d_model, n_heads, d_ff, t, s, norm_first):
    torch.manual_seed(d_model)
    layer = nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout=0.1, batch_first=True, norm_first=norm_first)
    ours = te.copy_weights_from_torch(te.EncoderLayer(d_model, n_heads, d_ff, norm_first=norm_first), layer)
    layer.eval(), ours.eval()
    x, keep = torch.randn(3, s, d_model), _padding(3, s, d_model)
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


@pytest.mark.parametrize("d_model,n_heads,d_ff,t,s", SIZES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_and_stack(d_model, n_heads, d_ff, t, s, norm_first):
    torch.manual_seed(d_model + 1)
    layer = nn.TransformerDecoderLayer(d_model, n_heads, d_ff, dropout=0.1, batch_first=True, norm_first=norm_first)
    ours = te.copy_weights_from_torch(te.DecoderLayer(d_model, n_heads, d_ff, norm_first=norm_first), layer)
    layer.eval(), ours.eval()
    x, memory = torch.randn(3, t, d_model), torch.randn(3, s, d_model)
    src_keep, tgt_keep = _padding(3, s, 1), _padding(3, t, 2)
    causal = te.causal_mask(t)
    ref = layer(x, memory, tgt_mask=~causal[0, 0], tgt_key_padding_mask=~tgt_keep, memory_key_padding_mask=~src_keep)
    out = ours(x, memory, src_keep[:, None, None, :], causal & tgt_keep[:, None, None, :])
    assert (out - ref).abs().max() < 1e-5

    stack = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(d_model) if norm_first else None).eval()
    ours_stack = te.copy_weights_from_torch(te.Decoder(2, d_model, n_heads, d_ff, norm_first=norm_first), stack)
    ours_stack.eval()
    ref = stack(x, memory, tgt_mask=~causal[0, 0], tgt_key_padding_mask=~tgt_keep, memory_key_padding_mask=~src_keep)
    out = ours_stack(x, memory, src_keep[:, None, None, :], causal & tgt_keep[:, None, None, :])
    assert (out - ref).abs().max() < 1e-5


def test_layer_norm_matches_pytorch():
    torch.manual_seed(0)
    theirs = nn.LayerNorm(12)
    nn.init.normal_(theirs.weight), nn.init.normal_(theirs.bias)
    ours = te.copy_weights_from_torch(te.LayerNorm(12), theirs)
    x = torch.randn(4, 5, 12) * 3 + 2
    assert (ours(x) - theirs(x)).abs().max() < 1e-5
    manual = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    assert (ours(x) - (manual * ours.gamma + ours.beta)).abs().max() < 1e-5


def test_feed_forward_is_a_kernel_size_one_convolution():
    torch.manual_seed(0)
    ffn = te.PositionwiseFeedForward(8, 32).eval()
    conv1, conv2 = nn.Conv1d(8, 32, 1), nn.Conv1d(32, 8, 1)
    with torch.no_grad():
        conv1.weight.copy_(ffn.w_1.weight[..., None]), conv1.bias.copy_(ffn.w_1.bias)
        conv2.weight.copy_(ffn.w_2.weight[..., None]), conv2.bias.copy_(ffn.w_2.bias)
    x = torch.randn(2, 6, 8)
    conv = conv2(torch.relu(conv1(x.transpose(1, 2)))).transpose(1, 2)  # (B, D, L) for Conv1d
    assert (ffn(x) - conv).abs().max() < 1e-5


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
