"""A trained model with its vocabularies: sentences in, translations out (Chapter 8).

Example::

    translator = Translator.load("runs/ko-en")
    translator.translate("고양이가 생선을 먹었다")        # 'the cat ate the fish'
    translator.translate(["나는 학교에 간다", "개를 곰이 쫓았다"], beam_size=1)
"""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Sequence

import torch

from .. import _validate
from ..data import (
    KOREAN_TOKENIZER,
    KoreanTokenizer,
    SubwordTokenizer,
    Vocab,
    grammar_problem,
    pad_batch,
    tokenizer_from_dict,
    word_hint,
)
from ..decoding import beam_search, greedy_decode
from ..model import Transformer
from ..training.checkpoint import load_checkpoint, load_model, save_checkpoint

__all__ = ["OutsideGrammarWarning", "Translator", "UnknownWordsError"]


class UnknownWordsError(ValueError):
    """Input words missing from the source vocabulary; ``words`` lists them."""

    def __init__(self, message: str, words: list[str]) -> None:
        super().__init__(message)
        self.words = words


class OutsideGrammarWarning(UserWarning):
    """A sentence the toy grammar's parser cannot read: the model translates it anyway, but
    nothing it learned covers it. ``sentence`` and ``problem`` (the parser's message) say which and why."""

    def __init__(self, message: str, sentence: str, problem: str) -> None:
        super().__init__(message)
        self.sentence, self.problem = sentence, problem


class Translator:
    """Translate sentences with a trained :class:`~transformer_edu.Transformer`.

    Sentences are split into tokens (on whitespace, or by ``src_tokenizer``),
    encoded with ``src_vocab`` (EOS appended, as in training), decoded in
    batches by beam search (or greedy decoding for ``beam_size=1``) and
    turned back into text with ``tgt_vocab`` (and ``tgt_tokenizer``).

    Args:
        model: the trained model; it is used in eval mode.
        src_vocab, tgt_vocab: the :class:`~transformer_edu.data.vocab.Vocab` s it was trained with.
        src_tokenizer: splits written source text into the tokens of ``src_vocab``,
            e.g. :data:`~transformer_edu.data.tokenizer.KOREAN_TOKENIZER`, which splits
            the particles off (고양이가 → 고양이 가), so that learners type
            ordinary Korean, or a :class:`~transformer_edu.data.subword.SubwordTokenizer`
            (Chapter 9), which writes any text with known pieces; ``None`` splits on
            whitespace only.
        tgt_tokenizer: joins the target tokens back into text, e.g. a
            ``SubwordTokenizer`` (``▁the ▁c at`` → ``the cat``); ``None`` joins
            them with spaces.

    See Chapters 8 and 9.
    """

    def __init__(self, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab,
                 src_tokenizer: KoreanTokenizer | SubwordTokenizer | None = None,
                 tgt_tokenizer: SubwordTokenizer | None = None) -> None:
        if not isinstance(model, Transformer):
            raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
        for name, vocab, size in (("src_vocab", src_vocab, model.config.src_vocab_size),
                                  ("tgt_vocab", tgt_vocab, model.config.tgt_vocab_size)):
            if not isinstance(vocab, Vocab):
                raise TypeError(f"{name} must be a Vocab, got {type(vocab).__name__}")
            if len(vocab) != size:
                raise ValueError(f"{name} has {len(vocab)} tokens but the model expects {size}")
        if model.config.pad_id != Vocab.pad_id:
            raise ValueError(
                f"the model's pad_id = {model.config.pad_id} differs from Vocab.pad_id = {Vocab.pad_id}"
            )
        if src_tokenizer is not None and not isinstance(src_tokenizer, (KoreanTokenizer, SubwordTokenizer)):
            raise TypeError(f"src_tokenizer must be a KoreanTokenizer, a SubwordTokenizer or None, "
                            f"got {type(src_tokenizer).__name__}")
        if tgt_tokenizer is not None and not isinstance(tgt_tokenizer, SubwordTokenizer):
            raise TypeError(f"tgt_tokenizer must be a SubwordTokenizer or None, got {type(tgt_tokenizer).__name__}")
        for name, tokenizer, vocab in (("src", src_tokenizer, src_vocab), ("tgt", tgt_tokenizer, tgt_vocab)):
            if isinstance(tokenizer, SubwordTokenizer) and tokenizer.vocab() != vocab:
                raise ValueError(f"{name}_vocab is not the vocabulary of {name}_tokenizer; "
                                 f"build it with {name}_tokenizer.vocab()")
        self.model = model.eval()
        self.src_vocab = src_vocab
        self.tgt_vocab = tgt_vocab
        self.src_tokenizer = src_tokenizer
        self.tgt_tokenizer = tgt_tokenizer

    @classmethod
    def load(cls, path: str | os.PathLike, *, device: str | torch.device = "cpu") -> Translator:
        """Load a checkpoint saved by :meth:`save` or ``python -m transformer_edu.train``.

        Args:
            path: a checkpoint file, or the directory holding ``checkpoint.pt``.
            device: where to put the model.

        Raises:
            FileNotFoundError: nothing at ``path``, or a directory without a checkpoint.
            ValueError: not a checkpoint of this package, or one without vocabularies;
                ``device`` names a device this machine does not have.
        """
        device = _validate.device("device", device)
        checkpoint = load_checkpoint(path, map_location=device)
        extra = checkpoint["extra"]
        if "src_vocab" not in extra or "tgt_vocab" not in extra:
            raise ValueError(
                f"the checkpoint at {str(path)!r} holds no vocabularies (extra has {sorted(extra)}); "
                "save it with Translator.save or save_checkpoint(..., extra={'src_vocab': v.to_dict(), ...})"
            )
        return cls(load_model(checkpoint, map_location=device),
                   Vocab.from_dict(extra["src_vocab"]), Vocab.from_dict(extra["tgt_vocab"]),
                   tokenizer_from_dict(extra.get("src_tokenizer")), tokenizer_from_dict(extra.get("tgt_tokenizer")))

    def save(self, path: str | os.PathLike, *, extra: dict | None = None) -> os.PathLike:
        """Save the model, both vocabularies and the tokenizers to a checkpoint :meth:`load` can read."""
        return save_checkpoint(path, self.model, extra={**(extra or {}), **self.vocabularies()})

    def vocabularies(self) -> dict:
        """The vocabularies and tokenizers as plain data, the way a checkpoint's ``extra`` holds them."""
        vocabs = {"src_vocab": self.src_vocab.to_dict(), "tgt_vocab": self.tgt_vocab.to_dict()}
        for name in ("src_tokenizer", "tgt_tokenizer"):
            if getattr(self, name) is not None:
                vocabs[name] = getattr(self, name).to_dict()
        return vocabs

    def source_tokens(self, sentence: str) -> list[str]:
        """The tokens the model reads for ``sentence`` (before EOS): ``"고양이가 …"`` → ``["고양이", "가", …]``."""
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
        return self.src_tokenizer.tokenize(sentence) if self.src_tokenizer else sentence.split()

    def encode_source(self, sentence: str) -> list[int]:
        """The source ids the model reads for ``sentence``, EOS appended, as in training.

        Raises:
            UnknownWordsError: a word is not known (see :meth:`check_words`).
        """
        self.check_words(sentence)
        return self.src_vocab.encode(" ".join(self.source_tokens(sentence)))

    def output_limit(self, source_length: int) -> int:
        """The default most target tokens for a source of ``source_length`` ids (EOS included).

        The paper's setting, the source length plus 50, capped at the model's
        ``max_len`` positions.
        """
        if isinstance(source_length, bool) or not isinstance(source_length, int) or source_length < 1:
            raise ValueError(f"source_length must be an int >= 1, got {source_length!r}")
        return min(source_length + 50, self.model.config.max_len)

    def _known_words(self) -> list[str]:
        """What a user may type: written words whose tokens are all known, and the other tokens."""
        if not isinstance(self.src_tokenizer, KoreanTokenizer):
            return [t for t in self.src_vocab.itos if t not in Vocab.SPECIALS]
        tokenizer = self.src_tokenizer
        written = [w for w, tokens in tokenizer.splits.items() if all(t in self.src_vocab for t in tokens)]
        parts = set(tokenizer.particles) | set(tokenizer.stems) | set(Vocab.SPECIALS)
        return written + [t for t in self.src_vocab.itos if t not in parts]

    def check_words(self, sentence: str) -> None:
        """Raise :class:`UnknownWordsError` naming the unknown words (as written) and similar known ones."""
        if isinstance(self.src_tokenizer, SubwordTokenizer):
            return  # any text is written with known pieces (byte fallback)
        if self.src_tokenizer is None:
            unknown = self.src_vocab.unknown_tokens(sentence)
        else:
            words = self.src_tokenizer.words(sentence)
            unknown = list(dict.fromkeys(w for w in words if self.src_vocab.unknown_tokens(
                " ".join(self.src_tokenizer.tokenize(w)))))
        if not unknown:
            return
        known = self._known_words()
        hints = []
        for word in unknown:
            rule = word_hint(word)  # 너가 → 네가, polite endings
            if rule:
                hints.append(f"{word!r} ({rule})")
                continue
            same_start = [k for k in known if k[0] == word[0]]  # Korean puts the stem first: 곰가 → 곰이
            close = (difflib.get_close_matches(word, same_start, n=3, cutoff=0.5)
                     or difflib.get_close_matches(word, known, n=3, cutoff=0.5))
            hints.append(f"{word!r} (did you mean {' or '.join(map(repr, close))}?)" if close else repr(word))
        raise UnknownWordsError(
            f"unknown word{'s' if len(unknown) > 1 else ''} in {sentence!r}: {', '.join(hints)}. "
            f"The model knows only the {len(known)} words of its training data.", unknown
        )

    def grammar_problem(self, sentence: str) -> str | None:
        """Why ``sentence`` is outside the grammar the model learned, or ``None``.

        Only a translator whose source tokenizer is the toy grammar's
        (:data:`~transformer_edu.data.tokenizer.KOREAN_TOKENIZER`, as the shipped model
        and ``train_task("ko-en")`` have) knows that grammar; for any other
        this is always ``None``. See :func:`~transformer_edu.data.grammar.grammar_problem`.
        """
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
        if self.src_tokenizer != KOREAN_TOKENIZER:
            return None
        return grammar_problem(sentence)

    def translate(
        self,
        sentences: str | Sequence[str],
        *,
        beam_size: int = 4,
        length_penalty: float = 0.6,
        max_len: int | None = None,
        batch_size: int = 128,
        warn_outside_grammar: bool = True,
    ) -> str | list[str]:
        """Translate one sentence or a list of sentences.

        Args:
            sentences: a ``str`` (then a ``str`` is returned) or a list of ``str``
                (then a list of the same length is returned).
            beam_size: beams K; 1 means greedy decoding.
            length_penalty: GNMT's α, see :func:`~transformer_edu.decoding.beam_search`.
            max_len: the most target tokens per sentence, EOS included. The
                default is the paper's, :meth:`output_limit`: the source
                length plus 50 (the longest source of the batch, its EOS
                counted), capped at the model's ``max_len`` positions, which
                the positional encoding covers; the book's ko-en model has
                ``max_len`` = 128, so the cap only bites for sources longer
                than 77 tokens.
            batch_size: sentences decoded together.
            warn_outside_grammar: warn about sentences outside the grammar;
                ``False`` for an experiment that feeds such input on purpose
                (shuffled words, a bag of tokens).

        Raises:
            UnknownWordsError: (a ``ValueError``) a sentence holds a word the
                model never saw; the message suggests similar known words.

        Warns:
            OutsideGrammarWarning: a sentence is made of known words but lies
                outside the grammar the model learned (:meth:`grammar_problem`);
                it is still translated, and the warning says why its
                translation may be wrong.
        """
        single = isinstance(sentences, str)
        batch = [sentences] if single else list(sentences)
        for i, sentence in enumerate(batch):
            if not isinstance(sentence, str):
                raise TypeError(f"sentences[{i}] must be a str, got {type(sentence).__name__}")
            if not sentence.split():
                raise ValueError(f"sentences[{i}] is empty; there is nothing to translate")
        if max_len is not None and (isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1):
            raise ValueError(f"max_len must be an int ≥ 1 or None, got {max_len!r}")
        encoded = [self.encode_source(s) for s in batch]  # every word checked before any decoding
        for sentence in dict.fromkeys(batch) if warn_outside_grammar else ():
            problem = self.grammar_problem(sentence)
            if problem:
                warnings.warn(OutsideGrammarWarning(
                    f"{sentence!r} is outside the grammar the model learned: {problem}. It is translated "
                    "anyway, but nothing the model learned covers it", sentence, problem), stacklevel=2)
        device = next(self.model.parameters()).device
        outputs: list[str] = []
        for start in range(0, len(batch), batch_size):
            src = pad_batch(encoded[start:start + batch_size], Vocab.pad_id, device)  # (B, S)
            steps = max_len or self.output_limit(src.shape[1])
            ids = dict(max_len=steps, bos_id=Vocab.bos_id, eos_id=Vocab.eos_id, unk_id=Vocab.unk_id)
            if beam_size == 1:
                tokens = greedy_decode(self.model, src, **ids)  # (B, L)
            else:
                tokens, _ = beam_search(self.model, src, beam_size=beam_size, length_penalty=length_penalty, **ids)
            decoded = (self.tgt_vocab.decode(row) for row in tokens.cpu())
            outputs.extend(self.tgt_tokenizer.detokenize(text) if self.tgt_tokenizer else text for text in decoded)
        return outputs[0] if single else outputs

    def __repr__(self) -> str:
        c = self.model.config
        return (f"Translator(d_model={c.d_model}, n_layers={c.n_layers}, "
                f"src_vocab={len(self.src_vocab)} tokens, tgt_vocab={len(self.tgt_vocab)} tokens)")
