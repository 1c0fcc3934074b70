"""Translate sentences from the command line (Chapter 8).

The command ::

    python -m transformer_edu.translate "고양이가 생선을 먹었다"
    python -m transformer_edu.translate --checkpoint runs/mine < sentences.txt

translates with the Korean→English model shipped with the package, or with
a checkpoint written by ``python -m transformer_edu.train``, and prints one
line per sentence; with no sentence given, it reads one sentence per line
from standard input (UTF-8; blank lines are skipped).

Type Korean as it is written (고양이가, not 고양이 가): the checkpoint's
tokenizer splits it into the model's tokens (the toy grammar's table, or a
learned subword vocabulary, Chapter 9). A final ``.``, ``?`` or ``!`` that
the model's words do not include (the toy grammar has none) is set aside and
put back at the end of the translation: both languages end a sentence with
the same marks.

A sentence that cannot be translated (a word the model never saw, an empty
one, one longer than the model reads) gets an empty output line and one line
on standard error naming it by its position (``sentence 2``, or ``line 7``
of standard input); the others are translated, and the exit code is 2. A
sentence of known words outside the grammar the model learned is still
translated, with a note on standard error that says why its translation may
be wrong.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from . import _validate
from ._cli import EXIT_USAGE, CommandLineError, Parser, report
from .data import SubwordTokenizer, guess_encoding
from .translation.pretrained import pretrained_translator
from .translation.translator import OutsideGrammarWarning, Translator, UnknownWordsError

__all__ = ["main"]

PROG = "python -m transformer_edu.translate"
FINAL_MARK = re.compile(r"(.*?)\s*([.?!]+)\s*", re.DOTALL)


@dataclass
class Sentence:
    """One sentence to translate, ``where`` it came from, what went wrong with it, and its final mark."""

    where: str
    text: str
    problem: str | None = None
    mark: str = ""


def _parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Translate sentences with the shipped Korean→English model, or with a checkpoint written by "
                    "python -m transformer_edu.train. Prints one line per sentence, an empty one for a sentence "
                    "that cannot be translated (why goes to standard error, and the exit code is 2).",
    )
    parser.add_argument("sentences", nargs="*",
                        help="sentences to translate, written as usual, e.g. 고양이가 생선을 먹었다 "
                             "(default: one per line of standard input)")
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="a checkpoint.pt, or the directory python -m transformer_edu.train --out wrote "
                             "(default: the shipped ko-en model)")
    parser.add_argument("--beam-size", type=int, default=4, help="beams K, 1 = greedy decoding (default: 4)")
    parser.add_argument("--length-penalty", type=float, default=0.6,
                        help="GNMT length penalty α, 0 = none (default: 0.6)")
    parser.add_argument("--max-len", type=int, default=None,
                        help="most target tokens per sentence (default: the source length + 50, as in the "
                             "paper, within the model's max_len)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cpu, cuda or cuda:N (default: cuda when PyTorch sees a GPU, else cpu)")
    return parser


def _check_arguments(args) -> None:
    if args.beam_size < 1:
        raise CommandLineError(f"--beam-size must be at least 1, got {args.beam_size}")
    if not args.length_penalty >= 0:
        raise CommandLineError(f"--length-penalty must be 0 or more, got {args.length_penalty}")
    if args.max_len is not None and args.max_len < 1:
        raise CommandLineError(f"--max-len must be at least 1, got {args.max_len}")
    try:
        _validate.device("--device", args.device)
    except ValueError as error:
        raise CommandLineError(str(error)) from None


def _sentences(args) -> list[Sentence]:
    """The sentences of the command line, or of standard input's lines (blank lines skipped)."""
    if args.sentences:
        return [Sentence(f"sentence {i}", text.strip(), None if text.strip() else "it is empty; nothing to translate")
                for i, text in enumerate(args.sentences, start=1)]
    if sys.stdin.isatty():
        end = "Ctrl-Z, then Enter" if os.name == "nt" else "Ctrl-D"
        report(f"reading sentences from standard input, one per line ({end} to end)", "note")
    sentences = []
    for number, raw in enumerate(sys.stdin.buffer, start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):  # a byte-order mark
            raw = raw[3:]
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            encoding = guess_encoding(raw)
            looks = f"; it looks like {'CP949 (EUC-KR)' if encoding == 'cp949' else encoding.upper()}" \
                if encoding else ""
            sentences.append(Sentence(f"line {number}", "", f"it is not UTF-8{looks}; convert the input with "
                                                            f"iconv -f {encoding or 'ENCODING'} -t utf-8"))
            continue
        if text:
            sentences.append(Sentence(f"line {number}", text))
    return sentences


def _load(args) -> Translator:
    try:
        if args.checkpoint is None:
            return pretrained_translator(args.device)
        return Translator.load(args.checkpoint, device=args.device)
    except (FileNotFoundError, ValueError) as error:
        raise CommandLineError(f"--checkpoint: {error}" if args.checkpoint is not None else str(error)) from None


def _knows(translator: Translator, text: str) -> bool:
    try:
        translator.check_words(text)
    except UnknownWordsError:
        return False
    return True


def _prepare(translator: Translator, sentence: Sentence) -> None:
    """Set a final mark the model does not know aside, and find what keeps the sentence from translating."""
    if sentence.problem is not None:
        return
    word_table = not isinstance(translator.src_tokenizer, SubwordTokenizer)
    found = FINAL_MARK.fullmatch(sentence.text)
    if word_table and found and found.group(1).strip() and not _knows(translator, sentence.text):
        sentence.text, sentence.mark = found.group(1), found.group(2)
    elif word_table and found and not found.group(1).strip():
        sentence.problem = "it holds only punctuation; nothing to translate"
        return
    try:
        ids = translator.encode_source(sentence.text)
    except UnknownWordsError as error:
        sentence.problem = str(error)
        return
    limit = translator.model.config.max_len
    if len(ids) > limit:
        sentence.problem = (f"it is {len(ids)} tokens long (with the end-of-sentence token), more than the "
                            f"{limit} the model reads (its max_len); split it into shorter sentences")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        _check_arguments(args)
        sentences = _sentences(args)
        if not sentences:
            raise CommandLineError("no sentence to translate: give sentences as arguments, or one per line on "
                                   "standard input")
        torch.set_num_threads(1)  # one sentence batch of a small model: extra threads do not pay off
        translator = _load(args)
        limit = translator.model.config.max_len
        if args.max_len is not None and args.max_len > limit:
            raise CommandLineError(f"--max-len {args.max_len}: the model writes at most {limit} tokens (its max_len)")
    except CommandLineError as error:
        report(str(error))
        return EXIT_USAGE
    for sentence in sentences:
        _prepare(translator, sentence)
        if sentence.problem is not None:
            report(f"{sentence.where}: {sentence.problem}")
    good = [s for s in sentences if s.problem is None]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OutsideGrammarWarning)
        outputs = translator.translate([s.text for s in good], beam_size=args.beam_size,
                                       length_penalty=args.length_penalty, max_len=args.max_len) if good else []
    for warning in caught:
        if issubclass(warning.category, OutsideGrammarWarning):
            report(str(warning.message), "note")
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    translated = dict(zip(map(id, good), outputs))
    for sentence in sentences:
        output = translated.get(id(sentence), "")
        if sentence.problem is None and not output:
            report(f"{sentence.where}: the translation is empty (the model may be undertrained)", "note")
        elif "\ufffd" in output:
            report(f"{sentence.where}: the translation holds bytes that make no whole character, shown as � "
                   "(the model may be undertrained)", "note")
        print(output + sentence.mark if output else output)
    return EXIT_USAGE if len(good) < len(sentences) else 0


if __name__ == "__main__":
    sys.exit(main())
