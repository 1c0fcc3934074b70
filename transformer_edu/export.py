"""Export the shipped translator, or a checkpoint, to ONNX for the book's live demo (Chapter 8).

The command ::

    python -m transformer_edu.export --out DIR [--checkpoint PATH]

writes ``encoder.onnx``, ``decoder.onnx`` and ``vocab.json`` into ``DIR``
(see :mod:`transformer_edu.translation.export`). It needs the ``export``
extra (``onnx`` and ``onnxscript``): ``pip install "transformer_edu[export]"``,
or from a clone ``pip install -e ".[export]"``. The files are written into a
temporary directory beside ``DIR`` and moved into place once all three are
done, so a failed export leaves nothing behind. Only a translator with a word
table can be exported (the page splits text with it); one with a learned
subword vocabulary (``--tokenizer bpe``) is refused before any work.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ._cli import EXIT_USAGE, CommandLineError, Parser, os_message, report
from .translation.export import export_onnx, tokenizer_json
from .translation.pretrained import pretrained_translator
from .translation.translator import Translator

__all__ = ["main"]

PROG = "python -m transformer_edu.export"
EXTRA = ("onnx", "onnxscript")  # what the package's [export] extra installs


def _parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Export the shipped ko-en translator (or a checkpoint) to ONNX for the book's live demo: "
                    "encoder.onnx, decoder.onnx and vocab.json. Needs the export extra: "
                    "pip install \"transformer_edu[export]\".",
    )
    parser.add_argument("--out", required=True, type=Path,
                        help="directory for encoder.onnx, decoder.onnx and vocab.json; created if missing")
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="a checkpoint.pt, or the directory python -m transformer_edu.train --out wrote "
                             "(default: the shipped ko-en model)")
    return parser


def _check(args) -> Translator:
    """Everything that can be checked before the export: the extra, --out, the translator."""
    missing = [name for name in EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise CommandLineError(f"the ONNX export needs {' and '.join(missing)}, which the package's export extra "
                               f"installs: pip install \"transformer_edu[export]\" (from a clone of the "
                               f"repository: pip install -e \".[export]\")")
    out = args.out
    existing = next(p for p in (out, *out.parents) if p.exists())
    if not existing.is_dir():
        raise CommandLineError(f"--out {out}: {'it' if existing == out else existing} is a file; give a directory")
    if not os.access(existing, os.W_OK):
        raise CommandLineError(f"--out {out}: cannot write in {existing}")
    try:
        translator = pretrained_translator("cpu") if args.checkpoint is None else Translator.load(args.checkpoint)
    except (FileNotFoundError, ValueError) as error:
        raise CommandLineError(f"--checkpoint: {error}" if args.checkpoint is not None else str(error)) from None
    try:
        tokenizer_json(translator)
    except ValueError:
        raise CommandLineError(f"--checkpoint {args.checkpoint}: its tokenizer is a learned subword (BPE) "
                               "vocabulary, and the live page splits text with a word table only, so it cannot be "
                               "exported; export a checkpoint trained with --tokenizer words") from None
    return translator


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        translator = _check(args)
    except CommandLineError as error:
        report(str(error))
        return EXIT_USAGE
    out = args.out
    parent = next(p for p in out.parents if p.exists())  # the staging directory goes beside --out
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    except OSError as error:
        report(f"--out {out}: {os_message(error)}")
        return EXIT_USAGE
    try:
        written = export_onnx(translator, staging)
        out.mkdir(parents=True, exist_ok=True)
        paths = {}
        for name, path in written.items():  # each file replaces an older one in one step
            paths[name] = out / path.name
            os.replace(path, paths[name])
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for path in paths.values():
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
