"""Padded batches of token ids for training and decoding (Chapter 7)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from .. import _validate
from ._types import Pair
from .vocab import Vocab


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int, device: torch.device | str | None = None
              ) -> torch.Tensor:
    """Stack id sequences of different lengths into one tensor, padding on the right.

    Shape:
        Returns a ``LongTensor`` of shape ``(B, L)``, ``L`` the longest sequence.
    """
    if len(sequences) == 0:
        raise ValueError("pad_batch: sequences is empty; expected at least one sequence")
    _validate.int_in_range("pad_id", pad_id, 0, where="pad_batch")
    length = max(len(s) for s in sequences)
    batch = torch.full((len(sequences), length), pad_id, dtype=torch.long)  # (B, L)
    for row, seq in enumerate(sequences):
        batch[row, :len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
    return batch.to(device) if device is not None else batch


@dataclass
class Batch:
    """One batch for teacher forcing.

    Attributes:
        src: ``(B, S)`` source ids, each sentence ending in ``<eos>``, then ``<pad>``.
        tgt_in: ``(B, T)`` decoder input ``<bos> y1 … yn``, then ``<pad>``.
        tgt_out: ``(B, T)`` what the decoder must predict ``y1 … yn <eos>``, then ``<pad>``:
            ``tgt_in`` shifted left by one.
        n_tokens: number of non-pad positions in ``tgt_out``, to average the loss per token.
    """
    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    n_tokens: int

    @property
    def inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The model's arguments, for ``model(*batch.inputs)``; here ``(src, tgt_in)``."""
        return self.src, self.tgt_in

    def to(self, device: torch.device | str) -> Batch:
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device), self.n_tokens)

    def __len__(self) -> int:
        return self.src.shape[0]

    def split(self, parts: int) -> list[Batch | None]:
        """Deal the rows out into ``parts`` smaller batches, as cards: part ``p`` gets rows ``p, p + parts, …``.

        Data-parallel training gives each process one part of every batch, and
        gradient accumulation runs a process's part in several steps
        (Chapter 9). Each part is cut to its own longest sentences, so it
        carries no column of padding only. A part that gets no row (a batch
        of fewer than ``parts`` rows) is ``None``.
        """
        _validate.positive_int("parts", parts, where="Batch.split")
        pieces: list[Batch | None] = []
        for part in range(parts):
            if part >= len(self):
                pieces.append(None)
                continue
            rows = torch.arange(part, len(self), parts)
            src, tgt_in, tgt_out = self.src[rows], self.tgt_in[rows], self.tgt_out[rows]  # (b, S), (b, T), (b, T)
            pad = Vocab.pad_id  # padding is on the right (pad_batch)
            s_len = int((src != pad).sum(dim=1).max())
            t_len = int((tgt_out != pad).sum(dim=1).max())
            pieces.append(Batch(src[:, :s_len], tgt_in[:, :t_len], tgt_out[:, :t_len],  # (b, s), (b, t), (b, t)
                                int((tgt_out != pad).sum())))
        return pieces


def make_batches(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int, *,
                 shuffle: bool = False, seed: int = 0, sort_by_length: bool = False,
                 device: torch.device | str | None = None, strict: bool = False) -> Iterator[Batch]:
    """Encode ``(source, target)`` pairs and yield padded :class:`Batch` es.

    Args:
        pairs: ``(source, target)`` strings.
        src_vocab, tgt_vocab: vocabularies of each side.
        batch_size: pairs per batch; the last batch may be smaller.
        shuffle: shuffle the order (pass a new ``seed`` each epoch for a new order).
        seed: seed of the shuffle.
        sort_by_length: group pairs of similar length, so batches carry less padding;
            with ``shuffle`` the batches still come in random order.
        device: where to put the tensors.
        strict: raise ``ValueError`` on unknown tokens instead of mapping them to ``<unk>``.

    Returns:
        An iterator of :class:`Batch`; the arguments are checked and the pairs
        encoded when it is created.
    """
    _validate.positive_int("batch_size", batch_size, where="make_batches")
    _validate.instance("src_vocab", src_vocab, Vocab, "a Vocab", where="make_batches")
    _validate.instance("tgt_vocab", tgt_vocab, Vocab, "a Vocab", where="make_batches")
    if len(pairs) == 0:
        raise ValueError("make_batches: pairs is empty; expected at least one (source, target) pair")
    encoded = []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            raise ValueError(f"make_batches: pairs[{i}]={pair!r}; expected a (source, target) pair of str")
        encoded.append((src_vocab.encode(pair[0], strict=strict),
                        tgt_vocab.encode(pair[1], add_eos=False, strict=strict)))

    order = list(range(len(encoded)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(order)
    if sort_by_length:  # a stable sort keeps the shuffled order among equal lengths
        order.sort(key=lambda i: (len(encoded[i][0]), len(encoded[i][1])))
    chunks = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    if shuffle and sort_by_length:
        rng.shuffle(chunks)

    def batches() -> Iterator[Batch]:
        for chunk in chunks:
            targets = [encoded[i][1] for i in chunk]
            tgt_out = pad_batch([t + [tgt_vocab.eos_id] for t in targets], tgt_vocab.pad_id, device)  # (B, T)
            yield Batch(src=pad_batch([encoded[i][0] for i in chunk], src_vocab.pad_id, device),      # (B, S)
                        tgt_in=pad_batch([[tgt_vocab.bos_id] + t for t in targets], tgt_vocab.pad_id, device),
                        tgt_out=tgt_out,
                        n_tokens=sum(len(t) + 1 for t in targets))

    return batches()
