"""The decoder-only Transformer: the book's blocks as a language model (Chapter 10).

Keep the decoder of Chapter 6 and drop what reads the encoder (its
cross-attention): what is left is a stack of masked self-attention and
feed-forward layers that predicts the next token of one sequence, the shape of
GPT and Llama. The prompt and the answer are that one sequence.

:class:`LanguageModelConfig` holds the 2017 choices as defaults (post-LN,
layer norm, sinusoidal positions added to the embeddings, a ReLU feed-forward
block, one key/value head per query head, the output layer tied to the
embedding) and today's as options, each of them one argument of a module
written elsewhere once:

=================  ==========================  ===========================================
Option             2017 (the paper)            Today (GPT-2, LLaMA)
=================  ==========================  ===========================================
``norm_first``     ``False``: post-LN           ``True``: pre-LN, a final norm at the top
``norm``           ``"layer"``: LayerNorm      ``"rms"``: :class:`~transformer_edu.RMSNorm`
``positional``     ``"sinusoidal"``            ``"rope"``: :class:`~transformer_edu.RotaryPositionalEncoding`
                                               (``"learned"``: GPT-2's table)
``feed_forward``   ``"relu"``                  ``"swiglu"``: :class:`~transformer_edu.SwiGLUFeedForward`
                                               (``"gelu"``: GPT-2's)
``n_kv_heads``     ``None``: H                 fewer: grouped-query attention; 1: multi-query
``tie_output``     ``True``                    ``False`` in LLaMA
=================  ==========================  ===========================================

:func:`generate` continues prompts, greedily or by sampling (temperature,
top-k, top-p), with the key/value cache of Chapter 8.

Shape legend: B batch, L sequence length (prompt and continuation), P prompt
length, D = d_model, H heads, H_kv key/value heads, V vocabulary size.
Masks: ``True`` = may attend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

import torch
from torch import Tensor, nn

from . import _validate
from .attention import MultiHeadAttention
from .decoding import _CHECK_EVERY, _end_at_eos, _inference, sampling_distribution
from .kv_cache import KVCache, SelfAttentionCache
from .layers import LayerNorm, PositionwiseFeedForward, RMSNorm, SwiGLUFeedForward
from .masks import causal_mask, target_mask
from .positional import RotaryPositionalEncoding, SinusoidalPositionalEncoding

__all__ = [
    "LanguageModel",
    "LanguageModelConfig",
    "LanguageModelLayer",
    "complete",
    "generate",
    "swiglu_width",
]

NORMS = ("layer", "rms")
POSITIONALS = ("sinusoidal", "rope", "learned")
FEED_FORWARDS = ("relu", "gelu", "swiglu")


def swiglu_width(d_ff: int, multiple_of: int = 1) -> int:
    """The hidden width of a SwiGLU block with as many weights as a two-matrix block of width ``d_ff``.

    Three matrices of D × w against two of D × d_ff: w = ⅔ · d_ff, rounded
    down, then up to a multiple of ``multiple_of`` (LLaMA's rule, with
    d_ff = 4D and multiple_of = 256: 11 008 for D = 4 096).

    See Chapter 10.
    """
    _validate.positive_int("d_ff", d_ff)
    _validate.positive_int("multiple_of", multiple_of)
    width = 2 * d_ff // 3
    return multiple_of * -(-width // multiple_of)


@dataclass
class LanguageModelConfig:
    """Hyperparameters of a :class:`LanguageModel`; the defaults are the 2017 choices.

    Args:
        vocab_size: number of token ids V (one vocabulary: prompt and answer
            are one sequence).
        d_model, n_heads, d_ff, n_layers, dropout: as in
            :class:`~transformer_edu.TransformerConfig` (``n_layers`` counts
            the one stack).
        max_len: longest sequence (prompt and continuation) the positions cover.
        pad_id: id of the padding token, used to build masks left as ``None``.
        n_kv_heads: key/value heads H_kv; ``None`` = ``n_heads`` (the paper).
            Fewer is grouped-query attention, 1 multi-query attention.
        norm: ``"layer"`` (:class:`~transformer_edu.LayerNorm`, the paper) or
            ``"rms"`` (:class:`~transformer_edu.RMSNorm`).
        norm_first: pre-LN (with a final norm after the stack) instead of
            the paper's post-LN.
        norm_eps: the ε of every norm.
        positional: ``"sinusoidal"`` (added to the embeddings, the paper),
            ``"rope"`` (queries and keys rotated in every layer) or
            ``"learned"`` (a trained table added to the embeddings, GPT-2).
        rope_base: the base of RoPE's frequencies.
        feed_forward: ``"relu"`` (the paper), ``"gelu"`` (GPT-2) or
            ``"swiglu"`` (LLaMA; give it ``d_ff = swiglu_width(4 * d_model)``
            for the paper's number of weights).
        bias: biases in the attention and feed-forward projections (the
            paper's have them; LLaMA's do not). The output layer has none
            (as in tensor2tensor, GPT-2 and LLaMA).
        tie_output: the output layer reuses the embedding matrix (the paper,
            after Press and Wolf, 2017; GPT-2) instead of its own (LLaMA).
        scale_embeddings: multiply the embeddings by √d_model, as the paper
            does before adding the sinusoidal encoding; GPT-2 and LLaMA do not.
    """

    vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    d_ff: int = 2048
    n_layers: int = 6
    dropout: float = 0.1
    max_len: int = 1024
    pad_id: int = 0
    n_kv_heads: int | None = None
    norm: str = "layer"
    norm_first: bool = False
    norm_eps: float = 1e-5
    positional: str = "sinusoidal"
    rope_base: float = 10000.0
    feed_forward: str = "relu"
    bias: bool = True
    tie_output: bool = True
    scale_embeddings: bool = True

    def __post_init__(self) -> None:
        where = "LanguageModelConfig"
        for name in ("vocab_size", "d_model", "n_heads", "d_ff", "n_layers", "max_len"):
            _validate.positive_int(name, getattr(self, name), where=where)
        for name in ("norm_first", "bias", "tie_output", "scale_embeddings"):
            _validate.boolean(name, getattr(self, name), where=where)
        _validate.probability("dropout", self.dropout)
        _validate.heads_divide(self.d_model, self.n_heads)
        if self.n_kv_heads is not None:
            _validate.positive_int("n_kv_heads", self.n_kv_heads, where=where)
            _validate.kv_heads_divide(self.n_heads, self.n_kv_heads)
        _validate.choice("norm", self.norm, NORMS, where=where)
        _validate.choice("positional", self.positional, POSITIONALS, where=where)
        _validate.choice("feed_forward", self.feed_forward, FEED_FORWARDS, where=where)
        _validate.positive_number("norm_eps", self.norm_eps, where=where)
        _validate.positive_number("rope_base", self.rope_base, where=where)
        if self.positional == "sinusoidal":
            _validate.even("d_model", self.d_model, "for the sinusoidal encoding")
        if self.positional == "rope":
            _validate.even("d_k", self.d_model // self.n_heads, "for rotary embeddings (d_model / n_heads)")
        _validate.token_id("pad_id", self.pad_id, self.vocab_size, "vocabulary")

    @classmethod
    def llama(cls, vocab_size: int, **overrides) -> LanguageModelConfig:
        """LLaMA's choices (Touvron et al., 2023): pre-LN with RMSNorm, RoPE, SwiGLU of ⅔ · 4D, no biases,
        untied output, no embedding scale, no dropout. ``n_kv_heads`` as given (Llama 2 and 3: grouped)."""
        d_model = overrides.get("d_model", cls.d_model)
        settings = dict(norm="rms", norm_first=True, positional="rope", feed_forward="swiglu",
                        d_ff=swiglu_width(4 * d_model), bias=False, tie_output=False, scale_embeddings=False,
                        dropout=0.0, norm_eps=1e-6)
        return cls(vocab_size, **{**settings, **overrides})

    @classmethod
    def gpt2(cls, vocab_size: int, **overrides) -> LanguageModelConfig:
        """GPT-2's choices (Radford et al., 2019): pre-LN with LayerNorm, learned positions, GELU,
        biases, tied output, no embedding scale."""
        settings = dict(norm_first=True, positional="learned", feed_forward="gelu", scale_embeddings=False)
        return cls(vocab_size, **{**settings, **overrides})

    def to_dict(self) -> dict:
        """Plain dictionary, e.g. to store in a checkpoint."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> LanguageModelConfig:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown LanguageModelConfig fields {unknown}; expected some of {sorted(known)}")
        return cls(**values)


def _norm(config: LanguageModelConfig) -> nn.Module:
    kind = LayerNorm if config.norm == "layer" else RMSNorm
    return kind(config.d_model, config.norm_eps)


class LanguageModelLayer(nn.Module):
    """One layer of a decoder-only model: masked self-attention, then the feed-forward block.

    It is Chapter 6's decoder layer without the cross-attention, which is
    the encoder layer of Chapter 5 run under a causal mask, with each
    sublayer in a residual connection and a norm: post-LN
    ``x = Norm(x + Dropout(Sublayer(x)))`` or pre-LN
    ``x = x + Dropout(Sublayer(Norm(x)))``.

    Args:
        config: the model's hyperparameters (norm, feed-forward block, heads).
        rotary: the model's :class:`~transformer_edu.RotaryPositionalEncoding`
            when ``config.positional == "rope"``, shared by every layer.

    Shape:
        - x: (B, L, D)
        - mask: ``True`` = may attend, broadcastable to (B, H, L, t + L) for
          t cached positions, usually (B, 1, L, L) from :func:`target_mask`
        - output: (B, L, D)

    See Chapter 10.
    """

    def __init__(self, config: LanguageModelConfig, rotary: RotaryPositionalEncoding | None = None) -> None:
        super().__init__()
        c = config
        self.self_attn = MultiHeadAttention(c.d_model, c.n_heads, c.dropout, c.bias, n_kv_heads=c.n_kv_heads,
                                            rotary=rotary)
        if c.feed_forward == "swiglu":
            self.feed_forward = SwiGLUFeedForward(c.d_model, c.d_ff, c.dropout, c.bias)
        else:
            self.feed_forward = PositionwiseFeedForward(c.d_model, c.d_ff, c.dropout, c.feed_forward, c.bias)
        self.norm1, self.norm2 = _norm(c), _norm(c)
        self.dropout1, self.dropout2 = nn.Dropout(c.dropout), nn.Dropout(c.dropout)
        self.norm_first = c.norm_first

    @_validate.door(_validate.lm_layer_inputs)
    def forward(self, x: Tensor, mask: Tensor | None = None, cache: SelfAttentionCache | None = None) -> Tensor:
        """Run the layer; with a ``cache`` (a KVCache layer's self-attention part) ``x`` holds the new positions."""

        def self_attention(y: Tensor) -> Tensor:
            return self.self_attn(y, y, y, mask, need_weights=False, cache=cache)[0]

        if self.norm_first:
            x = x + self.dropout1(self_attention(self.norm1(x)))
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout1(self_attention(x)))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x


class LanguageModel(nn.Module):
    """A decoder-only Transformer: embeddings, a stack of :class:`LanguageModelLayer`, an output layer.

    Tokens are embedded (times √d_model if ``scale_embeddings``), positions
    are added (sinusoidal or learned) or left to the attention layers
    (RoPE), dropout follows; the layers run under a causal mask; pre-LN
    models normalise the last layer's output; a linear layer without bias
    maps each position to the logits of the next token.

    Initialisation is the book's (Chapter 6): every weight matrix
    Xavier-uniform, the embeddings normal with standard deviation
    ``d_model ** -0.5``.

    Args:
        config: the hyperparameters.

    Shape:
        - tokens: (B, L) token ids, padded on the right with ``pad_id``
        - mask: ``True`` = may attend, broadcastable to (B, H, L, L); default
          ``target_mask(tokens, pad_id)``, causal and padding, (B, 1, L, L)
        - output: (B, L, V) logits; position i scores the token at i + 1

    See Chapter 10.
    """

    def __init__(self, config: LanguageModelConfig) -> None:
        super().__init__()
        self.config = c = _validate.instance("config", config, LanguageModelConfig, "a LanguageModelConfig")
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.embed_scale = math.sqrt(c.d_model) if c.scale_embeddings else 1.0
        rotary = None
        if c.positional == "sinusoidal":
            self.positional = SinusoidalPositionalEncoding(c.d_model, c.max_len, c.dropout)
        elif c.positional == "learned":
            self.positional = nn.Embedding(c.max_len, c.d_model)
        else:
            rotary = RotaryPositionalEncoding(c.d_model // c.n_heads, c.max_len, c.rope_base)
            self.positional = rotary  # shared by every layer's attention; no state of its own to save
        self.dropout = nn.Dropout(c.dropout)
        self.layers = nn.ModuleList(LanguageModelLayer(c, rotary) for _ in range(c.n_layers))
        self.norm = _norm(c) if c.norm_first else None
        self.output = nn.Linear(c.d_model, c.vocab_size, bias=False)
        if c.tie_output:
            self.output.weight = self.embed.weight
        for p in self.parameters():  # shared matrices are visited once
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        nn.init.normal_(self.embed.weight, mean=0.0, std=c.d_model ** -0.5)

    @_validate.door(_validate.lm_forward_inputs)
    def forward(
        self, tokens: Tensor, mask: Tensor | None = None, cache: KVCache | None = None, *, last_only: bool = False
    ) -> Tensor:
        """Logits of the next token at every position.

        With a :class:`~transformer_edu.KVCache` (:meth:`new_cache`),
        ``tokens`` holds only the new positions, which continue the
        ``cache.length`` positions seen so far; the default mask then lets
        each new position see all of them and the new ones up to itself.
        ``last_only=True`` applies the output layer to the last position
        only, (B, 1, V): all a generation step needs.
        """
        offset = 0 if cache is None else cache.length
        if mask is None:
            mask = self._default_mask(tokens, cache)
        x = self.embed_tokens(tokens, offset)  # (B, L, D)
        caches = [None] * len(self.layers) if cache is None else [layer.self_attn for layer in cache.layers]
        for layer, layer_cache in zip(self.layers, caches):
            x = layer(x, mask, layer_cache)  # (B, L, D)
        if self.norm is not None:
            x = self.norm(x)
        return self.output(x[:, -1:] if last_only else x)  # (B, L or 1, V)

    def embed_tokens(self, tokens: Tensor, offset: int = 0) -> Tensor:
        """Token ids → vectors: embedding (· √d_model), positions ``offset, …`` added (not with RoPE), dropout.

        Shape:
            - tokens: (B, L) token ids
            - output: (B, L, D)
        """
        x = self.embed(tokens) * self.embed_scale  # (B, L, D)
        if self.config.positional == "sinusoidal":
            return self.positional(x, offset)  # its own dropout
        if self.config.positional == "learned":
            where = torch.arange(offset, offset + tokens.shape[1], device=tokens.device)  # (L,)
            x = x + self.positional(where)  # (B, L, D)
        return self.dropout(x)

    def _default_mask(self, tokens: Tensor, cache: KVCache | None) -> Tensor | None:
        """Padding and causal without a cache; with one, causal over the cached and the new positions."""
        if cache is None:
            return target_mask(tokens, self.config.pad_id)  # (B, 1, L, L)
        if tokens.shape[1] == 1:
            return None  # one new position may see all cached positions and itself
        return causal_mask(tokens.shape[1], tokens.device, offset=cache.length)  # (1, 1, L, t + L)

    def new_cache(self, capacity: int | None = None) -> KVCache:
        """An empty key/value cache (Chapter 8) for :meth:`forward`; each layer uses its self-attention part.

        Args:
            capacity: the most positions it will hold, at most ``config.max_len``;
                ``None`` grows the buffers as needed.
        """
        if capacity is not None:
            _validate.positive_int("capacity", capacity)
            _validate.not_above("capacity", capacity, self.config.max_len, "the model's max_len",
                                " positions: the positions cover no more")
        return KVCache(len(self.layers), capacity)


@_validate.door(_validate.generate_inputs)
def generate(
    model: LanguageModel,
    prompt: Tensor,
    *,
    max_new_tokens: int,
    eos_id: int | None = None,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    never: Sequence[int] = (),
    use_cache: bool = True,
) -> Tensor:
    """Continue each prompt, one token at a time: greedily, or by sampling.

    The prompts go through the model in one pass, which fills the key/value
    cache; then each step feeds only the newest token (``use_cache=False``
    feeds the whole sequence every step instead: the same tokens, slower).
    ``pad_id`` and the ids ``never`` are never generated. The model runs in
    eval mode, its mode restored after.

    Args:
        model: a :class:`LanguageModel`.
        prompt: the prompts, all of one length, without padding (give
            prompts of different lengths to :func:`complete`).
        max_new_tokens: the most tokens to add (EOS included).
        eos_id: stop a row at this token; later positions are ``pad_id``,
            and the output ends where the last row's EOS is. ``None``: always
            ``max_new_tokens`` tokens.
        do_sample: ``False`` takes the most likely token; ``True`` draws
            from :func:`~transformer_edu.decoding.sampling_distribution`
            with ``temperature``, ``top_k`` and ``top_p``.
        generator: a ``torch.Generator`` for reproducible draws.
        never: ids never to generate, besides ``pad_id``.
        use_cache: keep the keys and values of earlier positions.

    Returns:
        The new tokens only, (B, N), N ≤ ``max_new_tokens``.

    Shape:
        - prompt: (B, P), P + ``max_new_tokens`` ≤ ``config.max_len``
        - output: (B, N)

    See Chapter 10.
    """
    pad_id = model.config.pad_id
    batch, length = prompt.shape
    total = length + max_new_tokens
    forbidden = torch.zeros(model.config.vocab_size, dtype=torch.bool, device=prompt.device)  # (V,)
    forbidden[[pad_id, *never]] = True
    with _inference(model):
        cache = model.new_cache(total) if use_cache else None
        causal = None if use_cache else causal_mask(total, prompt.device)  # (1, 1, total, total)
        tokens = torch.full((batch, total), pad_id, dtype=torch.long, device=prompt.device)  # (B, P + N)
        tokens[:, :length] = prompt
        for step in range(max_new_tokens):
            end = length + step
            if cache is None:  # the whole sequence, under the causal mask cut to size
                logits = model(tokens[:, :end], causal[:, :, :end, :end], last_only=True)
            else:  # the prompt at the first step, then only the newest token
                logits = model(tokens[:, cache.length : end], cache=cache, last_only=True)
            logits = logits[:, -1].float().masked_fill(forbidden, float("-inf"))  # (B, V)
            if do_sample:
                probs = sampling_distribution(logits, temperature=temperature, top_k=top_k, top_p=top_p)
                tokens[:, end] = torch.multinomial(probs, 1, generator=generator).squeeze(1)
            else:
                tokens[:, end] = logits.argmax(dim=-1)
            ended = eos_id is not None and (step + 1) % _CHECK_EVERY == 0  # a read waits for the device: rarely
            if ended and bool((tokens[:, length : end + 1] == eos_id).any(dim=1).all()):
                break
        generated = tokens[:, length : end + 1]  # (B, N')
        if eos_id is not None:
            generated = _end_at_eos(generated, eos_id, pad_id)  # (B, N)
    return generated.clone()  # an ordinary tensor, made outside inference mode


def complete(
    model: LanguageModel, prompts: Sequence[Sequence[int]], *, max_new_tokens: int, batch_size: int = 256,
    **options,
) -> list[list[int]]:
    """Continue prompts of any lengths: :func:`generate` on batches of prompts of one length.

    Prompts of equal length need no padding, so each continuation is the one
    the prompt would get alone (greedy, or sampling with a ``generator``
    drawn in the batches' order).

    Args:
        model: a :class:`LanguageModel`.
        prompts: token ids, one list per prompt (no padding).
        max_new_tokens: as in :func:`generate`.
        batch_size: the most prompts per call.
        options: the other arguments of :func:`generate` (``eos_id``,
            ``do_sample``, ``temperature``, …).

    Returns:
        Each prompt's new tokens, in the prompts' order, cut before EOS
        (EOS itself is left out) and without padding.

    See Chapter 10.
    """
    _validate.positive_int("batch_size", batch_size, where="complete")
    if not prompts:
        raise ValueError("complete: prompts is empty; expected at least one prompt")
    eos_id, pad_id = options.get("eos_id"), model.config.pad_id
    device = next(model.parameters()).device
    by_length: dict[int, list[int]] = {}
    for i, prompt in enumerate(prompts):
        by_length.setdefault(len(prompt), []).append(i)
    out: list[list[int]] = [[] for _ in prompts]
    for length in sorted(by_length):
        rows = by_length[length]
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            prompt = torch.tensor([list(prompts[i]) for i in chunk], dtype=torch.long, device=device)  # (b, P)
            new = generate(model, prompt, max_new_tokens=max_new_tokens, **options).tolist()
            for i, ids in zip(chunk, new):
                ids = ids[: ids.index(eos_id)] if eos_id is not None and eos_id in ids else ids
                out[i] = [t for t in ids if t != pad_id]
    return out
