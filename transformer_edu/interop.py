"""Copying weights from PyTorch's built-in modules, to prove ours compute the same.

PyTorch stores the three input projections of ``nn.MultiheadAttention`` as one
(3D, D) matrix ``in_proj_weight``; ours keeps W_Q, W_K, W_V apart, so the
matrix is cut in three. Layer norms map ``weight`` → γ and ``bias`` → β.
Chapters 1, 2, 4, 5 and 6 use this to compare with PyTorch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import MultiHeadAttention
from .decoder import Decoder, DecoderLayer
from .encoder import Encoder, EncoderLayer
from .layers import LayerNorm, PositionwiseFeedForward

__all__ = ["copy_weights_from_torch"]


def copy_weights_from_torch(ours: nn.Module, theirs: nn.Module) -> nn.Module:
    """Load the weights of a PyTorch module into its ``transformer_edu`` equivalent.

    Supported pairs (ours ← theirs):

    - :class:`MultiHeadAttention` ← ``nn.MultiheadAttention``
    - :class:`EncoderLayer` ← ``nn.TransformerEncoderLayer``
    - :class:`DecoderLayer` ← ``nn.TransformerDecoderLayer``
    - :class:`Encoder` ← ``nn.TransformerEncoder``
    - :class:`Decoder` ← ``nn.TransformerDecoder``
    - :class:`LayerNorm` ← ``nn.LayerNorm``

    Build PyTorch's layers with ``batch_first=True`` and ReLU (the paper's
    activation) to compare outputs; ``norm_first`` must agree with ours.

    Args:
        ours: the module to overwrite, in place.
        theirs: the PyTorch module to read.

    Returns:
        ``ours``, for chaining.

    Raises:
        TypeError: for an unsupported pair.
        ValueError: when sizes or settings differ (named in the message).
    """
    pairs = (
        (MultiHeadAttention, nn.MultiheadAttention, _copy_attention),
        (EncoderLayer, nn.TransformerEncoderLayer, _copy_encoder_layer),
        (DecoderLayer, nn.TransformerDecoderLayer, _copy_decoder_layer),
        (Encoder, nn.TransformerEncoder, _copy_stack),
        (Decoder, nn.TransformerDecoder, _copy_stack),
        (LayerNorm, nn.LayerNorm, _copy_norm),
    )
    for our_type, their_type, copy in pairs:
        if isinstance(ours, our_type) and isinstance(theirs, their_type):
            with torch.no_grad():
                copy(ours, theirs)
            return ours
    supported = ", ".join(f"{a.__name__} ← nn.{b.__name__}" for a, b, _ in pairs)
    raise TypeError(
        f"cannot copy nn.{type(theirs).__name__} into {type(ours).__name__}; supported pairs: {supported}"
    )


def _put(target: Tensor, source: Tensor | None, name: str) -> None:
    if source is None:
        raise ValueError(f"{name}: PyTorch's module has no such parameter (built with bias=False?)")
    if target.shape != source.shape:
        raise ValueError(f"{name}: shape {tuple(source.shape)} does not fit ours {tuple(target.shape)}")
    target.copy_(source)


def _copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    if (ours.d_model, ours.n_heads) != (theirs.embed_dim, theirs.num_heads):
        raise ValueError(
            f"sizes differ: ours d_model={ours.d_model}, n_heads={ours.n_heads}; "
            f"theirs embed_dim={theirs.embed_dim}, num_heads={theirs.num_heads}"
        )
    if theirs.in_proj_weight is not None:
        weights = theirs.in_proj_weight.chunk(3)  # (3D, D) → three (D, D)
    else:
        weights = (theirs.q_proj_weight, theirs.k_proj_weight, theirs.v_proj_weight)
    biases = theirs.in_proj_bias.chunk(3) if theirs.in_proj_bias is not None else (None,) * 3
    for name, weight, bias in zip(("w_q", "w_k", "w_v"), weights, biases):
        linear = getattr(ours, name)
        _put(linear.weight, weight, f"{name}.weight")
        if linear.bias is not None:
            _put(linear.bias, bias, f"{name}.bias")
    _put(ours.w_o.weight, theirs.out_proj.weight, "w_o.weight")
    if ours.w_o.bias is not None:
        _put(ours.w_o.bias, theirs.out_proj.bias, "w_o.bias")


def _copy_norm(ours: LayerNorm, theirs: nn.LayerNorm) -> None:
    if theirs.eps != ours.eps:
        raise ValueError(f"layer norm eps differs: ours {ours.eps}, theirs {theirs.eps}")
    if theirs.weight is None:
        raise ValueError("nn.LayerNorm was built with elementwise_affine=False; ours always has γ and β")
    _put(ours.gamma, theirs.weight, "gamma")
    _put(ours.beta, theirs.bias if theirs.bias is not None else torch.zeros_like(ours.beta), "beta")


def _copy_feed_forward(ours: PositionwiseFeedForward, theirs: nn.Module) -> None:
    _put(ours.w_1.weight, theirs.linear1.weight, "feed_forward.w_1.weight")
    _put(ours.w_1.bias, theirs.linear1.bias, "feed_forward.w_1.bias")
    _put(ours.w_2.weight, theirs.linear2.weight, "feed_forward.w_2.weight")
    _put(ours.w_2.bias, theirs.linear2.bias, "feed_forward.w_2.bias")


def _check_layer_settings(ours: nn.Module, theirs: nn.Module) -> None:
    if ours.norm_first != theirs.norm_first:
        raise ValueError(f"norm_first differs: ours {ours.norm_first}, theirs {theirs.norm_first}")
    activation = getattr(theirs, "activation", None)
    if activation is not F.relu and not isinstance(activation, nn.ReLU):
        raise ValueError(f"PyTorch's layer uses activation {activation!r}; ours uses ReLU as in the paper")


def _copy_encoder_layer(ours: EncoderLayer, theirs: nn.TransformerEncoderLayer) -> None:
    _check_layer_settings(ours, theirs)
    _copy_attention(ours.self_attn, theirs.self_attn)
    _copy_feed_forward(ours.feed_forward, theirs)
    _copy_norm(ours.norm1, theirs.norm1)
    _copy_norm(ours.norm2, theirs.norm2)


def _copy_decoder_layer(ours: DecoderLayer, theirs: nn.TransformerDecoderLayer) -> None:
    _check_layer_settings(ours, theirs)
    _copy_attention(ours.self_attn, theirs.self_attn)
    _copy_attention(ours.cross_attn, theirs.multihead_attn)
    _copy_feed_forward(ours.feed_forward, theirs)
    _copy_norm(ours.norm1, theirs.norm1)
    _copy_norm(ours.norm2, theirs.norm2)
    _copy_norm(ours.norm3, theirs.norm3)


def _copy_stack(ours: Encoder | Decoder, theirs: nn.TransformerEncoder | nn.TransformerDecoder) -> None:
    if len(ours.layers) != len(theirs.layers):
        raise ValueError(f"number of layers differs: ours {len(ours.layers)}, theirs {len(theirs.layers)}")
    if (ours.norm is None) != (theirs.norm is None):
        raise ValueError(
            f"final layer norm: ours {'has one' if ours.norm is not None else 'has none'} "
            f"(norm_first={ours.norm is not None}), theirs {'has one' if theirs.norm is not None else 'has none'}; "
            "build PyTorch's stack with norm=nn.LayerNorm(d_model) exactly when norm_first=True"
        )
    copy_layer = _copy_encoder_layer if isinstance(ours, Encoder) else _copy_decoder_layer
    for our_layer, their_layer in zip(ours.layers, theirs.layers):
        copy_layer(our_layer, their_layer)
    if ours.norm is not None:
        _copy_norm(ours.norm, theirs.norm)
