"""Copying weights from PyTorch's built-in modules and Hugging Face's models, to prove ours compute the same.

PyTorch stores the three input projections of ``nn.MultiheadAttention`` as one
(3D, D) matrix ``in_proj_weight``; ours keeps W_Q, W_K, W_V apart, so the
matrix is cut in three. Layer norms map ``weight`` → γ and ``bias`` → β.
Chapters 1, 2, 4, 5 and 6 use this to compare with PyTorch; Chapter 10 loads
Hugging Face's Llama and GPT-2 weights into the decoder-only
:class:`~transformer_edu.LanguageModel` (from their ``state_dict``: the
package does not need ``transformers``).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import MultiHeadAttention
from .decoder import Decoder, DecoderLayer
from .encoder import Encoder, EncoderLayer
from .language_model import LanguageModel
from .layers import LayerNorm, PositionwiseFeedForward

__all__ = ["copy_weights_from_torch", "load_gpt2_weights", "load_llama_weights", "rotate_half_to_pairs"]


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


# --------------------------------------------------------------------------
# Hugging Face's decoder-only models (Chapter 10), read from their state_dict
# --------------------------------------------------------------------------


def _hf_weights(state_dict: Mapping[str, Tensor], prefix: str, names: list[str]) -> dict[str, Tensor]:
    """The tensors ``prefix + name`` of a Hugging Face state dict, with or without the model's own prefix."""
    found = {}
    for name in names:
        for key in (prefix + name, name):
            if key in state_dict:
                found[name] = state_dict[key]
                break
        else:
            raise ValueError(f"the state dict has no {prefix + name!r} (nor {name!r}); is it the right model?")
    return found


def _need(config: object, **settings: object) -> None:
    wrong = {k: getattr(config, k) for k, v in settings.items() if getattr(config, k) != v}
    if wrong:
        expected = ", ".join(f"{k}={settings[k]!r}" for k in wrong)
        got = ", ".join(f"{k}={v!r}" for k, v in wrong.items())
        raise ValueError(f"the model's config has {got}; the checkpoint needs {expected}")


def rotate_half_to_pairs(weight: Tensor, heads: int) -> Tensor:
    """Reorder the rows of a query or key projection from Hugging Face's RoPE layout to ours.

    Hugging Face's ``LlamaModel`` rotates feature i of a head together with
    feature i + d_k / 2 ("rotate half"); ours rotates neighbours 2i and
    2i + 1. Row 2i of each head takes their row i, row 2i + 1 their row
    i + d_k / 2: the same attention scores, since queries and keys are
    reordered alike.

    Shape:
        - weight: (heads · d_k, D) or its bias (heads · d_k,)
        - output: the same shape
    """
    d_k = weight.shape[0] // heads
    half = torch.arange(d_k // 2)
    order = torch.stack((half, half + d_k // 2), dim=1).flatten()  # (d_k,): 0, d_k/2, 1, d_k/2 + 1, …
    grouped = weight.reshape(heads, d_k, *weight.shape[1:])  # (heads, d_k, …)
    return grouped[:, order].reshape(weight.shape)


def load_llama_weights(model: LanguageModel, state_dict: Mapping[str, Tensor]) -> LanguageModel:
    """Load the weights of a Hugging Face ``LlamaForCausalLM`` (or ``LlamaModel``) into a :class:`LanguageModel`.

    The model must be built with the checkpoint's sizes and LLaMA's choices
    (:meth:`~transformer_edu.language_model.LanguageModelConfig.llama`): pre-LN with RMSNorm, RoPE, SwiGLU, no
    biases, no embedding scale; ``n_kv_heads`` and ``tie_output`` as the
    checkpoint's. The query and key rows are reordered from the "rotate half"
    layout to ours (:func:`rotate_half_to_pairs`). ``transformers`` is not
    needed: pass ``hf_model.state_dict()`` or a loaded checkpoint file.

    Returns:
        ``model``, for chaining.

    Raises:
        ValueError: a setting or a size differs, or a tensor is missing.

    See Chapter 10.
    """
    c = model.config
    _need(c, norm="rms", norm_first=True, positional="rope", feed_forward="swiglu", bias=False,
          scale_embeddings=False)
    heads, kv_heads = c.n_heads, c.n_kv_heads or c.n_heads
    names = ["embed_tokens.weight", "norm.weight"]
    for i in range(c.n_layers):
        names += [f"layers.{i}.{n}.weight" for n in (
            "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
            "mlp.up_proj", "mlp.down_proj", "input_layernorm", "post_attention_layernorm")]
    theirs = _hf_weights(state_dict, "model.", names)
    with torch.no_grad():
        _put(model.embed.weight, theirs["embed_tokens.weight"], "embed_tokens.weight")
        _put(model.norm.gamma, theirs["norm.weight"], "norm.weight")
        for i, layer in enumerate(model.layers):
            w = {n: theirs[f"layers.{i}.{n}.weight"] for n in (
                "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "input_layernorm", "post_attention_layernorm")}
            attention, ffn = layer.self_attn, layer.feed_forward
            _put(attention.w_q.weight, rotate_half_to_pairs(w["self_attn.q_proj"], heads), f"layers.{i} q_proj")
            _put(attention.w_k.weight, rotate_half_to_pairs(w["self_attn.k_proj"], kv_heads), f"layers.{i} k_proj")
            _put(attention.w_v.weight, w["self_attn.v_proj"], f"layers.{i} v_proj")
            _put(attention.w_o.weight, w["self_attn.o_proj"], f"layers.{i} o_proj")
            _put(ffn.w_1.weight, w["mlp.gate_proj"], f"layers.{i} gate_proj")
            _put(ffn.w_3.weight, w["mlp.up_proj"], f"layers.{i} up_proj")
            _put(ffn.w_2.weight, w["mlp.down_proj"], f"layers.{i} down_proj")
            _put(layer.norm1.gamma, w["input_layernorm"], f"layers.{i} input_layernorm")
            _put(layer.norm2.gamma, w["post_attention_layernorm"], f"layers.{i} post_attention_layernorm")
        if not c.tie_output:
            if "lm_head.weight" not in state_dict:
                raise ValueError("the state dict has no 'lm_head.weight': build the model with tie_output=True")
            _put(model.output.weight, state_dict["lm_head.weight"], "lm_head.weight")
    return model


def load_gpt2_weights(model: LanguageModel, state_dict: Mapping[str, Tensor]) -> LanguageModel:
    """Load the weights of a Hugging Face ``GPT2LMHeadModel`` (or ``GPT2Model``) into a :class:`LanguageModel`.

    The model must be built with the checkpoint's sizes and GPT-2's choices
    (:meth:`~transformer_edu.language_model.LanguageModelConfig.gpt2`): pre-LN with LayerNorm, learned
    positions (``max_len`` = its ``n_positions``), GELU, biases, tied output,
    no embedding scale. GPT-2 stores its projections as ``Conv1D`` layers,
    whose weights are the transpose of ``nn.Linear``'s, and its three input
    projections as one matrix ``c_attn``, cut in three here.

    Returns:
        ``model``, for chaining.

    See Chapter 10.
    """
    c = model.config
    _need(c, norm="layer", norm_first=True, positional="learned", feed_forward="gelu", bias=True,
          tie_output=True, scale_embeddings=False)
    suffixes = ("ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                "mlp.c_proj.weight", "mlp.c_proj.bias")
    names = ["wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"]
    names += [f"h.{i}.{s}" for i in range(c.n_layers) for s in suffixes]
    theirs = _hf_weights(state_dict, "transformer.", names)
    with torch.no_grad():
        _put(model.embed.weight, theirs["wte.weight"], "wte.weight")
        _put(model.positional.weight, theirs["wpe.weight"], "wpe.weight (rows: max_len)")
        _put(model.norm.gamma, theirs["ln_f.weight"], "ln_f.weight")
        _put(model.norm.beta, theirs["ln_f.bias"], "ln_f.bias")
        for i, layer in enumerate(model.layers):
            w = {s: theirs[f"h.{i}.{s}"] for s in suffixes}
            attention, ffn = layer.self_attn, layer.feed_forward
            for ours, weight, bias in zip((attention.w_q, attention.w_k, attention.w_v),
                                          w["attn.c_attn.weight"].t().chunk(3),  # (3D, D) → three (D, D)
                                          w["attn.c_attn.bias"].chunk(3)):
                _put(ours.weight, weight, f"h.{i}.attn.c_attn.weight")
                _put(ours.bias, bias, f"h.{i}.attn.c_attn.bias")
            for ours, name in ((attention.w_o, "attn.c_proj"), (ffn.w_1, "mlp.c_fc"), (ffn.w_2, "mlp.c_proj")):
                _put(ours.weight, w[f"{name}.weight"].t(), f"h.{i}.{name}.weight")  # Conv1D: (in, out)
                _put(ours.bias, w[f"{name}.bias"], f"h.{i}.{name}.bias")
            for norm, name in ((layer.norm1, "ln_1"), (layer.norm2, "ln_2")):
                _put(norm.gamma, w[f"{name}.weight"], f"h.{i}.{name}.weight")
                _put(norm.beta, w[f"{name}.bias"], f"h.{i}.{name}.bias")
    return model
