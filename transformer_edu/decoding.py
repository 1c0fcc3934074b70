"""Decoding: from a trained model to output sentences (Chapter 8).

The decoder predicts one token at a time. Greedy decoding keeps the most
likely token at each step; beam search keeps the K most likely prefixes
(the *beams*) and returns the best finished hypothesis under the GNMT length
penalty (Wu et al., 2016), which the paper uses with K = 4 and α = 0.6;
sampling draws each token at random, for contrast (with a temperature, top-k
and, from Chapter 10, top-p).

None of them ever generates ``bos_id``, ``pad_id`` or (when given) ``unk_id``:
they are not words, yet a model trained with label smoothing gives them a
little probability, which sampling would otherwise draw (as fairseq, they get
a log-probability of −∞ before a token is chosen).

All three feed only the newest token to the decoder and keep the keys and
values of the earlier ones in a :class:`~transformer_edu.KVCache`;
``use_cache=False`` recomputes the whole prefix at every step instead, with
the same result, only slower. Either way each step runs the model's own
modules, the :class:`~transformer_edu.Decoder` of Chapter 6 with the cache of
Chapter 8, so a forward hook or :func:`~transformer_edu.record_attention`
sees every step.

Each step is kept lean (profile it with :mod:`transformer_edu.profiling`):
the arguments are checked once, at the door, before the first step, and the
steps call ``model.decode`` without checking again; they run in
``torch.inference_mode``; the cache is preallocated and written in place;
the output layer runs on the last position only; and no loop reads a value
back from the device at every step, only every few steps, so a GPU is not
made to wait for Python at every token.

Shape legend: B sources, S source length, K beams, V target vocabulary size,
L generated length (BOS not included). Masks: ``True`` = may attend.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import torch
from torch import Tensor

from . import _validate
from .masks import causal_mask, padding_mask
from .model import Transformer

__all__ = [
    "BeamCandidate",
    "BeamStep",
    "Hypothesis",
    "beam_search",
    "beam_search_nbest",
    "beam_search_trace",
    "gnmt_length_penalty",
    "greedy_decode",
    "sample",
    "sampling_distribution",
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
    """Dropout off and no autograd while decoding; the model's mode is restored after.

    ``torch.inference_mode`` is ``torch.no_grad`` that also skips autograd's
    bookkeeping of versions and views, a few microseconds per operation.
    Tensors made inside can never enter autograd, so results leave as copies.
    """
    was_training = model.training
    switch = any(module.training for module in model.modules())  # a model in eval mode is left alone
    if switch:
        model.eval()
    try:
        with torch.inference_mode():
            yield
    finally:
        if switch:
            model.train(was_training)


def _prepare(model: Transformer, src: Tensor, src_mask: Tensor | None, pad_id: int | None, bos_id: int,
             unk_id: int | None) -> tuple[Tensor, int, list[int]]:
    """The source mask (B, 1 or H, 1, S), the padding id and the ids never generated (arguments checked at the door)."""
    if src_mask is None:
        src_mask = padding_mask(src, model.config.pad_id)  # (B, 1, 1, S)
    else:
        src_mask = src_mask.expand(src.shape[0], -1, -1, -1)  # (B, 1 or H, 1, S)
    pad_id = model.config.pad_id if pad_id is None else pad_id
    never = {bos_id, pad_id} | ({unk_id} if unk_id is not None else set())
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


class _NextToken:
    """The logits of every row's next token: :meth:`Transformer.decode <transformer_edu.model.Transformer.decode>`.

    With a cache only the newest token goes through the layers; without,
    the whole prefix does, under the causal mask. Either way the output layer
    runs on the last position only (``last_only``). The loop checked its
    arguments at the door, so ``decode`` checks nothing here.

    Args:
        model: the model (in eval mode, under ``torch.inference_mode``).
        memory: the encoder's output; src_mask: its padding mask.
        max_len: the most positions the loop feeds, BOS included.
        use_cache: keep a :class:`~transformer_edu.KVCache` of ``max_len`` positions.

    Shape:
        - memory: (N, S, D); src_mask: (N, 1, 1, S)
    """

    def __init__(self, model: Transformer, memory: Tensor, src_mask: Tensor, max_len: int, use_cache: bool) -> None:
        self.model, self.memory, self.src_mask = model, memory, src_mask
        self.cache = model.new_cache(max_len) if use_cache else None
        self.causal = None if use_cache else causal_mask(max_len, memory.device)  # (1, 1, max_len, max_len)

    def __call__(self, tokens: Tensor) -> Tensor:
        """Logits (N, V) of the position after ``tokens`` (N, t), BOS first."""
        if self.cache is not None:  # the newest token; it may see every cached one (no mask)
            logits = self.model.decode(tokens[:, -1:], self.memory, self.src_mask, cache=self.cache)
        else:  # the whole prefix, under the causal mask cut to size
            t = tokens.shape[1]
            logits = self.model.decode(tokens, self.memory, self.src_mask, self.causal[:, :, :t, :t],
                                       last_only=True)
        return logits[:, -1]  # (N, V)

    def reorder(self, rows: Tensor) -> None:
        """Row i continues the past of row ``rows[i]`` (beam search: each kept beam takes its origin's).

        The beams of one source read one memory, so only the self-attention
        keys and values move.
        """
        if self.cache is not None:
            self.cache.reorder(rows, shared_memory=True)

    def keep(self, rows: Tensor) -> None:
        """Keep only the rows ``rows`` (beam search: the sources still searching)."""
        self.memory = self.memory.index_select(0, rows)  # (N', S, D)
        self.src_mask = self.src_mask.index_select(0, rows)  # (N', 1, 1, S)
        if self.cache is not None:
            self.cache.reorder(rows)


# --------------------------------------------------------------------------
# Greedy decoding and sampling
# --------------------------------------------------------------------------

# Reading a value out of a tensor from Python (``bool(done.all())``) makes the
# host wait until the device has computed it; on a GPU that stalls the queue of
# kernels. So the loop asks whether every sentence has ended only every few
# steps; the extra steps write padding, which is cut off at the end.
_CHECK_EVERY = 8


def _generate(model, src, pick, *, max_len, bos_id, eos_id, pad_id, unk_id, src_mask, min_len, use_cache) -> Tensor:
    src_mask, pad_id, never = _prepare(model, src, src_mask, pad_id, bos_id, unk_id)
    batch, device = src.shape[0], src.device
    forbidden, forbidden_early = _forbidden_ids(never, eos_id, model.config.tgt_vocab_size, device)
    with _inference(model):
        memory = model.encode(src, src_mask)  # (B, S, D)
        next_token = _NextToken(model, memory, src_mask, max_len, use_cache)
        tokens = torch.full((batch, max_len + 1), pad_id, dtype=torch.long, device=device)  # (B, 1 + max_len)
        tokens[:, 0] = bos_id
        for step in range(max_len):
            logits = next_token(tokens[:, : step + 1]).float()  # (B, V)
            logits = logits.masked_fill(forbidden_early if step < min_len else forbidden, float("-inf"))
            tokens[:, step + 1] = pick(logits)
            # A sentence that has ended goes on being decoded (its later tokens become padding below)
            if (step + 1) % _CHECK_EVERY == 0 and bool((tokens[:, 1 : step + 2] == eos_id).any(dim=1).all()):
                break
        generated = _end_at_eos(tokens[:, 1 : step + 2], eos_id, pad_id)  # (B, L), BOS dropped
    return generated.clone()  # an ordinary tensor, made outside inference mode


def _end_at_eos(generated: Tensor, eos_id: int, pad_id: int) -> Tensor:
    """Padding after each row's first EOS; cut after the last row's EOS when every row has one.

    Shape:
        - generated: (B, L'); output: (B, L), L ≤ L'
    """
    is_eos = (generated == eos_id).long()  # (B, L')
    generated = generated.masked_fill(is_eos.cumsum(dim=1) - is_eos > 0, pad_id)  # after the first EOS: pad
    if bool(is_eos.any(dim=1).all()):  # end where the last sentence ended
        first_eos = is_eos.argmax(dim=1)  # (B,) each row's first EOS
        generated = generated[:, : int(first_eos.max()) + 1]  # (B, L)
    return generated


@_validate.door(_validate.decoding_inputs)
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


@_validate.door(_validate.sampling_inputs)
def sampling_distribution(
    logits: Tensor, *, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> Tensor:
    """The distribution sampling draws the next token from.

    softmax(logits / ``temperature``), then cut down: to the ``top_k`` most
    likely tokens (Fan et al., 2018), then to the nucleus, the smallest set
    of most likely tokens whose probabilities add up to at least ``top_p``
    (Holtzman et al., 2020), and renormalised. A token is kept when the
    tokens more likely than it hold less than ``top_p``, so the most likely
    token always is. Tokens tied with the k-th are kept too.

    Args:
        logits: scores of the next token; −∞ for tokens never to draw.
        temperature: > 0; below 1 sharpens the distribution, above 1 flattens it.
        top_k: keep only the k most likely tokens; ``None`` = all.
        top_p: keep only the nucleus of mass ``top_p`` in (0, 1]; ``None`` = all.

    Returns:
        Probabilities, each row summing to 1, zero outside the kept tokens.

    Shape:
        - logits: (B, V)
        - output: (B, V)

    See Chapters 8 and 10.
    """
    logits = logits / temperature  # (B, V)
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = logits.softmax(dim=-1)  # (B, V)
    if top_p is not None and top_p < 1.0:
        ranked, order = probs.sort(dim=-1, descending=True)  # (B, V) each
        before = ranked.cumsum(dim=-1) - ranked  # mass of the tokens more likely than each
        dropped = before >= top_p  # (B, V), in ranked order
        outside = torch.zeros_like(dropped).scatter(-1, order, dropped)  # (B, V), back in vocabulary order
        probs = probs.masked_fill(outside, 0.0)
        probs = probs / probs.sum(dim=-1, keepdim=True)
    return probs


@_validate.door(_validate.decoding_inputs)
def sample(
    model: Transformer, src: Tensor, *, max_len: int, bos_id: int, eos_id: int, temperature: float = 1.0,
    top_k: int | None = None, top_p: float | None = None, generator: torch.Generator | None = None,
    pad_id: int | None = None, unk_id: int | None = None, src_mask: Tensor | None = None, min_len: int = 0,
    use_cache: bool = True,
) -> Tensor:
    """Translate a batch by drawing each token from :func:`sampling_distribution`.

    Args:
        temperature: > 0; below 1 sharpens the distribution, above 1 flattens it.
        top_k: draw only among the ``top_k`` most likely tokens; ``None`` = all.
        top_p: draw only from the nucleus of mass ``top_p`` (Chapter 10); ``None`` = all.
        generator: a ``torch.Generator`` for reproducible draws.
        The others: as in :func:`greedy_decode`.

    Returns:
        (B, L) generated ids, as :func:`greedy_decode`.

    See Chapter 8.
    """
    def pick(logits: Tensor) -> Tensor:
        probs = sampling_distribution(logits, temperature=temperature, top_k=top_k, top_p=top_p)  # (B, V)
        return torch.multinomial(probs, 1, generator=generator).squeeze(1)  # (B,)

    return _generate(model, src, pick, max_len=max_len, bos_id=bos_id, eos_id=eos_id, pad_id=pad_id,
                     unk_id=unk_id, src_mask=src_mask, min_len=min_len, use_cache=use_cache)


# --------------------------------------------------------------------------
# Beam search
# --------------------------------------------------------------------------


class _Finished:
    """The K best finished hypotheses of each of n sources, kept on the device.

    Each step adds the hypotheses that end there and keeps the K best by
    score. The sort is stable (of equal scores, the one that finished first
    stays ahead), so they are the K best of all that ever finished. An empty
    slot has the score −∞.

    Shape:
        - tokens: (n, K, max_len), padded; log_prob: (n, K) float32
        - score: (n, K) float64; length: (n, K) long; finished: (n, K) bool
    """

    def __init__(self, tokens: Tensor, log_prob: Tensor, score: Tensor, length: Tensor, finished: Tensor) -> None:
        self.tokens, self.log_prob, self.score, self.length, self.finished = tokens, log_prob, score, length, finished

    @classmethod
    def empty(cls, n: int, K: int, max_len: int, pad_id: int, device: torch.device) -> _Finished:
        return cls(torch.full((n, K, max_len), pad_id, dtype=torch.long, device=device),
                   torch.zeros(n, K, device=device),
                   torch.full((n, K), float("-inf"), dtype=torch.float64, device=device),
                   torch.zeros(n, K, dtype=torch.long, device=device),
                   torch.zeros(n, K, dtype=torch.bool, device=device))

    def add(self, which: Tensor, tokens: Tensor, log_prob: Tensor, length: int, penalty: float,
            finished: bool) -> None:
        """Add the candidates ``which``, all of length ``length`` and length penalty ``penalty``.

        Shape:
            - which: (n, C) bool, for C candidates; tokens: (n, C, max_len); log_prob: (n, C)
        """
        K = self.score.shape[1]
        score = (log_prob.double() / penalty).masked_fill(~which, float("-inf"))  # (n, C), as Python divides
        scores = torch.cat([self.score, score], dim=1)  # (n, K + C): the kept ones first, then the new
        order = scores.sort(dim=1, descending=True, stable=True).indices[:, :K]  # (n, K)
        self.score = scores.gather(1, order)
        self.log_prob = torch.cat([self.log_prob, log_prob], dim=1).gather(1, order)
        self.length = torch.cat([self.length, torch.full_like(order, length)], dim=1).gather(1, order)
        self.finished = torch.cat([self.finished, torch.full_like(which, finished)], dim=1).gather(1, order)
        every = order[:, :, None].expand(-1, -1, self.tokens.shape[2])  # (n, K, max_len)
        self.tokens = torch.cat([self.tokens, tokens], dim=1).gather(1, every)

    def select(self, index: Tensor) -> _Finished:
        """The sources ``index`` (n',), in that order."""
        return _Finished(*(t.index_select(0, index) for t in
                           (self.tokens, self.log_prob, self.score, self.length, self.finished)))

    def hypotheses(self) -> list[list[Hypothesis]]:
        """Each source's hypotheses, best first, read from the device in one go."""
        tokens, log_probs, scores, lengths, flags = (
            t.tolist() for t in (self.tokens, self.log_prob, self.score, self.length, self.finished))
        return [[Hypothesis(tuple(tokens[i][k][: lengths[i][k]]), log_probs[i][k], scores[i][k], flags[i][k])
                 for k in range(len(scores[i])) if math.isfinite(scores[i][k])] for i in range(len(scores))]


def _beam_search(
    model: Transformer, src: Tensor, *, beam_size: int, max_len: int, bos_id: int, eos_id: int,
    length_penalty: float, pad_id: int | None, src_mask: Tensor | None, min_len: int, use_cache: bool,
    unk_id: int | None = None, trace: list[BeamStep] | None = None,
) -> list[list[Hypothesis]]:
    """All beams of all sources in one batch of B·K rows; returns each source's hypotheses, best first.

    Everything stays on the device: the beams' prefixes, their
    log-probabilities, each source's K best finished hypotheses
    (:class:`_Finished`) and the stopping rule. The host reads one flag per
    source every few steps, to end the loop and drop the sources that are done
    from the batch; a source that is done before then is frozen (it adds no
    more hypotheses). With ``trace`` it reads every step's candidates.
    """
    src_mask, pad_id, never = _prepare(model, src, src_mask, pad_id, bos_id, unk_id)
    K, V = beam_size, model.config.tgt_vocab_size
    W = min(2 * K, K * V)  # expansions considered per source and step
    device = src.device
    forbidden, forbidden_early = _forbidden_ids(never, eos_id, V, device)
    # Length penalties computed by Python, so scores are the numbers Python would compute
    penalty = [gnmt_length_penalty(length, length_penalty) for length in range(max_len + 1)]
    check_every = 1 if trace is not None else _CHECK_EVERY

    with _inference(model):
        memory = model.encode(src, src_mask)  # (B, S, D)
        memory = memory.repeat_interleave(K, dim=0)  # (B·K, S, D): source 0's K rows, then source 1's, …
        src_mask = src_mask.repeat_interleave(K, dim=0)  # (B·K, 1, 1, S)
        next_token = _NextToken(model, memory, src_mask, max_len, use_cache)
        active = list(range(src.shape[0]))  # sources in the batch, n = len(active)
        tokens = torch.full((len(active) * K, max_len + 1), pad_id, dtype=torch.long, device=device)
        tokens[:, 0] = bos_id  # (n·K, 1 + max_len): row i·K + k is beam k of source i, BOS first
        log_probs = torch.zeros(len(active), K, device=device)  # (n, K)
        log_probs[:, 1:] = float("-inf")  # at first the K beams are equal: expand only one
        live = torch.ones(len(active), dtype=torch.bool, device=device)  # (n,) sources still searching
        best = _Finished.empty(len(active), K, max_len, pad_id, device)
        retired: list[tuple[list[int], _Finished]] = []  # sources that left the batch, and their hypotheses
        rank = torch.arange(W, device=device)  # (W,)
        for step in range(max_len):
            n = len(active)
            step_lp = next_token(tokens[:, : step + 1]).float().log_softmax(dim=-1)  # (n·K, V)
            step_lp = step_lp.masked_fill(forbidden_early if step < min_len else forbidden, float("-inf"))
            expanded = (log_probs.view(n * K, 1) + step_lp).view(n, K * V)  # (n, K·V)
            top_lp, top_index = expanded.topk(W, dim=-1)  # (n, W), best first
            origin, token = top_index // V, top_index % V  # (n, W): which beam, which next token
            parents = torch.arange(n, device=device)[:, None] * K + origin  # (n, W) rows of the beams extended
            # The prefixes of the candidates: each parent's tokens, then the new one
            candidates = tokens.index_select(0, parents.flatten()).view(n, W, max_len + 1)[:, :, 1:]
            candidates[:, :, step] = token  # (n, W, max_len)
            # An EOS among the K best ends a hypothesis (of a source still searching)
            ends = (token[:, :K] == eos_id) & top_lp[:, :K].isfinite() & live[:, None]  # (n, K)
            best.add(ends, candidates[:, :K], top_lp[:, :K], step + 1, penalty[step + 1], True)
            # The K best expansions that do not end with EOS live on (there are ≥ K:
            # each beam has one EOS)
            keep = ((token == eos_id).long() * 2 * W + rank).argsort(dim=-1)[:, :K]  # (n, K)
            if trace is not None:
                _trace_step(trace, step, candidates[0, :, : step + 1], top_lp[0], keep[0], ends[0])
            log_probs = top_lp.gather(1, keep)  # (n, K)
            # Log-probabilities only fall as a beam grows and lp(|Y|) ≤ lp(max_len), so no live
            # beam can score above log_prob / lp(max_len): once the best finished hypothesis
            # reaches that bound, the source is done.
            bound = log_probs.max(dim=1).values.double() / penalty[max_len]  # (n,)
            searching = live & (best.score[:, 0].isneginf() | (best.score[:, 0] < bound))  # (n,)
            kept = candidates.gather(1, keep[:, :, None].expand(-1, -1, max_len))  # (n, K, max_len)
            if step == max_len - 1:  # out of steps: the live beams compete as unfinished hypotheses
                best.add(live[:, None] & log_probs.isfinite(), kept, log_probs, step + 1, penalty[step + 1], False)
                break
            tokens[:, 1:] = kept.view(n * K, max_len)  # each beam's prefix, the new token included
            next_token.reorder(parents.gather(1, keep).flatten())  # each kept beam: its origin's keys and values
            live = searching
            if (step + 1) % check_every:
                continue
            flags = live.tolist()  # the one read from the device, every few steps
            if not any(flags):
                break
            if not all(flags):  # the sources that are done leave the batch
                still = torch.tensor([i for i, f in enumerate(flags) if f], device=device)  # (n',)
                done = torch.tensor([i for i, f in enumerate(flags) if not f], device=device)
                retired.append(([active[i] for i, f in enumerate(flags) if not f], best.select(done)))
                active = [b for b, f in zip(active, flags) if f]
                rows = (still[:, None] * K + torch.arange(K, device=device)).flatten()  # (n'·K,)
                tokens, log_probs, live, best = tokens[rows], log_probs[still], live[still], best.select(still)
                next_token.keep(rows)
        results: dict[int, list[Hypothesis]] = {}
        for sources, finished in [*retired, (active, best)]:
            results.update(zip(sources, finished.hypotheses()))
    return [results[b] for b in range(src.shape[0])]


def _trace_step(trace: list[BeamStep], step: int, prefixes: Tensor, log_prob: Tensor, keep: Tensor,
                ends: Tensor) -> None:
    """Record one source's candidates (read from the device: only :func:`beam_search_trace` does this).

    Shape:
        - prefixes: (W, step + 1); log_prob: (W,); keep: (K,); ends: (K,)
    """
    lps, prefixes = log_prob.tolist(), [tuple(p) for p in prefixes.tolist()]
    status = ["dropped"] * len(lps)
    for j in keep.tolist():
        status[j] = "kept"
    for j, ended in enumerate(ends.tolist()):
        if ended:
            status[j] = "finished"
    trace.append(BeamStep(step, [BeamCandidate(prefixes[j], lps[j], status[j])
                                 for j in range(len(lps)) if math.isfinite(lps[j])]))


@_validate.door(_validate.decoding_inputs)
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
    B · K rows; a source that is done leaves the batch (checked every few steps).

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


@_validate.door(_validate.decoding_inputs)
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


@_validate.door(_validate.trace_inputs)
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
    steps: list[BeamStep] = []
    hypotheses = _beam_search(model, src, beam_size=beam_size, max_len=max_len, bos_id=bos_id, eos_id=eos_id,
                              length_penalty=length_penalty, trace=steps,
                              **{"pad_id": None, "src_mask": None, "min_len": 0, "use_cache": True, **options})
    return hypotheses[0], steps
