"""The decoder as the decoding loops run it: one step at a time, with its weights gathered once (Chapter 8).

:meth:`~transformer_edu.model.Transformer.decode` with a :class:`~transformer_edu.KVCache` is the
readable way to decode step by step, and Chapter 8 builds it in the open. A
decoding loop calls it hundreds of times with one new token, and on a small
model most of each call is not arithmetic: every ``nn.Module`` call, every
attribute lookup of a weight and every operator call costs a few
microseconds (a step of a two-layer decoder makes about 85 operator calls,
Chapter 8 counts them). :class:`IncrementalDecoder` runs the
same operations on the same numbers with less around them, as production
decoders do (and as PyTorch's own ``nn.TransformerEncoderLayer`` takes a
fused "fast path" in inference):

* the weights of every layer are gathered once, into plain tuples; each step
  calls :mod:`torch.nn.functional` directly, never a module;
* each layer's self-attention keys and values share one preallocated buffer
  of shape (N, 2, H, capacity, d_k), so a step writes both with one copy;
* the cross-attention keys and values of the memory are projected once (with
  the cache) and the source mask is made additive once;
* the output layer runs on the last position only, and the ids that are
  never generated get −∞ through its bias, not through a separate operation.

Without a cache (``use_cache=False``) every step runs the whole prefix through
the decoder, under the causal mask, and recomputes the cross-attention keys
and values: the recomputation that the cache saves, with the same lean code,
so that timing one against the other measures the cache and nothing else.

The decoding loops of :mod:`~transformer_edu.decoding` use it whenever
:func:`supports` allows, and otherwise :meth:`~transformer_edu.model.Transformer.decode`; the tests
check that both give the same tokens and the same logits.

Shape legend: N rows (sentences, or sentences × beams), S source length,
t positions decoded so far, T positions fed at once, V target vocabulary.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import _validate
from .attention import _KERNEL_ZEROES_BLOCKED_ROWS, MultiHeadAttention, _fused_attention, _stack
from .decoder import Decoder, DecoderLayer
from .layers import LayerNorm, PositionwiseFeedForward
from .masks import causal_mask
from .model import Transformer
from .positional import SinusoidalPositionalEncoding

__all__ = ["IncrementalDecoder", "supports"]


def supports(model: nn.Module) -> bool:
    """Whether :class:`IncrementalDecoder` can stand in for ``model``'s decoder and output layer.

    It runs the arithmetic of :class:`~transformer_edu.Transformer` itself, so
    it declines a subclass that overrides how targets are decoded, and a model
    with forward hooks (on any module, or global ones) or with attention being
    recorded (:func:`~transformer_edu.record_attention`): those expect their
    modules to be called, and they are, by :meth:`~transformer_edu.model.Transformer.decode`.
    """
    if not isinstance(model, Transformer):
        return False
    cls = type(model)
    if cls._decode is not Transformer._decode or cls._embed_target is not Transformer._embed_target:
        return False
    if not _has_the_reference_modules(model):
        return False
    global_hooks = (nn.modules.module._global_forward_hooks, nn.modules.module._global_forward_pre_hooks)
    if any(global_hooks):
        return False
    for module in model.modules():
        if module._forward_hooks or module._forward_pre_hooks:
            return False
        if isinstance(module, MultiHeadAttention) and module._recorder is not None:
            return False
    return True


def _has_the_reference_modules(model: Transformer) -> bool:
    """Whether the target side is built of the package's own modules (none replaced by another kind)."""
    expected = [(model.tgt_embed, nn.Embedding), (model.positional, SinusoidalPositionalEncoding),
                (model.decoder, Decoder), (model.generator, nn.Linear)]
    if model.decoder.norm is not None:
        expected.append((model.decoder.norm, LayerNorm))
    for layer in model.decoder.layers:
        expected += [(layer, DecoderLayer), (layer.self_attn, MultiHeadAttention),
                     (layer.cross_attn, MultiHeadAttention), (layer.feed_forward, PositionwiseFeedForward),
                     (layer.norm1, LayerNorm), (layer.norm2, LayerNorm), (layer.norm3, LayerNorm)]
    return all(type(module) is kind for module, kind in expected)


class _Layer(NamedTuple):
    """One decoder layer's weights, gathered once (w: weight, b: bias)."""

    w_qkv: Tensor  # (3D, D): self-attention W_Q | W_K | W_V
    b_qkv: Tensor | None
    w_o: Tensor  # (D, D)
    b_o: Tensor | None
    norm1: tuple[Tensor, Tensor, float]  # γ, β, ε of the layer norm after (post-LN) or before (pre-LN)
    cross_w_q: Tensor  # (D, D)
    cross_b_q: Tensor | None
    cross_w_kv: Tensor  # (2D, D): cross-attention W_K | W_V
    cross_b_kv: Tensor | None
    cross_w_o: Tensor
    cross_b_o: Tensor | None
    norm2: tuple[Tensor, Tensor, float]
    w_1: Tensor  # (d_ff, D)
    b_1: Tensor
    w_2: Tensor  # (D, d_ff)
    b_2: Tensor
    norm3: tuple[Tensor, Tensor, float]


def _norm(norm: LayerNorm) -> tuple[Tensor, Tensor, float]:
    return norm.gamma, norm.beta, norm.eps


class IncrementalDecoder:
    """A Transformer's decoder and output layer for a decoding loop, fed one step at a time.

    Each call takes the tokens decoded so far and returns the logits of the
    next one; with a cache only the newest token goes through the layers.
    It computes what ``model.decode(…)[:, -1]`` computes, in eval mode
    (no dropout), and reads nothing back from the device.

    Args:
        model: a :class:`~transformer_edu.Transformer`; see :func:`supports`.
            Its weights are read once: do not change them while decoding.
        memory: the encoder's output.
        src_mask: ``True`` = may attend, e.g. ``padding_mask(src)``.
        max_len: the most positions the loop will feed, BOS included.
        use_cache: keep the keys and values of the positions decoded so far
            (preallocated for ``max_len`` positions); ``False`` recomputes the
            whole prefix at every call.
        forbidden: two sets of ids whose logits :meth:`__call__` sets to −∞
            when asked (``mask=1``: the first set, ``mask=2``: the second),
            e.g. the ids never generated, and those plus EOS before
            ``min_len``; ``None`` for none.

    Shape:
        - memory: (N, S, D); src_mask: (N, 1, 1, S) bool
        - forbidden: two (V,) bool masks

    See Chapter 8.
    """

    def __init__(self, model: Transformer, memory: Tensor, src_mask: Tensor, max_len: int, use_cache: bool = True,
                 forbidden: tuple[Tensor, Tensor] | None = None) -> None:
        if not isinstance(model, Transformer):
            raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
        config = model.config
        _validate.positive_int("max_len", max_len)
        if max_len > config.max_len:
            raise ValueError(f"max_len = {max_len} exceeds the model's max_len = {config.max_len} positions")
        self.max_len = max_len
        self.n_heads, self.d_k = config.n_heads, config.d_model // config.n_heads
        self.d_model = config.d_model
        self.norm_first = config.norm_first
        self.capacity = max_len if use_cache else None
        self.length = 0  # positions written into the cache so far
        # Looking the scaled table up gives the same numbers as scaling what was looked up.
        self.embedding = model.tgt_embed.weight * model.embed_scale  # (V, D)
        self.positions = model.positional.pe.to(self.embedding.dtype)  # (max_len, D)
        self.layers = [self._gather(layer) for layer in model.decoder.layers]
        self.heads = model.decoder.layers[0].self_attn  # its head splits and merges (the same in every layer)
        final = model.decoder.norm
        self.final_norm = None if final is None else _norm(final)
        self.generator = model.generator.weight  # (V, D)
        bias = model.generator.bias
        if bias is None:
            bias = torch.zeros(config.tgt_vocab_size, dtype=self.generator.dtype, device=self.generator.device)
        self.biases = [bias]  # mask = 0: the output layer's own bias; 1 and 2: with −∞ at the forbidden ids
        if forbidden is not None:
            self.biases += [bias.masked_fill(ids, float("-inf")) for ids in forbidden]
        self.memory = memory
        self.src_mask = src_mask
        # An additive source mask (0 or −∞) spares the attention kernel the conversion at
        # every call; before PyTorch 2.5 the kernel returns NaN for a row that sees nothing,
        # which _fused_attention handles with the boolean mask.
        self.additive = _KERNEL_ZEROES_BLOCKED_ROWS
        self.cross_bias = self._additive(src_mask, memory.dtype) if self.additive else None
        self.cross_kv: list[tuple[Tensor, Tensor]] = []  # per layer, once: (N, H, S, d_k) each
        self.buffers: list[Tensor] = []  # per layer: (N, 2, H, capacity, d_k), keys then values
        self.causal = None if use_cache else causal_mask(max_len, memory.device)  # (1, 1, max_len, max_len)

    @staticmethod
    def _gather(layer) -> _Layer:
        self_attn, cross, ff = layer.self_attn, layer.cross_attn, layer.feed_forward
        w_qkv, b_qkv = _stack((self_attn.w_q, self_attn.w_k, self_attn.w_v))
        w_kv, b_kv = _stack((cross.w_k, cross.w_v))
        return _Layer(
            w_qkv, b_qkv, self_attn.w_o.weight, self_attn.w_o.bias, _norm(layer.norm1),
            cross.w_q.weight, cross.w_q.bias, w_kv, b_kv, cross.w_o.weight, cross.w_o.bias,
            _norm(layer.norm2), ff.w_1.weight, ff.w_1.bias, ff.w_2.weight, ff.w_2.bias,
            _norm(layer.norm3),
        )

    @staticmethod
    def _additive(mask: Tensor, dtype: torch.dtype) -> Tensor:
        """0 where ``mask`` allows, −∞ where it blocks, in ``dtype``."""
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, float("-inf"))

    def __call__(self, tokens: Tensor, mask: int = 0) -> Tensor:
        """Logits of the token after ``tokens``.

        Args:
            tokens: every token so far, BOS first. With a cache only the last
                column is read, and it must continue the positions already
                cached (one new position per call).
            mask: 0 = the plain logits; 1 = −∞ at the first ``forbidden``
                set; 2 = at the second.

        Shape:
            - tokens: (N, t)
            - output: (N, V)
        """
        if self.capacity is None:
            if tokens.shape[1] > self.max_len:
                raise ValueError(f"tokens hold {tokens.shape[1]} positions, more than max_len = {self.max_len}")
            x = self._prefix(tokens)[:, -1]  # (N, D): only the last position's logits are read
        else:
            if self.length == self.capacity:
                raise ValueError(f"the cache is full: it holds max_len = {self.capacity} positions")
            x = self._step(tokens[:, -1])  # (N, D)
        if self.final_norm is not None:
            x = torch.layer_norm(x, (self.d_model,), *self.final_norm)
        return F.linear(x, self.generator, self.biases[mask])  # (N, V)

    def _step(self, newest: Tensor) -> Tensor:
        """The decoder on one new position per row, with the cache: (N,) ids → (N, D).

        The layers of :meth:`_prefix` written out for one position, where
        every reshape is a view: activations have no length axis, a head
        split is (N, parts · D) → (N, parts, H, 1, d_k) and a merge the view
        back to (N, D).
        """
        start, shape, pre = self.length, (self.d_model,), self.norm_first
        N, H, d_k = newest.shape[0], self.n_heads, self.d_k
        x = torch.embedding(self.embedding, newest) + self.positions[start]  # (N, D)
        for index, w in enumerate(self.layers):
            # Masked self-attention: the new position attends to the cached ones and to itself
            h = torch.layer_norm(x, shape, *w.norm1) if pre else x
            qkv = F.linear(h, w.w_qkv, w.b_qkv).view(N, 3, H, 1, d_k)  # (N, 3, H, 1, d_k)
            if index == len(self.buffers):  # the first step: room for every position
                self.buffers.append(x.new_empty(N, 2, H, self.capacity, d_k))  # (N, 2, H, capacity, d_k)
            buffer = self.buffers[index]
            buffer[:, :, :, start : start + 1] = qkv[:, 1:]  # its key and value, one copy
            k, v = buffer[:, :, :, : start + 1].unbind(1)  # (N, H, t, d_k) each
            out = F.scaled_dot_product_attention(qkv[:, 0], k, v).view(N, -1)  # (N, D)
            x = self._residual(x, F.linear(out, w.w_o, w.b_o), w.norm1)
            # Cross-attention over the memory
            h = torch.layer_norm(x, shape, *w.norm2) if pre else x
            q = F.linear(h, w.cross_w_q, w.cross_b_q).view(N, H, 1, d_k)  # (N, H, 1, d_k)
            out = self._cross(index, w, q).view(N, -1)  # (N, D)
            x = self._residual(x, F.linear(out, w.cross_w_o, w.cross_b_o), w.norm2)
            # Feed-forward network
            h = torch.layer_norm(x, shape, *w.norm3) if pre else x
            x = self._residual(x, self._feed_forward(w, h), w.norm3)
        self.length = start + 1
        return x

    def _residual(self, x: Tensor, sublayer: Tensor, norm: tuple[Tensor, Tensor, float]) -> Tensor:
        """x + Sublayer(…), then LayerNorm in post-LN; pre-LN normalised the sublayer's input instead."""
        if self.norm_first:
            return x + sublayer
        return torch.layer_norm(x + sublayer, (self.d_model,), *norm)

    def _prefix(self, tokens: Tensor) -> Tensor:
        """The decoder on the whole prefix, without a cache: (N, T) ids → (N, T, D).

        The same layers as :meth:`_step`, on T positions under the causal mask.
        """
        shape, pre = (self.d_model,), self.norm_first
        T = tokens.shape[1]
        x = torch.embedding(self.embedding, tokens) + self.positions[:T]  # (N, T, D)
        causal = self.causal[:, :, :T, :T]  # (1, 1, T, T)
        for index, w in enumerate(self.layers):
            h = torch.layer_norm(x, shape, *w.norm1) if pre else x
            q, k, v = self.heads.split_stacked_heads(F.linear(h, w.w_qkv, w.b_qkv), 3)  # (N, H, T, d_k) each
            out = self.heads.merge_heads(F.scaled_dot_product_attention(q, k, v, attn_mask=causal))  # (N, T, D)
            x = self._residual(x, F.linear(out, w.w_o, w.b_o), w.norm1)
            h = torch.layer_norm(x, shape, *w.norm2) if pre else x
            q = self.heads.split_heads(F.linear(h, w.cross_w_q, w.cross_b_q))  # (N, H, T, d_k)
            out = self.heads.merge_heads(self._cross(index, w, q))  # (N, T, D)
            x = self._residual(x, F.linear(out, w.cross_w_o, w.cross_b_o), w.norm2)
            h = torch.layer_norm(x, shape, *w.norm3) if pre else x
            x = self._residual(x, self._feed_forward(w, h), w.norm3)
        return x

    def _cross(self, index: int, w: _Layer, q: Tensor) -> Tensor:
        """Attention of the queries q (N, H, T, d_k) over the memory: (N, H, T, d_k)."""
        if index < len(self.cross_kv):
            k, v = self.cross_kv[index]
        else:
            k, v = self.heads.split_stacked_heads(F.linear(self.memory, w.cross_w_kv, w.cross_b_kv), 2)
            k, v = k.contiguous(), v.contiguous()  # (N, H, S, d_k) each, read at every step: stored contiguous
            if self.capacity is not None:  # the memory does not change: project it once
                self.cross_kv.append((k, v))
        if self.additive:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=self.cross_bias)
        return _fused_attention(q, k, v, self.src_mask, 0.0)

    def _feed_forward(self, w: _Layer, x: Tensor) -> Tensor:
        return F.linear(torch.relu(F.linear(x, w.w_1, w.b_1)), w.w_2, w.b_2)

    def reorder(self, rows: Tensor) -> None:
        """Let row i continue the past of row ``rows[i]`` (beam search: each kept beam takes its origin's).

        Gathers the cached keys and values; the source side (memory, masks)
        is left alone, as the beams of one source share it.

        Shape:
            - rows: (N,) long, values in [0, N)
        """
        for buffer in self.buffers:
            filled = buffer[:, :, :, : self.length]  # (N, 2, H, t, d_k)
            filled.copy_(filled.index_select(0, rows))

    def keep(self, rows: Tensor) -> None:
        """Keep only the rows ``rows``, in that order (beam search: the sources still searching).

        Shape:
            - rows: (N',) long, values in [0, N)
        """
        self.memory = self.memory.index_select(0, rows)  # (N', S, D)
        self.src_mask = self.src_mask.index_select(0, rows)  # (N', 1, 1, S)
        if self.cross_bias is not None:
            self.cross_bias = self.cross_bias.index_select(0, rows)
        self.cross_kv = [(k.index_select(0, rows), v.index_select(0, rows)) for k, v in self.cross_kv]
        for index, buffer in enumerate(self.buffers):
            kept = buffer.new_empty(rows.shape[0], *buffer.shape[1:])  # (N', 2, H, capacity, d_k)
            kept[:, :, :, : self.length] = buffer[:, :, :, : self.length].index_select(0, rows)
            self.buffers[index] = kept
