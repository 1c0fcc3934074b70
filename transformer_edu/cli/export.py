"""Export the shipped translator, or a checkpoint, to ONNX for the book's live demo (Chapter 8).

    python -m transformer_edu.cli.export --out DIR [--checkpoint PATH]

writes ``encoder.onnx``, ``decoder.onnx`` and ``vocab.json`` (see
:mod:`transformer_edu.translation.export`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..translation.export import export_onnx
from ..translation.pretrained import pretrained_translator
from ..translation.translator import Translator

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_edu.cli.export",
        description="Export the shipped ko-en translator (or a checkpoint) to ONNX for the book's live demo.",
    )
    parser.add_argument("--out", required=True, type=Path, help="directory for encoder.onnx, decoder.onnx, vocab.json")
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="a checkpoint file or directory (default: the shipped translator)")
    args = parser.parse_args(argv)
    if args.checkpoint is None:
        translator = pretrained_translator("cpu")
    else:
        translator = Translator.load(args.checkpoint)
    paths = export_onnx(translator, args.out)
    for path in paths.values():
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
