"""Layer normalisation and the position-wise feed-forward network (Chapter 4)."""

import torch
from torch import nn

import transformer_edu as te
from transformer_edu.layers import PositionwiseFeedForward

if __package__:
    from .unit_support import without_dropout
else:
    from unit_support import without_dropout


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


def test_feed_forward_dropout_acts_on_the_hidden_layer_in_training_only():
    torch.manual_seed(0)
    ff = PositionwiseFeedForward(16, 64, dropout=0.5)
    x = torch.randn(2, 5, 16)
    clean = without_dropout(ff).eval()
    ff.train()
    torch.manual_seed(1)
    trained = ff(x)
    torch.manual_seed(1)  # the same mask, drawn by hand on the hidden layer
    hidden = torch.relu(ff.w_1(x))
    expected = ff.w_2(torch.nn.functional.dropout(hidden, 0.5, training=True))
    torch.testing.assert_close(trained, expected)
    assert not torch.allclose(trained, clean(x))
    ff.eval()
    torch.testing.assert_close(ff(x), clean(x))
