"""The whole Transformer: embeddings, encoder, decoder and output layer (Chapter 6)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from torch import Tensor, nn

from . import _validate
from .decoder import Decoder
from .encoder import Encoder
from .kv_cache import KVCache
from .masks import causal_mask, padding_mask, target_mask
from .positional import SinusoidalPositionalEncoding

__all__ = ["Transformer", "TransformerConfig", "count_parameters"]


@dataclass
class TransformerConfig:
    """Hyperparameters of a :class:`Transformer`; the defaults are the paper's base model.

    Args:
        src_vocab_size: number of source token ids.
        tgt_vocab_size: number of target token ids.
        d_model: model width D.
        n_heads: attention heads H; must divide ``d_model``.
        d_ff: hidden width of the feed-forward networks.
        n_layers: layers N in the encoder and in the decoder each.
        dropout: dropout probability P_drop.
        max_len: longest sequence the positional encoding covers.
        pad_id: id of the padding token, used to build masks left as ``None``.
        share_embeddings: one embedding matrix for source and target (needs
            equal vocabulary sizes, e.g. a shared BPE vocabulary).
        tie_output: the output projection reuses the target embedding matrix.
        norm_first: pre-LN layers instead of the paper's post-LN.
        src_positional: add the positional encoding to the source embeddings,
            as the paper does. ``False`` is an ablation (Chapter 7): the encoder
            then sees the source as a bag of tokens, its output rows permute
            with the source tokens and the decoder cannot tell their order.
            The target side keeps its positional encoding either way.
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    d_ff: int = 2048
    n_layers: int = 6
    dropout: float = 0.1
    max_len: int = 5000
    pad_id: int = 0
    share_embeddings: bool = False
    tie_output: bool = False
    norm_first: bool = False
    src_positional: bool = True

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "n_layers", "max_len"):
            _validate.positive_int(name, getattr(self, name))
        for name in ("share_embeddings", "tie_output", "norm_first", "src_positional"):
            _validate.boolean(name, getattr(self, name))
        _validate.probability("dropout", self.dropout)
        _validate.heads_divide(self.d_model, self.n_heads)
        _validate.even("d_model", self.d_model, "for the sinusoidal encoding")
        _validate.token_id("pad_id", self.pad_id, min(self.src_vocab_size, self.tgt_vocab_size),
                           "vocabularies' common ids")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_embeddings needs one vocabulary for source and target, got "
                f"src_vocab_size = {self.src_vocab_size} and tgt_vocab_size = {self.tgt_vocab_size}"
            )

    @classmethod
    def base(cls, vocab_size: int, **overrides) -> TransformerConfig:
        """The paper's base model (Table 3): D = 512, H = 8, d_ff = 2048, N = 6, P_drop = 0.1,
        a shared source/target vocabulary and tied embedding and output weights."""
        settings = dict(
            src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, share_embeddings=True, tie_output=True
        )
        return cls(**{**settings, **overrides})

    @classmethod
    def big(cls, vocab_size: int, **overrides) -> TransformerConfig:
        """The paper's big model (Table 3): D = 1024, H = 16, d_ff = 4096, N = 6, P_drop = 0.3."""
        settings = dict(d_model=1024, n_heads=16, d_ff=4096, dropout=0.3)
        return cls.base(vocab_size, **{**settings, **overrides})

    def to_dict(self) -> dict:
        """Plain dictionary, e.g. to store in a checkpoint."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> TransformerConfig:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown TransformerConfig fields {unknown}; expected some of {sorted(known)}")
        return cls(**values)


class Transformer(nn.Module):
    """The encoder–decoder Transformer of "Attention Is All You Need".

    Source and target tokens are embedded, scaled by √d_model, summed with the
    sinusoidal positional encoding and passed through dropout; the encoder
    turns the source into ``memory``; the decoder reads the shifted target and
    the memory; a linear layer maps each position to logits over the target
    vocabulary.

    Initialisation follows the paper's reference code (tensor2tensor): every
    weight matrix starts Xavier-uniform, except the embeddings, which start
    normal with standard deviation ``d_model ** -0.5``. Multiplied by
    √d_model, an embedded token then has entries of variance 1, the same
    scale as the positional encoding it is added to (Chapter 5). A tied
    output layer shares that matrix.

    Args:
        config: the hyperparameters.

    Shape:
        - src: (B, S) token ids
        - tgt: (B, T) token ids (the target shifted right, starting with BOS)
        - src_mask: ``True`` = may attend, broadcastable to (B, H, T or S, S),
          default ``padding_mask(src, pad_id)`` of shape (B, 1, 1, S)
        - tgt_mask: ``True`` = may attend, default ``target_mask(tgt, pad_id)``
          of shape (B, 1, T, T)
        - output: (B, T, V) logits, V = ``tgt_vocab_size``

    See Chapter 6.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = c = _validate.instance("config", config, TransformerConfig, "a TransformerConfig")
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = self.src_embed if c.share_embeddings else nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.positional = SinusoidalPositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.encoder = Encoder(c.n_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first)
        self.decoder = Decoder(c.n_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first)
        self.output = nn.Linear(c.d_model, c.tgt_vocab_size)
        if c.tie_output:
            self.output.weight = self.tgt_embed.weight
        self.embed_scale = math.sqrt(c.d_model)
        for p in self.parameters():  # shared matrices are visited once
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        embeddings = [self.src_embed] if c.share_embeddings else [self.src_embed, self.tgt_embed]
        for embedding in embeddings:
            nn.init.normal_(embedding.weight, mean=0.0, std=c.d_model ** -0.5)

    @_validate.door(_validate.model_forward_inputs)
    def forward(
        self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None
    ) -> Tensor:
        """Logits for every target position, given the whole (shifted) target: teacher forcing."""
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, S)
        memory = self.encode(src, src_mask)  # (B, S, D)
        return self.decode(tgt, memory, src_mask, tgt_mask)  # (B, T, V)

    @_validate.door(_validate.model_encode_inputs)
    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """Run the encoder. Returns ``memory`` of shape (B, S, D)."""
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, S)
        return self.encoder(self.embed_source(src), src_mask)

    @_validate.door(_validate.model_decode_inputs)
    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: KVCache | None = None,
        *,
        last_only: bool = False,
    ) -> Tensor:
        """Run the decoder and the output layer. Returns logits of shape (B, T, V).

        ``src_mask`` must describe the memory's padding, e.g. ``padding_mask(src)``;
        left as ``None``, every memory position is visible. ``tgt_mask`` left as
        ``None`` is built from ``tgt``: padding plus causal.

        With a :class:`~transformer_edu.KVCache` (step-by-step decoding,
        Chapter 8), ``tgt`` holds only the new positions, which continue the
        ``cache.length`` positions decoded so far; the default mask then lets
        each new position see all cached positions and the new ones up to
        itself. ``last_only=True`` applies the output layer to the last
        position only, (B, 1, V): all a decoding step needs.

        Called from outside the package, it checks its arguments (reading the
        token ids' smallest and largest value); the decoding loops of
        :mod:`~transformer_edu.decoding` check theirs once, before the first
        step, and then call it unchecked.
        """
        offset = 0 if cache is None else cache.length
        if tgt_mask is None:
            tgt_mask = self._default_tgt_mask(tgt, cache)
        x = self.embed_target(tgt, offset)  # (B, T, D)
        h = self.decoder(x, memory, src_mask, tgt_mask, cache)  # (B, T, D)
        return self.output(h[:, -1:] if last_only else h)  # (B, T or 1, V)

    @_validate.door(_validate.model_source_ids)
    def embed_source(self, src: Tensor) -> Tensor:
        """Source ids → vectors: embedding · √d_model + positional encoding, then dropout.

        With ``config.src_positional = False`` (Chapter 7's ablation) no
        positions are added: the encoder sees a bag of tokens.

        Shape:
            - src: (B, S) token ids
            - output: (B, S, D)
        """
        x = self.src_embed(src) * self.embed_scale  # (B, S, D)
        return self.positional(x) if self.config.src_positional else self.positional.dropout(x)

    @_validate.door(_validate.model_target_ids)
    def embed_target(self, tgt: Tensor, offset: int = 0) -> Tensor:
        """Target ids → vectors, as :meth:`embed_source`; the positions start at ``offset``.

        A decoding step with a cache embeds its new tokens at positions
        ``cache.length, cache.length + 1, …``.

        Shape:
            - tgt: (B, T) token ids
            - output: (B, T, D)
        """
        return self.positional(self.tgt_embed(tgt) * self.embed_scale, offset=offset)  # (B, T, D)

    def _default_tgt_mask(self, tgt: Tensor, cache: KVCache | None) -> Tensor | None:
        """Padding and causal without a cache; with one, causal over the cached and the new positions."""
        if cache is None:
            return target_mask(tgt, self.config.pad_id)  # (B, 1, T, T)
        if tgt.shape[1] == 1:
            return None  # one new position may see all cached positions and itself
        return causal_mask(tgt.shape[1], tgt.device, offset=cache.length)  # (1, 1, T, t + T)

    def new_cache(self, capacity: int | None = None) -> KVCache:
        """An empty key/value cache for :meth:`decode` (Chapter 8).

        Args:
            capacity: the most target positions it will hold, at most
                ``config.max_len`` (the positional encoding covers no more);
                its buffers are then allocated once. ``None`` grows them as
                needed.
        """
        if capacity is not None:
            _validate.positive_int("capacity", capacity)
            _validate.not_above("capacity", capacity, self.config.max_len, "the model's max_len",
                                " positions: the positional encoding covers no more")
        return KVCache(len(self.decoder.layers), capacity)


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of parameters the model holds, each shared matrix counted once.

    ``trainable_only=True`` counts only those the optimizer changes
    (``requires_grad``): it leaves out the key projections' biases, which
    stay at zero (see :class:`~transformer_edu.MultiHeadAttention`).
    """
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
