"""Decoding: from a trained model to output sentences (Chapter 8).

The decoder predicts one token at a time. Greedy decoding keeps the most
likely token at each step; beam search keeps the K most likely prefixes
(the *beams*) and returns the best finished hypothesis under the GNMT length
penalty (Wu et al., 2016), which the paper uses with K = 4 and α = 0.6;
sampling draws each token at random, for contrast.

None of them ever generates ``bos_id``, ``pad_id`` or (when given) ``unk_id``:
they are not words, yet a model trained with label smoothing gives them a
little probability, which sampling would otherwise draw (as fairseq, they get
a log-probability of −∞ before a token is chosen).

All three feed only the newest token to the decoder and keep the keys and
values of the earlier ones in a :class:`~transformer_edu.KVCache`;
``use_cache=False`` recomputes the whole prefix at every step instead, with
the same result, only slower.

Each step is kept lean (profile it with :mod:`transformer_edu.profiling`):
the arguments are checked once, before the first step, and the steps call the
unchecked :meth:`Transformer._decode`; they run in ``torch.inference_mode``
with each attention layer's stacked projection matrix built once
(:func:`~transformer_edu.attention.stacked_projections`); the cache is written
in place; and greedy decoding and sampling read a value back from the device
only every few steps (beam search, once per step), so a GPU is not made to
wait for Python at every token.

Shape legend: B sources, S source length, K beams, V target vocabulary size,
L generated length (BOS not included). Masks: ``True`` = may attend.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator, NamedTuple

import torch
from torch import Tensor

from . import _validate
from .attention import stacked_projections
from .decoder import KVCache
from .masks import causal_mask, padding_mask
from .model import Transformer

__all__ = [
    "greedy_decode",
    "beam_search",
    "beam_search_nbest",
    "beam_search_trace",
    "sample",
    "gnmt_length_penalty",
    "Hypothesis",
    "BeamCandidate",
    "BeamStep",
]


class Hypothesis(NamedTuple):
    """One output of beam search.

    Attributes:
        tokens: generated ids, BOS not included; ends with EOS when ``finished``.
        log_prob: sum of the log-probabilities of the tokens.
        score: ``log_prob / gnmt_length_penalty(len(tokens), alpha)``, used to rank.
        finished: ``False`` for a beam cut off by ``max_len`` before EOS.
    """

    tokens: tuple[int, ...]
    log_prob: float
    score: float
    finished: bool


class BeamCandidate(NamedTuple):
    """An expansion considered at one step: the prefix, its log-probability, what became of it.

    ``status`` is ``"kept"`` (a beam for the next step), ``"finished"`` (ended
    with EOS, moved to the finished list) or ``"dropped"``.
    """

    tokens: tuple[int, ...]
    log_prob: float
    status: str


class BeamStep(NamedTuple):
    """The 2K best expansions at decoding step ``step`` (0 = the first token), best first."""

    step: int
    candidates: list[BeamCandidate]


def gnmt_length_penalty(length: int | Tensor, alpha: float) -> float | Tensor:
    """lp(Y) = ((5 + |Y|) / 6)^α from GNMT; α = 0 gives 1 (no normalisation).

    Beam search ranks hypotheses by log P(Y) / lp(Y): as log P(Y) only falls with
    every token, without it the search prefers short outputs.
    """
    return ((5 + length) / 6) ** alpha


# --------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------


@contextmanager
def _inference(model: Transformer) -> Iterator[None]:
    """Dropout off, no autograd and stacked projections while decoding; the model's mode is restored after.

    ``torch.inference_mode`` is ``torch.no_grad`` that also skips autograd's
    bookkeeping of versions and views, a few microseconds per operation.
    Tensors made inside can never enter autograd, so results leave as copies.
    """
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), stacked_projections(model):
            yield
    finally:
        model.train(was_training)


def _token_id(name: str, value: object, vocab_size: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int token id, got {type(value).__name__} ({value!r})")
    if not 0 <= value < vocab_size:
        raise ValueError(f"{name} = {value} is outside the target vocabulary [0, {vocab_size - 1}]")
    return value


def _prepare(
    model: Transformer, src: Tensor, src_mask: Tensor | None, max_len: int, min_len: int,
    bos_id: int, eos_id: int, pad_id: int | None, unk_id: int | None = None,
) -> tuple[Tensor, int, list[int]]:
    """Check the common arguments; return the source mask, the padding id and the ids never generated."""
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
    config = model.config
    _validate.tensor("src", src)
    if src.dim() != 2:
        raise ValueError(
            f"src must be 2-D (B, S) token ids, got shape {tuple(src.shape)}; "
            "for one sentence use src.unsqueeze(0)"
        )
    if src.shape[0] == 0:
        raise ValueError(f"src holds no sentences (shape {tuple(src.shape)}); pass at least one")
    _validate.token_ids("src", src, config.src_vocab_size, config.max_len)
    device = next(model.parameters()).device
    if src.device != device:
        raise ValueError(
            f"src is on {src.device} but the model is on {device}; move it with src.to({str(device)!r})"
        )
    _validate.positive_int("max_len", max_len)
    if max_len > config.max_len:
        raise ValueError(f"max_len = {max_len} exceeds the model's max_len = {config.max_len} positions")
    if isinstance(min_len, bool) or not isinstance(min_len, int) or not 0 <= min_len <= max_len:
        raise ValueError(f"min_len must be an int in [0, max_len = {max_len}], got {min_len!r}")
    _token_id("bos_id", bos_id, config.tgt_vocab_size)
    _token_id("eos_id", eos_id, config.tgt_vocab_size)
    pad_id = config.pad_id if pad_id is None else _token_id("pad_id", pad_id, config.tgt_vocab_size)
    never = {bos_id, pad_id}
    if unk_id is not None:
        never.add(_token_id("unk_id", unk_id, config.tgt_vocab_size))
    if eos_id in never:
        raise ValueError(f"eos_id = {eos_id} must differ from bos_id, pad_id and unk_id ({sorted(never)})")
    if src_mask is None:
        src_mask = padding_mask(src, config.pad_id)  # (B, 1, 1, S)
    else:
        _validate.mask("src_mask", src_mask, (src.shape[0], config.n_heads, 1, src.shape[1]))
        if src_mask.dim() != 4:  # a (B, S) mask would line up B with the queries
            raise ValueError(f"src_mask must be 4-D (B or 1, 1 or H, 1, S), got shape {tuple(src_mask.shape)}; "
                             "build it with padding_mask(src, pad_id)")
        src_mask = src_mask.expand(src.shape[0], -1, -1, -1)  # (B, 1 or H, 1, S)
    return src_mask, pad_id, sorted(never)


def _forbidden_ids(never: list[int], eos_id: int, vocab_size: int, device: torch.device) -> tuple[Tensor, Tensor]:
    """Masks of the ids that get a log-probability of −∞: always, and before ``min_len`` (EOS too).

    Shape:
        - both: (V,) bool
    """
    forbidden = torch.zeros(vocab_size, dtype=torch.bool, device=device)  # (V,)
    forbidden[never] = True
    early = forbidden.clone()
    early[eos_id] = True
    return forbidden, early


def _next_logits(
    model: Transformer, tokens: Tensor, memory: Tensor, src_mask: Tensor, cache: KVCache | None,
    causal: Tensor | None,
) -> Tensor:
    """Logits for the position after ``tokens`` (N, t): (N, V).

    With a cache only the newest token goes through the decoder, which needs
    no mask; without one, the whole prefix does, under the causal mask
    ``causal`` (1, 1, ≥ t, ≥ t) cut to size. The arguments were checked once,
    before the first step, so the unchecked :meth:`Transformer._decode` runs.
    """
    if cache is not None:
        logits = model._decode(tokens[:, -1:], memory, src_mask, None, cache)  # (N, 1, V)
    else:
        t = tokens.shape[1]
        logits = model._decode(tokens, memory, src_mask, causal[:, :, :t, :t], None)  # (N, t, V)
    return logits[:, -1].float()  # (N, V)


# --------------------------------------------------------------------------
# Greedy decoding and sampling
# --------------------------------------------------------------------------

# Reading a value out of a tensor from Python (``bool(done.all())``) makes the
# host wait until the device has computed it; on a GPU that stalls the queue of
# kernels. So the loop asks whether every sentence has ended only every few
# steps; the extra steps write padding, which is cut off at the end.
_CHECK_EVERY = 8


def _generate(model, src, pick, *, max_len, bos_id, eos_id, pad_id, unk_id, src_mask, min_len, use_cache) -> Tensor:
    src_mask, pad_id, never = _prepare(model, src, src_mask, max_len, min_len, bos_id, eos_id, pad_id, unk_id)
    batch, device = src.shape[0], src.device
    forbidden, forbidden_early = _forbidden_ids(never, eos_id, model.config.tgt_vocab_size, device)
    with _inference(model):
        memory = model.encode(src, src_mask)  # (B, S, D)
        tokens = torch.full((batch, max_len + 1), pad_id, dtype=torch.long, device=device)  # (B, 1 + max_len)
        tokens[:, 0] = bos_id
        done = torch.zeros(batch, dtype=torch.bool, device=device)  # (B,)
        cache = model.new_cache(max_len) if use_cache else None
        causal = None if use_cache else causal_mask(max_len, device)  # (1, 1, max_len, max_len), cut each step
        for step in range(max_len):
            logits = _next_logits(model, tokens[:, : step + 1], memory, src_mask, cache, causal)  # (B, V)
            logits = logits.masked_fill(forbidden_early if step < min_len else forbidden, float("-inf"))
            next_token = pick(logits).masked_fill(done, pad_id)  # (B,)
            tokens[:, step + 1] = next_token
            done |= next_token == eos_id
            if (step + 1) % _CHECK_EVERY == 0 and bool(done.all()):
                break
        generated = tokens[:, 1 : step + 2]  # (B, L'), BOS dropped
        if bool(done.all()):  # end where the last sentence ended
            last_eos = (generated == eos_id).int().argmax(dim=1)  # (B,) each row's first EOS
            generated = generated[:, : int(last_eos.max()) + 1]  # (B, L)
    return generated.clone()  # an ordinary tensor, made outside inference mode


def greedy_decode(
    model: Transformer, src: Tensor, *, max_len: int, bos_id: int, eos_id: int, pad_id: int | None = None,
    unk_id: int | None = None, src_mask: Tensor | None = None, min_len: int = 0, use_cache: bool = True,
) -> Tensor:
    """Translate a batch by always taking the most likely next token.

    Stops when every sentence has produced EOS, or after ``max_len`` tokens.
    The model runs in eval mode (dropout off); its mode is restored after.

    Args:
        model: a trained :class:`~transformer_edu.Transformer`.
        src: source token ids, padded with the model's ``pad_id``.
        max_len: the most tokens to generate (EOS included).
        bos_id, eos_id: target ids of the start and end tokens.
        pad_id: written after a sentence's EOS; default ``model.config.pad_id``.
        unk_id: the unknown-word id, never generated (nor are ``bos_id`` and ``pad_id``).
        src_mask: ``True`` = may attend; default ``padding_mask(src, pad_id)``.
        min_len: EOS is forbidden for the first ``min_len`` tokens (e.g. to
            time a fixed number of steps).
        use_cache: reuse keys and values between steps; ``False`` recomputes
            the prefix each step (same tokens, slower).

    Returns:
        Generated ids without BOS, each row ending with EOS then ``pad_id``,
        unless cut off by ``max_len``.

    Shape:
        - src: (B, S); src_mask: broadcastable to (B, H, 1, S)
        - output: (B, L), L ≤ max_len

    See Chapter 8.
    """
    return _generate(model, src, lambda logits: logits.argmax(dim=-1), max_len=max_len, bos_id=bos_id,
                     eos_id=eos_id, pad_id=pad_id, unk_id=unk_id, src_mask=src_mask, min_len=min_len,
                     use_cache=use_cache)


def sample(
    model: Transformer, src: Tensor, *, max_len: int, bos_id: int, eos_id: int, temperature: float = 1.0,
    top_k: int | None = None, generator: torch.Generator | None = None, pad_id: int | None = None,
    unk_id: int | None = None, src_mask: Tensor | None = None, min_len: int = 0, use_cache: bool = True,
) -> Tensor:
    """Translate a batch by drawing each token from softmax(logits / temperature).

    Args:
        temperature: > 0; below 1 sharpens the distribution, above 1 flattens it.
        top_k: draw only among the ``top_k`` most likely tokens; ``None`` = all.
        generator: a ``torch.Generator`` for reproducible draws.
        The others: as in :func:`greedy_decode`.

    Returns:
        (B, L) generated ids, as :func:`greedy_decode`.

    See Chapter 8.
    """
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature > 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if top_k is not None:
        _validate.positive_int("top_k", top_k)

    def pick(logits: Tensor) -> Tensor:
        logits = logits / temperature  # (B, V)
        if top_k is not None and top_k < logits.shape[-1]:
            kth = logits.topk(top_k, dim=-1).values[:, -1:]  # (B, 1)
            logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = logits.softmax(dim=-1)  # (B, V)
        return torch.multinomial(probs, 1, generator=generator).squeeze(1)  # (B,)

    return _generate(model, src, pick, max_len=max_len, bos_id=bos_id, eos_id=eos_id, pad_id=pad_id,
                     unk_id=unk_id, src_mask=src_mask, min_len=min_len, use_cache=use_cache)


# --------------------------------------------------------------------------
# Beam search
# --------------------------------------------------------------------------


def _beam_search(
    model: Transformer, src: Tensor, *, beam_size: int, max_len: int, bos_id: int, eos_id: int,
    length_penalty: float, pad_id: int | None, src_mask: Tensor | None, min_len: int, use_cache: bool,
    unk_id: int | None = None, trace: list[BeamStep] | None = None,
) -> list[list[Hypothesis]]:
    """All beams of all sources in one batch of B·K rows; returns each source's hypotheses, best first.

    The device picks each step's 2K best expansions and the K that live on;
    the host keeps the prefixes and the finished hypotheses as Python lists
    and applies the stopping rule. One transfer per step brings it the small
    table it needs, (n, 5K) numbers: beam search reads the device once per
    step (greedy decoding, every few steps).
    """
    src_mask, _, never = _prepare(model, src, src_mask, max_len, min_len, bos_id, eos_id, pad_id, unk_id)
    _validate.positive_int("beam_size", beam_size)
    if isinstance(length_penalty, bool) or not isinstance(length_penalty, (int, float)) or length_penalty < 0:
        raise ValueError(f"length_penalty must be a number ≥ 0 (the α of GNMT), got {length_penalty!r}")
    K, V = beam_size, model.config.tgt_vocab_size
    W = min(2 * K, K * V)  # expansions considered per source and step
    device = src.device
    forbidden, forbidden_early = _forbidden_ids(never, eos_id, V, device)
    lp_max = gnmt_length_penalty(max_len, length_penalty)  # the largest penalty a live beam can reach
    finished: list[list[Hypothesis]] = [[] for _ in range(src.shape[0])]

    def finish(source: int, tokens: list[int], log_prob: float, done: bool) -> None:
        score = log_prob / gnmt_length_penalty(len(tokens), length_penalty)
        finished[source].append(Hypothesis(tuple(tokens), log_prob, score, done))

    with _inference(model):
        memory = model.encode(src, src_mask)  # (B, S, D)
        memory = memory.repeat_interleave(K, dim=0)  # (B·K, S, D): source 0's K rows, then source 1's, …
        src_mask = src_mask.repeat_interleave(K, dim=0)  # (B·K, 1, 1, S)
        active = list(range(src.shape[0]))  # sources still searching, n = len(active)
        prefixes: list[list[int]] = [[] for _ in range(len(active) * K)]  # row i·K + k: beam k of source i
        tokens = torch.full((len(active) * K, max_len + 1), bos_id, dtype=torch.long, device=device)
        # (n·K, 1 + max_len): BOS, then each beam's tokens; the device's copy of prefixes
        log_probs = torch.zeros(len(active), K, device=device)  # (n, K)
        log_probs[:, 1:] = float("-inf")  # at first the K beams are equal: expand only one
        cache = model.new_cache(max_len) if use_cache else None
        causal = None if use_cache else causal_mask(max_len, device)  # (1, 1, max_len, max_len)
        rank = torch.arange(W, device=device)  # (W,)
        for step in range(max_len):
            n = len(active)
            step_lp = _next_logits(model, tokens[:, : step + 1], memory, src_mask, cache, causal)  # (n·K, V)
            step_lp = step_lp.log_softmax(dim=-1).masked_fill(forbidden_early if step < min_len else forbidden,
                                                              float("-inf"))
            expanded = (log_probs.view(n * K, 1) + step_lp).view(n, K * V)  # (n, K·V)
            top_lp, top_index = expanded.topk(W, dim=-1)  # (n, W), best first
            origin, token = top_index // V, top_index % V  # (n, W): which beam, which next token
            # The K best expansions that do not end with EOS live on (there are ≥ K:
            # each beam has one EOS); an EOS among the K best ends a hypothesis.
            keep = ((token == eos_id).long() * 2 * W + rank).argsort(dim=-1)[:, :K]  # (n, K)
            log_probs = top_lp.gather(1, keep)  # (n, K)
            rows = torch.arange(n, device=device)[:, None] * K + origin.gather(1, keep)  # (n, K) old rows
            new_tokens = token.gather(1, keep)  # (n, K)
            table = torch.cat([top_lp, token, origin, keep], dim=1).tolist()  # (n, 3W + K): the one read per step

            next_prefixes, searching = [], []
            for i, b in enumerate(active):
                lps, toks = table[i][:W], [int(x) for x in table[i][W: 2 * W]]
                parents = [prefixes[i * K + int(x)] for x in table[i][2 * W: 3 * W]]
                kept = [int(x) for x in table[i][3 * W:]]
                ends = [j for j in range(min(K, W)) if toks[j] == eos_id and math.isfinite(lps[j])]
                for j in ends:
                    finish(b, parents[j] + [eos_id], lps[j], True)
                if trace is not None and i == 0:
                    status = ["dropped"] * W
                    for j in kept:
                        status[j] = "kept"
                    for j in ends:
                        status[j] = "finished"
                    trace.append(BeamStep(step, [BeamCandidate(tuple(parents[j] + [toks[j]]), lps[j], status[j])
                                                 for j in range(W) if math.isfinite(lps[j])]))
                next_prefixes += [parents[j] + [toks[j]] for j in kept]
                # Log-probabilities only fall as a beam grows and lp(|Y|) ≤ lp(max_len), so no
                # live beam can score above log_prob / lp(max_len): once the best finished
                # hypothesis reaches that bound, the source is done.
                bound = max(lps[j] for j in kept) / lp_max
                searching.append(not finished[b] or max(h.score for h in finished[b]) < bound)
                if step == max_len - 1:  # out of steps: the live beams compete as unfinished hypotheses
                    searching[-1] = False
                    for j in kept:
                        if math.isfinite(lps[j]):
                            finish(b, parents[j] + [toks[j]], lps[j], False)
            prefixes = next_prefixes
            if not any(searching):
                break
            if not all(searching):  # drop the rows of the sources that are done
                still = torch.tensor([i for i, s in enumerate(searching) if s], device=device)  # (n',)
                active = [b for b, s in zip(active, searching) if s]
                prefixes = [p for i, s in enumerate(searching) if s for p in prefixes[i * K: (i + 1) * K]]
                rows, log_probs, new_tokens = rows[still], log_probs[still], new_tokens[still]  # (n', K)
                memory = memory.view(n, K, *memory.shape[1:])[still].flatten(0, 1)  # (n'·K, S, D)
                src_mask = src_mask.view(n, K, *src_mask.shape[1:])[still].flatten(0, 1)  # (n'·K, 1, 1, S)
            tokens = tokens.index_select(0, rows.flatten())  # (n'·K, 1 + max_len): each beam's prefix
            tokens[:, step + 1] = new_tokens.flatten()
            if cache is not None:
                cache.reorder(rows.flatten())  # each kept beam takes the keys and values of its origin
    return [sorted(h, key=lambda h: -h.score)[:K] for h in finished]


def beam_search(
    model: Transformer, src: Tensor, *, max_len: int, bos_id: int, eos_id: int, beam_size: int = 4,
    length_penalty: float = 0.6, pad_id: int | None = None, unk_id: int | None = None,
    src_mask: Tensor | None = None, min_len: int = 0, use_cache: bool = True,
) -> tuple[Tensor, Tensor]:
    """Translate a batch with beam search; return the best hypothesis of each source.

    At each step every beam is extended by every token; of the K · V
    expansions of a source, those ending in EOS among the K best move to the
    source's finished list and are no longer extended, and the K best others
    become the next beams. Hypotheses are ranked by
    ``log P(Y) / gnmt_length_penalty(|Y|, length_penalty)``, |Y| counting EOS.
    A source is done when no live beam can still beat its best finished
    hypothesis (log P only falls as a beam grows, so a beam can at most reach
    ``log P / gnmt_length_penalty(max_len, α)``); after ``max_len`` steps the
    live beams join the finished ones as unfinished hypotheses. (Stopping
    as soon as K hypotheses have finished, a common shortcut, can return a
    poor hypothesis from a very confident model: the EOS of weak beams
    enters the K best while the strong beam is still going.)

    The K beams of all B sources run through the decoder as one batch of
    B · K rows; a source that is done leaves the batch.

    Args:
        model: a trained :class:`~transformer_edu.Transformer` (run in eval mode).
        src: source token ids, padded with the model's ``pad_id``.
        max_len: the most tokens to generate (EOS included).
        bos_id, eos_id: target ids of the start and end tokens.
        beam_size: number of beams K; with ``length_penalty=0``, K = 1 gives
            the tokens of greedy decoding.
        length_penalty: the α of the GNMT length penalty; 0 ranks by the raw sum.
        pad_id: fills the output after EOS; default ``model.config.pad_id``.
        unk_id: the unknown-word id, never generated (nor are ``bos_id`` and ``pad_id``).
        src_mask: ``True`` = may attend; default ``padding_mask(src, pad_id)``.
        min_len: EOS is forbidden for the first ``min_len`` tokens.
        use_cache: reuse keys and values between steps (same result, faster).

    Returns:
        ``(tokens, scores)``: the best hypothesis per source without BOS, padded
        with ``pad_id``, and its score (sum of log-probabilities / length penalty).

    Shape:
        - src: (B, S)
        - tokens: (B, L), L ≤ max_len; scores: (B,)

    See Chapter 8.
    """
    nbest = _beam_search(model, src, beam_size=beam_size, max_len=max_len, bos_id=bos_id, eos_id=eos_id,
                         length_penalty=length_penalty, pad_id=pad_id, unk_id=unk_id, src_mask=src_mask,
                         min_len=min_len, use_cache=use_cache)
    pad_id = model.config.pad_id if pad_id is None else pad_id
    best = [hypotheses[0] for hypotheses in nbest]
    tokens = torch.full((len(best), max(len(h.tokens) for h in best)), pad_id, dtype=torch.long)  # (B, L)
    for row, h in enumerate(best):
        tokens[row, : len(h.tokens)] = torch.tensor(h.tokens)
    scores = torch.tensor([h.score for h in best])  # (B,)
    return tokens.to(src.device), scores.to(src.device)


def beam_search_nbest(model: Transformer, src: Tensor, *, max_len: int, bos_id: int, eos_id: int,
                      beam_size: int = 4, length_penalty: float = 0.6, **options) -> list[list[Hypothesis]]:
    """Like :func:`beam_search`, but return every source's finished hypotheses (up to K), best first.

    ``options``: ``pad_id``, ``unk_id``, ``src_mask``, ``min_len``, ``use_cache`` as in :func:`beam_search`.

    Returns:
        One list of :class:`Hypothesis` per source.
    """
    return _beam_search(model, src, beam_size=beam_size, max_len=max_len, bos_id=bos_id, eos_id=eos_id,
                        length_penalty=length_penalty, **{"pad_id": None, "src_mask": None, "min_len": 0,
                                                          "use_cache": True, **options})


def beam_search_trace(model: Transformer, src: Tensor, *, max_len: int, bos_id: int, eos_id: int,
                      beam_size: int = 4, length_penalty: float = 0.6, **options
                      ) -> tuple[list[Hypothesis], list[BeamStep]]:
    """Beam search on one source, recording the candidates of every step (for pictures).

    Args:
        src: one source sentence, shape (1, S).
        The others: as in :func:`beam_search_nbest`.

    Returns:
        ``(hypotheses, steps)``: the final hypotheses, best first, and one
        :class:`BeamStep` per decoding step listing the 2K best expansions
        (prefix, summed log-probability, ``"kept"`` / ``"finished"`` / ``"dropped"``).
    """
    _validate.tensor("src", src)
    if src.dim() != 2 or src.shape[0] != 1:
        raise ValueError(
            f"beam_search_trace follows one source: src must have shape (1, S), got {tuple(src.shape)}"
        )
    steps: list[BeamStep] = []
    hypotheses = _beam_search(model, src, beam_size=beam_size, max_len=max_len, bos_id=bos_id, eos_id=eos_id,
                              length_penalty=length_penalty, trace=steps,
                              **{"pad_id": None, "src_mask": None, "min_len": 0, "use_cache": True, **options})
    return hypotheses[0], steps
