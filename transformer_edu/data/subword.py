"""A learned subword vocabulary: byte-pair encoding with Hugging Face ``tokenizers`` (Chapter 9).

A word table (:class:`~transformer_edu.data.vocab.Vocab` built from whole
words) refuses every word it never saw, and Korean makes new words all the
time: 먹었다, 먹었고, 먹는다 and 먹지 share a stem and differ in their endings.
Byte-pair encoding (Sennrich et al., 2016) starts from single characters and
learns, from a training corpus, which neighbouring pieces to merge, most
frequent pair first; a word it never saw is then written with pieces it
knows (라면을 → 라 면 을), never refused. The paper's models share one
such vocabulary of about 37 000 tokens between English and German.

The learning itself is done by Hugging Face's ``tokenizers`` library, the
well-kept implementation most real systems use; Chapter 9 builds a small BPE
by hand and checks it against it. The setup is SentencePiece's:

* the text is normalised to Unicode NFC (composed Hangul syllables);
* each word starts with the marker ``▁`` (U+2581), so pieces can be joined
  back into the written text without guessing where the spaces were;
* a character never seen in training is written as its UTF-8 bytes
  (``<0xEA>`` …: "byte fallback"), so no input is ever unknown;
* the ids 0–3 are :class:`~transformer_edu.data.vocab.Vocab`'s specials
  ``<pad> <bos> <eos> <unk>``, so ``tokenizer.vocab()`` is a ``Vocab``
  with the tokenizer's own ids.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Sequence

from .. import _validate
from .vocab import Vocab

_BYTES = tuple(f"<0x{b:02X}>" for b in range(256))
_MARKER = "\u2581"  # ▁, the start of a word


def _library():
    try:
        import tokenizers
    except ImportError as error:  # pragma: no cover - a dependency of the package
        raise ImportError("SubwordTokenizer needs Hugging Face's tokenizers: pip install tokenizers") from error
    return tokenizers


class SubwordTokenizer:
    """Written text ↔ subword pieces, learned by byte-pair encoding.

    Build one with :meth:`train`; :meth:`to_dict` / :meth:`from_dict` store it
    in a checkpoint (as the library's own JSON).

    Args:
        spec: the library's JSON description of a tokenizer trained by
            :meth:`train` (what :meth:`to_dict` returns under ``"json"``).

    Example::

        tokenizer = SubwordTokenizer.train(korean + english, vocab_size=600)
        tokenizer.tokenize("강아지가 라면을 먹었다")   # ['▁', '<0xEA>', …, '▁먹었다']
        tokenizer.detokenize(tokenizer.tokenize(text)) == " ".join(text.split())
    """

    def __init__(self, spec: str) -> None:
        _validate.instance("spec", spec, str, "the library's JSON as a str", where="SubwordTokenizer")
        tokenizers = _library()
        try:
            self._tokenizer = tokenizers.Tokenizer.from_str(spec)
        except Exception as error:  # the library raises its own Exception type
            raise ValueError(f"SubwordTokenizer: spec is not a tokenizers JSON description: {error}") from None
        itos = [self._tokenizer.id_to_token(i) for i in range(self._tokenizer.get_vocab_size())]
        if tuple(itos[:4]) != Vocab.SPECIALS:
            raise ValueError(f"SubwordTokenizer: the ids 0-3 must be {Vocab.SPECIALS}, got {tuple(itos[:4])}")
        self._itos = itos

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, *, model: str = "bpe") -> SubwordTokenizer:
        """Learn a vocabulary of at most ``vocab_size`` pieces from ``texts``.

        Args:
            texts: the training sentences (for a shared vocabulary, both
                languages' sentences).
            vocab_size: the most pieces, counting the 4 specials and the 256
                byte pieces; the learning stops earlier when no pair of
                pieces is left to merge.
            model: ``"bpe"`` (byte-pair encoding, the paper's) or
                ``"unigram"`` (SentencePiece's default, Kudo 2018).

        Raises:
            ValueError: ``vocab_size`` leaves no room for the corpus's
                characters, or ``texts`` holds no text.
        """
        if model not in ("bpe", "unigram"):
            raise ValueError(f"SubwordTokenizer.train: model={model!r}; expected 'bpe' or 'unigram'")
        texts = [cls._normalise(text, f"texts[{i}]") for i, text in enumerate(texts)]
        texts = [text for text in texts if text]
        if not texts:
            raise ValueError("SubwordTokenizer.train: texts holds no text to learn from")
        alphabet = {char for text in texts for char in text if char != " "} | {_MARKER}
        smallest = len(Vocab.SPECIALS) + len(_BYTES) + len(alphabet)
        _validate.int_in_range(
            "vocab_size", vocab_size, smallest, where="SubwordTokenizer.train",
            why=f" (4 specials, 256 byte pieces and the {len(alphabet)} characters of the texts)")
        tokenizers = _library()
        learned = vocab_size - len(_BYTES)
        if model == "bpe":
            tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>"))
            trainer = tokenizers.trainers.BpeTrainer(vocab_size=learned, special_tokens=list(Vocab.SPECIALS),
                                                     show_progress=False)
        else:
            tokenizer = tokenizers.Tokenizer(tokenizers.models.Unigram())
            trainer = tokenizers.trainers.UnigramTrainer(vocab_size=learned, special_tokens=list(Vocab.SPECIALS),
                                                         unk_token="<unk>", show_progress=False)
        tokenizer.normalizer = tokenizers.normalizers.NFC()
        tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace()
        tokenizer.train_from_iterator(texts, trainer)
        spec = json.loads(tokenizer.to_str())
        # Byte fallback: the 256 byte pieces join the vocabulary after the learned ones.
        if model == "bpe":
            vocab = spec["model"]["vocab"]
            vocab.update({piece: len(vocab) + i for i, piece in enumerate(_BYTES)})
        else:
            spec["model"]["vocab"] += [[piece, 0.0] for piece in _BYTES]
        spec["model"]["byte_fallback"] = True
        spec["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": _MARKER}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
        return cls(json.dumps(spec, ensure_ascii=False))

    @staticmethod
    def _normalise(text: str, name: str = "text") -> str:
        _validate.text(name, text, where="SubwordTokenizer")
        return " ".join(unicodedata.normalize("NFC", text).split())

    def __len__(self) -> int:
        return len(self._itos)

    @property
    def pieces(self) -> list[str]:
        """The pieces in id order (the specials, the learned pieces, then the 256 byte pieces)."""
        return list(self._itos)

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merges BPE learned, in the order it learned them (empty for unigram)."""
        model = json.loads(self._tokenizer.to_str())["model"]
        return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model.get("merges", [])]

    def vocab(self) -> Vocab:
        """The :class:`~transformer_edu.data.vocab.Vocab` of the pieces, with the same ids."""
        return Vocab(self._itos[len(Vocab.SPECIALS):])

    def tokenize(self, text: str) -> list[str]:
        """The pieces of ``text``: ``"고양이가 생선을"`` → e.g. ``["▁고양이", "가", "▁생선", "을"]``."""
        return self._tokenizer.encode(self._normalise(text), add_special_tokens=False).tokens

    def detokenize(self, tokens: str | Sequence[str]) -> str:
        """Written text from pieces (a list, or a string of space-separated pieces)."""
        tokens = tokens.split() if isinstance(tokens, str) else list(tokens)
        ids = []
        for token in tokens:
            index = self._tokenizer.token_to_id(token)
            if index is None:
                raise ValueError(f"SubwordTokenizer.detokenize: {token!r} is not a piece of this vocabulary")
            ids.append(index)
        return self._tokenizer.decode(ids, skip_special_tokens=True)

    def to_dict(self) -> dict:
        """JSON-ready data for a checkpoint: ``{"type": "subword", "json": <the library's JSON>}``."""
        return {"type": "subword", "json": self._tokenizer.to_str()}

    @classmethod
    def from_dict(cls, spec: dict) -> SubwordTokenizer:
        """Rebuild a tokenizer saved by :meth:`to_dict`."""
        if not isinstance(spec, dict) or spec.get("type") != "subword" or not isinstance(spec.get("json"), str):
            raise ValueError(f"SubwordTokenizer.from_dict: expected {{'type': 'subword', 'json': ...}}, "
                             f"got {str(spec)[:80]}")
        return cls(spec["json"])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubwordTokenizer) and self._tokenizer.to_str() == other._tokenizer.to_str()

    def __repr__(self) -> str:
        return f"SubwordTokenizer({len(self)} pieces, {len(self.merges)} merges)"


def tokenizer_from_dict(spec: dict | None):
    """The tokenizer a checkpoint stored: a :class:`SubwordTokenizer`, the toy grammar's
    :class:`~transformer_edu.data.tokenizer.KoreanTokenizer` (no ``"type"``), or ``None``."""
    from .tokenizer import KoreanTokenizer

    if spec is None:
        return None
    if isinstance(spec, dict) and spec.get("type") == "subword":
        return SubwordTokenizer.from_dict(spec)
    return KoreanTokenizer.from_dict(spec)
