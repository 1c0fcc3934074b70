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

Shape legend: B sources, S source length, K beams, V target vocabulary size,
L generated length (BOS not included). Masks: ``True`` = may attend.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, NamedTuple

import torch
from torch import Tensor

from . import _validate
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
    """Dropout off and no autograd while decoding; the model's mode is restored after."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
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


def _last_logits(
    model: Transformer, tokens: Tensor, memory: Tensor, src_mask: Tensor, cache: KVCache | None
) -> Tensor:
    """Logits for the position after ``tokens`` (N, t): (N, V).

    With a cache only the newest token goes through the decoder; without one,
    the whole prefix does, under a causal mask.
    """
    if cache is not None:
        logits = model.decode(tokens[:, -1:], memory, src_mask, cache=cache)  # (N, 1, V)
    else:
        tgt_mask = causal_mask(tokens.shape[1], tokens.device)  # (1, 1, t, t)
        logits = model.decode(tokens, memory, src_mask, tgt_mask)  # (N, t, V)
    return logits[:, -1].float()  # (N, V)


# --------------------------------------------------------------------------
# Greedy decoding and sampling
# --------------------------------------------------------------------------


def _generate(model, src, pick, *, max_len, bos_id, eos_id, pad_id, unk_id, src_mask, min_len, use_cache) -> Tensor:
    src_mask, pad_id, never = _prepare(model, src, src_mask, max_len, min_len, bos_id, eos_id, pad_id, unk_id)
    with _inference(model):
        memory = model.encode(src, src_mask)  # (B, S, D)
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)  # (B,)
        cache = model.new_cache() if use_cache else None
        for step in range(max_len):
            logits = _last_logits(model, tokens, memory, src_mask, cache)  # (B, V)
            logits[:, never] = float("-inf")
            if step < min_len:
                logits[:, eos_id] = float("-inf")
            next_token = pick(logits).masked_fill(done, pad_id)  # (B,)
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)  # (B, t + 1)
            done |= next_token == eos_id
            if bool(done.all()):
                break
    return tokens[:, 1:]  # (B, L), BOS dropped


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
    """All beams of all sources in one batch of B·K rows; returns each source's hypotheses, best first."""
    src_mask, _, never = _prepare(model, src, src_mask, max_len, min_len, bos_id, eos_id, pad_id, unk_id)
    _validate.positive_int("beam_size", beam_size)
    if isinstance(length_penalty, bool) or not isinstance(length_penalty, (int, float)) or length_penalty < 0:
        raise ValueError(f"length_penalty must be a number ≥ 0 (the α of GNMT), got {length_penalty!r}")
    K, V = beam_size, model.config.tgt_vocab_size
    device = src.device
    finished: list[list[Hypothesis]] = [[] for _ in range(src.shape[0])]

    def finish(source: int, tokens: list[int], log_prob: float, done: bool) -> None:
        score = log_prob / gnmt_length_penalty(len(tokens), length_penalty)
        finished[source].append(Hypothesis(tuple(tokens), log_prob, score, done))

    with _inference(model):
        memory = model.encode(src, src_mask)  # (B, S, D)
        memory = memory.repeat_interleave(K, dim=0)  # (B·K, S, D): source 0's K rows, then source 1's, …
        src_mask = src_mask.repeat_interleave(K, dim=0)  # (B·K, 1, 1, S)
        active = list(range(src.shape[0]))  # sources still searching, n = len(active)
        tokens = torch.full((len(active) * K, 1), bos_id, dtype=torch.long, device=device)  # (n·K, 1)
        log_probs = torch.zeros(len(active), K, device=device)  # (n, K)
        log_probs[:, 1:] = float("-inf")  # at first the K beams are equal: expand only one
        cache = model.new_cache() if use_cache else None
        rank = torch.arange(2 * K, device=device)  # (2K,)
        for step in range(max_len):
            n = len(active)
            step_lp = _last_logits(model, tokens, memory, src_mask, cache).log_softmax(dim=-1)  # (n·K, V)
            step_lp[:, never] = float("-inf")
            if step < min_len:
                step_lp[:, eos_id] = float("-inf")
            expanded = (log_probs.view(n * K, 1) + step_lp).view(n, K * V)  # (n, K·V)
            top_lp, top_index = expanded.topk(min(2 * K, K * V), dim=-1)  # (n, 2K), best first
            origin, token = top_index // V, top_index % V  # (n, 2K): which beam, which next token
            is_eos = token == eos_id
            # A hypothesis ends when EOS is among the K best expansions; the K best
            # other expansions stay alive (there are ≥ K: each beam has one EOS).
            ends = is_eos & (rank[: top_lp.shape[1]] < K) & top_lp.isfinite()  # (n, 2K)
            keep = (is_eos.long() * 2 * K + rank[: top_lp.shape[1]]).argsort(dim=-1)[:, :K]  # (n, K)
            prefixes = tokens[:, 1:].view(n, K, -1)  # (n, K, t), BOS dropped
            for i, j in ends.nonzero().tolist():
                finish(active[i], prefixes[i, origin[i, j]].tolist() + [eos_id], float(top_lp[i, j]), True)
            if trace is not None:
                status = ["dropped"] * top_lp.shape[1]
                for j in keep[0].tolist():
                    status[j] = "kept"
                for j in ends[0].nonzero().flatten().tolist():
                    status[j] = "finished"
                trace.append(BeamStep(step, [
                    BeamCandidate(tuple(prefixes[0, origin[0, j]].tolist() + [int(token[0, j])]),
                                  float(top_lp[0, j]), status[j])
                    for j in range(top_lp.shape[1]) if bool(top_lp[0, j].isfinite())
                ]))
            log_probs = top_lp.gather(1, keep)  # (n, K)
            rows = torch.arange(n, device=device)[:, None] * K + origin.gather(1, keep)  # (n, K) old rows
            new_tokens = token.gather(1, keep).view(n * K, 1)  # (n·K, 1)
            tokens = torch.cat([tokens[rows.flatten()], new_tokens], dim=1)  # (n·K, t + 1)
            # Log-probabilities only fall as a beam grows and lp(|Y|) ≤ lp(max_len), so no
            # live beam can score above log_prob / lp(max_len): once the best finished
            # hypothesis reaches that bound, the source is done.
            bound = log_probs.max(dim=1).values / gnmt_length_penalty(max_len, length_penalty)  # (n,)
            searching = [not finished[b] or max(h.score for h in finished[b]) < float(bound[i])
                         for i, b in enumerate(active)]
            if step == max_len - 1:  # out of steps: the live beams compete as unfinished hypotheses
                searching = [False] * n
                for i, b in enumerate(active):
                    for k in range(K):
                        if bool(log_probs[i, k].isfinite()):
                            finish(b, tokens[i * K + k, 1:].tolist(), float(log_probs[i, k]), False)
            if not any(searching):
                break
            if not all(searching):  # drop the rows of the sources that are done
                still = torch.tensor(searching, device=device)  # (n,)
                active = [b for b, s in zip(active, searching) if s]
                rows, log_probs = rows[still], log_probs[still]  # (n', K)
                tokens = tokens.view(n, K, -1)[still].flatten(0, 1)  # (n'·K, t+1)
                memory = memory.view(n, K, *memory.shape[1:])[still].flatten(0, 1)  # (n'·K, S, D)
                src_mask = src_mask.view(n, K, *src_mask.shape[1:])[still].flatten(0, 1)  # (n'·K, 1, 1, S)
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
