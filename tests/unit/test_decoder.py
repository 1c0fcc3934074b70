"""The decoder layer and stack equal PyTorch's (Chapter 6), and every sublayer's dropout fires in
training only. (The key/value cache of Chapter 8 has its own tests: test_kv_cache.py.)"""

import pytest
import torch
from torch import nn

import transformer_edu as te
from transformer_edu.decoder import DecoderLayer
from transformer_edu.encoder import EncoderLayer

if __package__:
    from .unit_support import PARITY_SIZES, padding_keep, without_dropout
else:
    from unit_support import PARITY_SIZES, padding_keep, without_dropout


@pytest.mark.parametrize("d_model,n_heads,d_ff,t,s", PARITY_SIZES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_and_stack(d_model, n_heads, d_ff, t, s, norm_first):
    torch.manual_seed(d_model + 1)
    layer = nn.TransformerDecoderLayer(d_model, n_heads, d_ff, dropout=0.1, batch_first=True, norm_first=norm_first)
    ours = te.copy_weights_from_torch(te.DecoderLayer(d_model, n_heads, d_ff, norm_first=norm_first), layer)
    layer.eval(), ours.eval()
    x, memory = torch.randn(3, t, d_model), torch.randn(3, s, d_model)
    src_keep, tgt_keep = padding_keep(3, s, 1), padding_keep(3, t, 2)
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


@pytest.mark.parametrize("layer_type", [EncoderLayer, DecoderLayer])
def test_every_sublayer_dropout_fires_in_training_and_none_in_eval(layer_type):
    torch.manual_seed(0)
    layer = layer_type(16, 4, 32, dropout=0.3)
    x = torch.randn(2, 5, 16)
    args = (x,) if layer_type is EncoderLayer else (x, torch.randn(2, 4, 16))
    clean = without_dropout(layer).eval()
    reference = clean(*args)
    layer.eval()
    torch.testing.assert_close(layer(*args), reference)
    dropouts = [m for m in layer.modules() if isinstance(m, torch.nn.Dropout)]
    assert len(dropouts) >= (4 if layer_type is EncoderLayer else 6)  # attention(s), feed-forward, sublayers
    layer.train()
    for only in dropouts:  # each dropout alone changes the output
        for m in dropouts:
            m.p = 0.3 if m is only else 0.0
        changed = layer(*args)
        assert not torch.allclose(changed, reference), f"{only} did nothing in training mode"
