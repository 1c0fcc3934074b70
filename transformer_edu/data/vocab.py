"""A vocabulary: tokens ↔ ids, with the special tokens first (Chapter 7)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch

from .. import _validate


class Vocab:
    """A word-level vocabulary: whitespace tokens ↔ integer ids.

    Ids 0–3 are the specials ``<pad>`` (0), ``<bos>``, ``<eos>``, ``<unk>``; the
    other tokens follow in the order given (:meth:`build`: most frequent first).

    Args:
        tokens: the ordinary tokens, in id order, without the specials.
    """

    SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")
    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3

    def __init__(self, tokens: Sequence[str]):
        tokens = list(tokens)
        for token in tokens:
            if not isinstance(token, str) or not token or token != token.strip() or len(token.split()) != 1:
                raise ValueError(f"Vocab: token {token!r} is not a single non-empty whitespace-free string")
        clashes = set(tokens) & set(self.SPECIALS)
        if clashes or len(set(tokens)) != len(tokens):
            duplicate = sorted(clashes) or [t for t, c in Counter(tokens).items() if c > 1]
            raise ValueError(f"Vocab: tokens must be unique and not special; offending: {duplicate}")
        self.itos: list[str] = [*self.SPECIALS, *tokens]
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: Sequence[str], min_freq: int = 1) -> Vocab:
        """Collect the tokens of ``sentences`` that occur at least ``min_freq`` times.

        Ids are given by decreasing frequency, ties broken alphabetically, so the
        same sentences always give the same vocabulary.
        """
        _validate.positive_int("min_freq", min_freq, where="Vocab.build")
        counts: Counter[str] = Counter()
        for i, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise TypeError(f"Vocab.build: sentences[{i}] is a {type(sentence).__name__}, expected a str "
                                "(for pairs, build one vocabulary per side: [src for src, _ in pairs])")
            counts.update(sentence.split())
        kept = [t for t, c in counts.items() if c >= min_freq and t not in cls.SPECIALS]
        return cls(sorted(kept, key=lambda t: (-counts[t], t)))

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {' '.join(self.itos[:8])}{' …' if len(self) > 8 else ''})"

    def unknown_tokens(self, sentence: str) -> list[str]:
        """The distinct tokens of ``sentence`` not in the vocabulary, in order of appearance."""
        return list(dict.fromkeys(t for t in sentence.split() if t not in self.stoi))

    def encode(self, sentence: str, add_bos: bool = False, add_eos: bool = True,
               strict: bool = False) -> list[int]:
        """Split ``sentence`` on whitespace and map each token to its id.

        Args:
            sentence: the text.
            add_bos, add_eos: put ``<bos>`` in front / ``<eos>`` at the end.
            strict: if ``True``, unknown tokens raise ``ValueError`` naming them;
                otherwise they map to ``unk_id``.
        """
        _validate.text("sentence", sentence, where="Vocab.encode")
        if strict and (unknown := self.unknown_tokens(sentence)):
            raise ValueError(f"Vocab.encode: unknown tokens {unknown} in {sentence!r}")
        ids = [self.stoi.get(t, self.unk_id) for t in sentence.split()]
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids: Sequence[int] | torch.Tensor, strip_specials: bool = True) -> str:
        """Map ids back to a space-separated string.

        With ``strip_specials=True`` (the default), stop at the first ``<eos>`` and
        drop ``<pad>`` and ``<bos>``; ``<unk>`` is kept, so unknown words stay visible.
        With ``False``, every id is shown.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"Vocab.decode: ids has shape {tuple(ids.shape)}; expected (L,)")
            ids = ids.tolist()
        tokens = []
        for i in ids:
            if not 0 <= i < len(self.itos):
                raise ValueError(f"Vocab.decode: id {i!r} is outside the vocabulary of size {len(self)}")
            if strip_specials and i == self.eos_id:
                break
            if not (strip_specials and i in (self.pad_id, self.bos_id)):
                tokens.append(self.itos[i])
        return " ".join(tokens)

    def to_dict(self) -> dict[str, list[str]]:
        """A JSON-serialisable description, for checkpoints: ``{"itos": [...]}``."""
        return {"itos": list(self.itos)}

    @classmethod
    def from_dict(cls, state: dict) -> Vocab:
        """Rebuild a vocabulary saved by :meth:`to_dict`."""
        itos = state.get("itos") if isinstance(state, dict) else None
        if not isinstance(itos, list) or tuple(itos[:4]) != cls.SPECIALS:
            raise ValueError(f"Vocab.from_dict: expected {{'itos': [{', '.join(cls.SPECIALS)}, ...]}}, "
                             f"got {str(state)[:80]}")
        return cls(itos[4:])
