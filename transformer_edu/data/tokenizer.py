"""Written Korean ↔ the toy task's tokens: particles and endings as separate tokens (Chapter 7)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .lexicon import ANIMATE_BY_WORD, PLACE_BY_WORD, THING_BY_WORD, TIME_ADVERBIALS, with_particle


class KoreanTokenizer:
    """Splits a noun's particle off into a token of its own: 고양이가 → 고양이 가.

    The rule is a lookup in one table, ``splits``, that maps each written
    word made of a noun and a particle to its two tokens, e.g. ``"고양이가":
    ["고양이", "가"]`` and ``"내가": ["나", "가"]`` (the irregular form of 나 +
    가). To tokenize a text:

    1. normalise it to Unicode NFC (composed Hangul syllables);
    2. split it on whitespace;
    3. replace each word found in ``splits`` by its two tokens and keep every
       other word as one token.

    To detokenize, read the tokens left to right: wherever two neighbouring
    tokens equal the value of an entry of ``splits``, write that entry's key
    (the word) instead; join everything with single spaces.

    No token of the table is itself a key, so tokenizing tokens changes
    nothing, and no two words split into the same tokens, so detokenizing
    gives the written text back. :meth:`to_dict` exports the table with this
    rule as JSON-ready data, e.g. for a reimplementation in JavaScript.

    Args:
        splits: written word → its two tokens (stem, particle).
    """

    RULE = MappingProxyType({
        "tokenize": "Normalise the text to Unicode NFC and split it on whitespace. Replace every word "
                    "that is a key of `splits` by the two tokens it maps to; keep any other word as one "
                    "token.",
        "detokenize": "Read the tokens left to right. Where a token and the next one equal the value of "
                      "an entry of `splits`, write that entry's key instead of the two; otherwise write the "
                      "token. Join with single spaces.",
    })

    def __init__(self, splits: Mapping[str, Sequence[str]]) -> None:
        if not isinstance(splits, Mapping):
            raise TypeError(f"KoreanTokenizer: splits must be a mapping word -> [stem, particle], "
                            f"got {type(splits).__name__}")
        self.splits: dict[str, tuple[str, str]] = {}
        for word, tokens in splits.items():
            tokens = tuple(tokens) if isinstance(tokens, (list, tuple)) else ()
            if (not isinstance(word, str) or len(word.split()) != 1 or word != word.strip() or len(tokens) != 2
                    or not all(isinstance(t, str) and len(t.split()) == 1 and t == t.strip() for t in tokens)):
                raise ValueError(f"KoreanTokenizer: splits[{word!r}] = {splits[word]!r}; expected a word "
                                 "without spaces mapped to two tokens without spaces")
            self.splits[word] = tokens
        self._joins = {tokens: word for word, tokens in self.splits.items()}
        if len(self._joins) != len(self.splits):
            raise ValueError("KoreanTokenizer: two words of splits split into the same tokens")
        clash = sorted({t for tokens in self.splits.values() for t in tokens} & set(self.splits))
        if clash:
            raise ValueError(f"KoreanTokenizer: the tokens {clash} are also words of splits")
        self.particles = tuple(sorted({particle for _, particle in self.splits.values()}))
        self.stems = tuple(sorted({stem for stem, _ in self.splits.values()}))

    @staticmethod
    def words(text: str) -> list[str]:
        """Steps 1 and 2 of the rule: the whitespace-separated words of the NFC-normalised ``text``."""
        if not isinstance(text, str):
            raise TypeError(f"KoreanTokenizer: text must be a str, got {type(text).__name__}")
        return unicodedata.normalize("NFC", text).split()

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``: ``"고양이가 생선을 먹었다"`` → ``["고양이", "가", "생선", "을", "먹었다"]``."""
        return [token for word in self.words(text) for token in self.splits.get(word, (word,))]

    def detokenize(self, tokens: str | Sequence[str]) -> str:
        """Written text from tokens (a list, or a string of space-separated tokens)."""
        tokens = self.words(tokens) if isinstance(tokens, str) else list(tokens)
        words, i = [], 0
        while i < len(tokens):
            pair = tuple(tokens[i:i + 2])
            if pair in self._joins:
                words.append(self._joins[pair])
                i += 2
            else:
                words.append(tokens[i])
                i += 1
        return " ".join(words)

    def to_dict(self) -> dict:
        """The tokenizer as JSON-ready data: the rule in words, the particles and the table."""
        return {"rule": dict(self.RULE), "particles": list(self.particles),
                "splits": {word: list(tokens) for word, tokens in self.splits.items()}}

    @classmethod
    def from_dict(cls, spec: dict) -> KoreanTokenizer:
        """Rebuild a tokenizer exported by :meth:`to_dict`."""
        if not isinstance(spec, dict):
            raise TypeError(f"KoreanTokenizer.from_dict: spec must be a dict, got {type(spec).__name__}")
        if not isinstance(spec.get("splits"), dict):
            raise ValueError(f"KoreanTokenizer.from_dict: expected {{'splits': {{word: [stem, particle]}}, ...}}, "
                             f"got {str(spec)[:80]}")
        return cls(spec["splits"])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KoreanTokenizer) and self.splits == other.splits

    def __repr__(self) -> str:
        return f"KoreanTokenizer({len(self.splits)} words, particles {' '.join(self.particles)})"


def _grammar_splits() -> dict[str, list[str]]:
    """Every noun with every particle it takes in the grammar, as written → tokens."""
    takes = {**{n: ("이/가", "은/는", "을/를") for n in ANIMATE_BY_WORD}, **{t: ("을/를",) for t in THING_BY_WORD}}
    for place in PLACE_BY_WORD:
        takes[place] = takes.get(place, ()) + ("에", "에서")
    for time in TIME_ADVERBIALS:
        if time.korean.endswith("에"):
            takes[time.korean[:-1]] = ("에",)
    splits = {}
    for noun, particles in takes.items():
        for particle in particles:
            word = with_particle(noun, particle)
            ending = word[len(noun):] if word.startswith(noun) else word[-1]  # 내가 → 가
            splits[word] = [noun, ending]
    return splits


KOREAN_TOKENIZER = KoreanTokenizer(_grammar_splits())
"""The tokenizer of the toy grammar; its table holds every noun with every particle it takes."""


def tokenize_korean(text: str) -> list[str]:
    """Split written Korean into the grammar's tokens: particles become tokens of their own.

    ``tokenize_korean("고양이가 생선을 먹었다") == ["고양이", "가", "생선", "을", "먹었다"]`` and
    ``tokenize_korean("내가 개를 쫓았다") == ["나", "가", "개", "를", "쫓았다"]``. Text that is
    already tokenized stays as it is. The rule is :class:`KoreanTokenizer`'s: a lookup of each
    whitespace-separated word in the table of :func:`korean_tokenizer_spec`.
    """
    return KOREAN_TOKENIZER.tokenize(text)


def detokenize_korean(tokens: str | Sequence[str]) -> str:
    """Written Korean from tokens: ``"고양이 가 생선 을 먹었다"`` → ``"고양이가 생선을 먹었다"``."""
    return KOREAN_TOKENIZER.detokenize(tokens)


def korean_tokenizer_spec() -> dict:
    """The tokenizer as JSON-ready data: ``{"rule": {...}, "particles": [...], "splits": {...}}``.

    ``splits`` maps each written noun-with-particle of the grammar to its two
    tokens; ``rule`` states in words how to tokenize and detokenize with it
    (see :class:`KoreanTokenizer`); ``particles`` lists the particle tokens.
    ``KoreanTokenizer.from_dict(spec)`` rebuilds the tokenizer.
    """
    return KOREAN_TOKENIZER.to_dict()
