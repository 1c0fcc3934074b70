"""One sequence per example, for the decoder-only model (Chapter 10).

A decoder-only model reads one sequence and predicts its next token at every
position. Two kinds of data become such sequences here:

* **a translation as a prompt**: ``고양이 가 생선 을 먹었다 <sep> the cat ate
  the fish <eos>``. The Korean tokens and the separator are the prompt; the
  loss counts only the positions that predict the English and its ``<eos>``,
  the tokens the encoder–decoder's decoder predicts too. One vocabulary holds
  both languages (:func:`prompt_vocab`).
* **windows of running text** for language modelling: the sentences joined
  into one stream, each followed by ``<eos>``, cut into windows of equal
  length; every position counts (:func:`text_windows`).

Both give :class:`SequenceBatch` es, which :func:`~transformer_edu.training.loop.fit`
and :func:`~transformer_edu.training.loop.evaluate` train and measure like the
encoder–decoder's batches.

Shape legend: B batch, L sequence length.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from ._types import Pair
from .batching import pad_batch
from .vocab import Vocab

__all__ = ["SEP", "SequenceBatch", "prompt_batches", "prompt_ids", "prompt_vocab", "text_windows"]

#: The separator between the prompt (the source sentence) and the answer.
SEP = "<sep>"


@dataclass
class SequenceBatch:
    """One batch for a decoder-only model.

    Attributes:
        tokens: ``(B, L)`` input ids, padded on the right with ``<pad>``.
        tgt_out: ``(B, L)`` the next token at every position: ``tokens``
            shifted left by one, with ``<pad>`` wherever the loss must not
            count (the prompt, the padding).
        n_tokens: number of positions that count.
    """

    tokens: torch.Tensor
    tgt_out: torch.Tensor
    n_tokens: int

    @property
    def inputs(self) -> tuple[torch.Tensor]:
        """The model's arguments, for ``model(*batch.inputs)``; here ``(tokens,)``."""
        return (self.tokens,)

    def to(self, device: torch.device | str) -> SequenceBatch:
        return SequenceBatch(self.tokens.to(device), self.tgt_out.to(device), self.n_tokens)

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def split(self, parts: int) -> list[SequenceBatch | None]:
        """Deal the rows out into ``parts`` smaller batches, as :meth:`Batch.split <transformer_edu.data.batching.Batch.split>`."""
        if isinstance(parts, bool) or not isinstance(parts, int) or parts < 1:
            raise ValueError(f"SequenceBatch.split: parts={parts!r}; expected an integer >= 1")
        pieces: list[SequenceBatch | None] = []
        for part in range(parts):
            if part >= len(self):
                pieces.append(None)
                continue
            rows = torch.arange(part, len(self), parts)
            tokens, tgt_out = self.tokens[rows], self.tgt_out[rows]  # (b, L) each
            length = int((tokens != Vocab.pad_id).sum(dim=1).max())  # padding is on the right
            pieces.append(SequenceBatch(tokens[:, :length], tgt_out[:, :length],  # (b, l) each
                                        int((tgt_out != Vocab.pad_id).sum())))
        return pieces


def prompt_vocab(pairs: Sequence[Pair]) -> Vocab:
    """One vocabulary for both sides of ``pairs``, with :data:`SEP` right after the specials (id 4).

    The other tokens follow by decreasing frequency over both sides, ties
    alphabetically, as :meth:`Vocab.build <transformer_edu.data.vocab.Vocab.build>`.
    """
    if len(pairs) == 0:
        raise ValueError("prompt_vocab: pairs is empty; expected at least one (source, target) pair")
    counts: Counter[str] = Counter()
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            raise ValueError(f"prompt_vocab: pairs[{i}]={pair!r}; expected a (source, target) pair of str")
        counts.update(pair[0].split() + pair[1].split())
    if SEP in counts:
        raise ValueError(f"prompt_vocab: the sentences contain the separator {SEP!r}")
    tokens = sorted((t for t in counts if t not in Vocab.SPECIALS), key=lambda t: (-counts[t], t))
    return Vocab([SEP, *tokens])


def prompt_ids(source: str, vocab: Vocab) -> list[int]:
    """The prompt of ``source``: its token ids, then :data:`SEP`.

    Raises:
        ValueError: ``vocab`` has no :data:`SEP` (build it with :func:`prompt_vocab`).
    """
    if SEP not in vocab:
        raise ValueError(f"prompt_ids: the vocabulary has no {SEP!r}; build it with prompt_vocab(pairs)")
    return vocab.encode(source, add_eos=False) + [vocab.stoi[SEP]]


def prompt_batches(
    pairs: Sequence[Pair], vocab: Vocab, batch_size: int, *, shuffle: bool = False, seed: int = 0,
    sort_by_length: bool = False, device: torch.device | str | None = None,
) -> Iterator[SequenceBatch]:
    """Batches of ``source <sep> target <eos>`` sequences whose loss counts the target only.

    Row i holds ``tokens = source <sep> target`` and ``tgt_out = (pads)
    target <eos>``: the positions of the source's tokens, whose next token
    is part of the prompt, get ``<pad>`` and do not count. The order of the
    batches is that of :func:`~transformer_edu.data.batching.make_batches` with the
    same ``shuffle``, ``seed`` and ``sort_by_length`` (sorting by the source
    length, then the target's), so both models of Chapter 10 see the same
    pairs in the same batches.

    Args:
        pairs: ``(source, target)`` strings.
        vocab: from :func:`prompt_vocab`.
        batch_size: pairs per batch; the last batch may be smaller.
        shuffle, seed, sort_by_length, device: as in :func:`~transformer_edu.data.batching.make_batches`.

    Returns:
        An iterator of :class:`SequenceBatch`; the pairs are encoded when it is created.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"prompt_batches: batch_size={batch_size!r}; expected an integer >= 1")
    if not isinstance(vocab, Vocab):
        raise TypeError(f"prompt_batches: vocab must be a Vocab, got {type(vocab).__name__}")
    if len(pairs) == 0:
        raise ValueError("prompt_batches: pairs is empty; expected at least one (source, target) pair")
    encoded = []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            raise ValueError(f"prompt_batches: pairs[{i}]={pair!r}; expected a (source, target) pair of str")
        encoded.append((prompt_ids(pair[0], vocab), vocab.encode(pair[1])))  # target with <eos>
    order = list(range(len(encoded)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(order)
    if sort_by_length:  # as make_batches: the source with its <eos>, the target without
        order.sort(key=lambda i: (len(encoded[i][0]), len(encoded[i][1]) - 1))
    chunks = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    if shuffle and sort_by_length:
        rng.shuffle(chunks)

    def batches() -> Iterator[SequenceBatch]:
        for chunk in chunks:
            tokens, targets = [], []
            for i in chunk:
                prompt, answer = encoded[i]
                sequence = prompt + answer  # source <sep> target <eos>
                tokens.append(sequence[:-1])
                targets.append([vocab.pad_id] * (len(prompt) - 1) + answer)  # the loss on the answer only
            yield SequenceBatch(pad_batch(tokens, vocab.pad_id, device), pad_batch(targets, vocab.pad_id, device),
                                sum(len(encoded[i][1]) for i in chunk))

    return batches()


def text_windows(
    sentences: Sequence[str], vocab: Vocab, length: int, batch_size: int, *, stride: int | None = None,
    shuffle: bool = False, seed: int = 0, device: torch.device | str | None = None,
) -> list[SequenceBatch]:
    """Running text cut into windows of ``length`` tokens, for language modelling.

    The sentences are joined in order into one stream, each followed by
    ``<eos>``; windows of ``length + 1`` ids start every ``stride`` ids
    (by default ``length``: no overlap; the end that does not fill a window
    is dropped); each window gives ``tokens`` (its first ``length`` ids) and
    ``tgt_out`` (its last ``length``), so every position counts. A window
    starts anywhere in a sentence, so position 0 of a window is no
    sentence's start. Overlapping windows (a smaller ``stride``) put the
    same text at many positions, to measure the loss position by position.

    Args:
        sentences: the text, one sentence per string.
        vocab: maps tokens to ids.
        length: positions per window L.
        batch_size: windows per batch.
        stride: ids between the starts of two windows; default ``length``.
        shuffle: shuffle the windows (the stream stays in order) with ``seed``.
        device: where to put the tensors.

    Returns:
        A list of :class:`SequenceBatch`, each (batch_size, L) but maybe the last.
    """
    stride = length if stride is None else stride
    for name, value in (("length", length), ("batch_size", batch_size), ("stride", stride)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"text_windows: {name}={value!r}; expected an integer >= 1")
    stream = [i for sentence in sentences for i in vocab.encode(sentence)]  # each sentence, then <eos>
    if len(stream) < length + 1:
        raise ValueError(f"text_windows: {len(stream)} tokens do not fill one window of {length} + 1")
    n = (len(stream) - 1 - length) // stride + 1  # windows that fit
    ids = torch.tensor(stream)
    order = list(range(n))
    if shuffle:
        random.Random(seed).shuffle(order)
    starts = torch.tensor(order) * stride  # (n,)
    window = starts[:, None] + torch.arange(length + 1)  # (n, L + 1)
    rows = ids[window]  # (n, L + 1)
    out = []
    for start in range(0, n, batch_size):
        chunk = rows[start : start + batch_size]  # (b, L + 1)
        tokens, tgt_out = chunk[:, :-1], chunk[:, 1:]  # (b, L) each
        out.append(SequenceBatch(tokens.to(device) if device else tokens, tgt_out.to(device) if device else tgt_out,
                                 tgt_out.numel()))
    return out
