"""Check the shipped ko-en translator, or rebuild it (Chapter 8).

    python -m transformer_edu.cli.pretrained            # is the checkpoint current?
    python -m transformer_edu.cli.pretrained --rebuild  # retrain it and its ONNX export

(see :mod:`transformer_edu.translation.pretrained`).
"""

from __future__ import annotations

import argparse
import sys

from ..checkpoint import CHECKPOINT_NAME
from ..translation.pretrained import (
    ASSET_DIR,
    REBUILD_COMMAND,
    asset_problems,
    rebuild,
)

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_edu.cli.pretrained",
        description="Check the shipped ko-en checkpoint, or rebuild it with the training command line.",
    )
    parser.add_argument("--rebuild", action="store_true", help=f"retrain and overwrite {ASSET_DIR}")
    args = parser.parse_args(argv)
    if args.rebuild:
        metrics = rebuild()
        print(f"wrote {ASSET_DIR / CHECKPOINT_NAME} and its ONNX export: exact match {metrics['exact_match']:.1%}, "
              f"BLEU {metrics['bleu']:.1f} on {metrics['test_size']} test sentences; trained in "
              f"{metrics['train_seconds']:.0f} s ({metrics['train_cpu_seconds']:.0f} s of CPU)")
        return 0
    problems = asset_problems()
    for problem in problems:
        print(problem)
    print("the checkpoint is current" if not problems else f"rebuild it with: {REBUILD_COMMAND}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
