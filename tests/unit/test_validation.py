"""Bad input gets a ValueError / TypeError that says what is wrong, never a deep stack trace."""

import pytest
import torch

import transformer_edu as te


def config(**overrides):
    return te.TransformerConfig(**{**dict(src_vocab_size=10, tgt_vocab_size=12, d_model=16, n_heads=2,
                                          d_ff=32, n_layers=1, max_len=8), **overrides})


@pytest.mark.parametrize("overrides,error,words", [
    (dict(n_heads=3), ValueError, "n_heads = 3 must divide d_model = 16"),
    (dict(dropout=1.0), ValueError, "dropout must be in \\[0, 1\\), got 1.0"),
    (dict(dropout=-0.1), ValueError, "dropout"),
    (dict(dropout="0.1"), TypeError, "dropout must be a float"),
    (dict(n_layers=0), ValueError, "n_layers must be at least 1, got 0"),
    (dict(d_model=15, n_heads=5), ValueError, "d_model must be even"),
    (dict(d_model=16.0), TypeError, "d_model must be an int"),
    (dict(pad_id=12), ValueError, "pad_id = 12"),
    (dict(share_embeddings=True), ValueError, "share_embeddings needs one vocabulary"),
])
def test_bad_config(overrides, error, words):
    with pytest.raises(error, match=words):
        config(**overrides)


def test_bad_module_arguments():
    with pytest.raises(ValueError, match="n_heads = 5 must divide d_model = 16"):
        te.MultiHeadAttention(16, 5)
    with pytest.raises(ValueError, match="dropout must be in"):
        te.EncoderLayer(16, 2, 32, dropout=1.5)
    with pytest.raises(ValueError, match="n_layers must be at least 1"):
        te.Encoder(0, 16, 2, 32)
    with pytest.raises(ValueError, match="n_layers must be at least 1"):
        te.Decoder(0, 16, 2, 32)
    with pytest.raises(ValueError, match="d_model must be even"):
        te.sinusoidal_table(10, 7)
    with pytest.raises(ValueError, match="eps must be a positive number"):
        te.LayerNorm(8, eps=0)
    with pytest.raises(ValueError, match="size must be at least 1"):
        te.causal_mask(0)
    with pytest.raises(TypeError, match="config must be a TransformerConfig"):
        te.Transformer({"d_model": 16})
    with pytest.raises(ValueError, match="unknown TransformerConfig fields \\['heads'\\]"):
        te.TransformerConfig.from_dict({**config().to_dict(), "heads": 2})


def test_bad_tokens():
    model = te.Transformer(config()).eval()
    src, tgt = torch.randint(1, 10, (2, 5)), torch.randint(1, 12, (2, 4))
    with pytest.raises(ValueError, match="src holds token id 10, outside the vocabulary \\[0, 9\\]"):
        model(torch.full((2, 5), 10), tgt)
    with pytest.raises(ValueError, match="tgt holds token id -1"):
        model(src, torch.full((2, 4), -1))
    with pytest.raises(TypeError, match="src must hold integer token ids"):
        model(src.float(), tgt)
    with pytest.raises(ValueError, match="src has length 9, longer than max_len = 8"):
        model(torch.randint(1, 10, (2, 9)), tgt)
    with pytest.raises(ValueError, match="tgt must be 2-D"):
        model(src, tgt[0])
    with pytest.raises(ValueError, match="src has length 0"):
        model(src[:, :0], tgt)
    with pytest.raises(TypeError, match="src must be a torch.Tensor"):
        model([[1, 2, 3]], tgt)


def test_bad_masks():
    model = te.Transformer(config()).eval()
    src, tgt = torch.randint(1, 10, (2, 5)), torch.randint(1, 12, (2, 4))
    with pytest.raises(ValueError, match="does not broadcast to the attention scores"):
        model(src, tgt, src_mask=torch.ones(2, 5, dtype=torch.bool))  # (B, S) instead of (B, 1, 1, S)
    with pytest.raises(TypeError, match="must be a boolean tensor \\(True = may attend\\)"):
        model(src, tgt, src_mask=torch.ones(2, 1, 1, 5))
    with pytest.raises(ValueError, match="does not broadcast"):
        model(src, tgt, tgt_mask=torch.ones(1, 1, 5, 5, dtype=torch.bool))
    square = torch.tensor([[3, 4, 2], [3, 2, 0], [8, 0, 0]])  # B == S: a (B, S) mask would broadcast
    with pytest.raises(ValueError, match="mask must be 4-D"):
        te.Encoder(1, 16, 2, 32)(torch.randn(3, 3, 16), square != 0)
    q = torch.randn(2, 3, 4)
    with pytest.raises(ValueError, match="does not broadcast"):
        te.scaled_dot_product_attention(q, q, q, torch.ones(3, 3, 3, dtype=torch.bool))


def test_bad_attention_inputs():
    mha = te.MultiHeadAttention(16, 2)
    x = torch.randn(2, 5, 16)
    with pytest.raises(ValueError, match="query has last dimension 12 .* expected d_model = 16"):
        mha(torch.randn(2, 5, 12), x, x)
    with pytest.raises(ValueError, match="query must be 3-D \\(B, L, D\\)"):
        mha(x[0], x, x)
    with pytest.raises(ValueError, match="same batch size"):
        mha(x, x[:1], x[:1])
    with pytest.raises(ValueError, match="key and value must have the same length"):
        mha(x, x, x[:, :3])
    with pytest.raises(TypeError, match="query must be a floating-point tensor"):
        mha(x.long(), x, x)
    with pytest.raises(ValueError, match="query and key must have the same width d_k"):
        te.scaled_dot_product_attention(torch.randn(2, 3, 4), torch.randn(2, 3, 5), torch.randn(2, 3, 5))
    with pytest.raises(ValueError, match="key and value must have the same length Lk"):
        te.scaled_dot_product_attention(torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 2, 4))
    with pytest.raises(ValueError, match="dropout_p must be in"):
        te.scaled_dot_product_attention(x, x, x, dropout_p=2.0)


def test_bad_layer_inputs():
    with pytest.raises(ValueError, match="x has last dimension 8 .* expected d_model = 16"):
        te.EncoderLayer(16, 2, 32)(torch.randn(2, 3, 8))
    with pytest.raises(ValueError, match="memory has last dimension 8"):
        te.DecoderLayer(16, 2, 32)(torch.randn(2, 3, 16), torch.randn(2, 4, 8))
    with pytest.raises(ValueError, match="x and memory must have the same batch size"):
        te.DecoderLayer(16, 2, 32)(torch.randn(2, 3, 16), torch.randn(3, 4, 16))
    with pytest.raises(ValueError, match="x has last dimension 4 .* d_model = 8"):
        te.LayerNorm(8)(torch.randn(2, 4))
    with pytest.raises(ValueError, match="positions 0…9 are outside the table of max_len = 8"):
        te.SinusoidalPositionalEncoding(16, max_len=8)(torch.randn(1, 10, 16))
    with pytest.raises(ValueError, match="cache has 3 layers, the decoder has 1"):
        model = te.Transformer(config())
        src = torch.randint(1, 10, (1, 3))
        model.decode(torch.ones(1, 1, dtype=torch.long), model.encode(src), cache=te.KVCache(3))


def test_the_embeddings_name_bad_ids_and_positions():
    model = te.Transformer(config())
    with pytest.raises(ValueError, match="src holds token id 10, outside the vocabulary"):
        model.embed_source(torch.tensor([[3, 10]]))
    with pytest.raises(ValueError, match="positions 8…8 are outside the table of max_len = 8"):
        model.embed_target(torch.tensor([[1]]), offset=8)
    assert model.embed_target(torch.tensor([[1, 2]]), offset=6).shape == (1, 2, 16)
