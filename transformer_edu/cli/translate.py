"""Translate sentences with a trained checkpoint from the command line (Chapter 8).

    python -m transformer_edu.cli.translate --checkpoint runs/ko-en "고양이가 생선을 먹었다"

prints one translation per input sentence; with no sentence given, it reads
one sentence per line from standard input. Type Korean as it is written
(고양이가, not 고양이 가): the checkpoint's tokenizer splits it into the model's
tokens (the toy grammar's table, or a learned subword vocabulary, Chapter 9).
With a word table, a sentence with a word the model never saw prints a
message naming it (and similar known words) on standard error, and the exit
code is 2; a subword vocabulary writes any word with pieces it knows. A sentence of known words that lies outside the
grammar the model learned is still translated, with a note on standard error
that says why its translation may be wrong.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import torch

from ..translation.translator import (
    OutsideGrammarWarning,
    Translator,
    UnknownWordsError,
)

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_edu.cli.translate",
        description="Translate sentences with a checkpoint written by python -m transformer_edu.cli.train.",
    )
    parser.add_argument("sentences", nargs="*",
                        help="sentences to translate, written as usual, e.g. 고양이가 생선을 먹었다 "
                             "(default: read stdin lines)")
    parser.add_argument("--checkpoint", required=True, type=Path,
                        help="the checkpoint file, or the directory holding checkpoint.pt")
    parser.add_argument("--beam-size", type=int, default=4, help="beams K (1 = greedy decoding; default 4)")
    parser.add_argument("--length-penalty", type=float, default=0.6,
                        help="GNMT length penalty α (0 = none; default 0.6)")
    parser.add_argument("--max-len", type=int, default=None,
                        help="most target tokens per sentence (default: the source length + 50, as in the "
                             "paper, within the model's max_len)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.beam_size < 1:
        parser.error(f"--beam-size must be at least 1, got {args.beam_size}")
    if args.length_penalty < 0:
        parser.error(f"--length-penalty must be ≥ 0, got {args.length_penalty}")
    sentences = args.sentences or [line.strip() for line in sys.stdin if line.strip()]
    if not sentences:
        parser.error("no sentence to translate: pass sentences as arguments or on standard input")
    torch.set_num_threads(1)  # one sentence batch of a small model: extra threads do not pay off
    try:
        translator = Translator.load(args.checkpoint, device=args.device)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", OutsideGrammarWarning)
            translations = translator.translate(sentences, beam_size=args.beam_size,
                                                length_penalty=args.length_penalty, max_len=args.max_len)
    except UnknownWordsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for warning in caught:
        if issubclass(warning.category, OutsideGrammarWarning):
            print(f"note: {warning.message}", file=sys.stderr)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    for line in translations:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
