"""Train a translator from the command line (Chapter 7).

    python -m transformer_edu.cli.train --task ko-en --out runs/ko-en

trains the book's recipe for the task, shows a progress bar, saves the
checkpoint ``runs/ko-en/checkpoint.pt`` (read it back with
``Translator.load("runs/ko-en")``) and writes ``runs/ko-en/metrics.json``
with the exact match and BLEU on the held-out test split, decoded with the
recipe's beam search and greedily (for ko-en also on the out-of-distribution
split). Tasks: ``ko-en`` (the toy Korean→English grammar), ``copy`` and
``reverse`` (digit sequences).

The same run from Python: ``translator, metrics = train_task("ko-en")``
(:mod:`transformer_edu.recipes`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from ..recipes import RECIPES, train_task
from ..training import AMP_DTYPES

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_edu.cli.train",
        description="Train the book's Transformer on a toy task, save a checkpoint and test it.",
    )
    parser.add_argument("--task", choices=sorted(RECIPES), default="ko-en",
                        help="ko-en: the toy Korean→English grammar; copy / reverse: digit sequences")
    parser.add_argument("--out", required=True, type=Path,
                        help="directory for checkpoint.pt and metrics.json (created if missing)")
    parser.add_argument("--metrics-json", type=Path, default=None,
                        help="where to write the metrics (default: OUT/metrics.json)")
    parser.add_argument("--epochs", type=int, default=None, help="override the recipe's number of epochs")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights, dropout and batch order")
    parser.add_argument("--data-seed", type=int, default=0, help="seed of the generated data and its splits")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cpu or cuda (default: cuda when available)")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads for PyTorch (default 1: the models are small, and extra threads "
                             "slow training down badly on a busy machine)")
    parser.add_argument("--amp", choices=sorted(AMP_DTYPES), default=None,
                        help="mixed precision: train and decode under bfloat16 or float16 autocast (float16 with "
                             "a GradScaler, for GPUs without bfloat16 such as Colab's T4); default float32")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.epochs is not None and args.epochs < 1:
        _parser().error(f"--epochs must be at least 1, got {args.epochs}")
    if args.threads < 1:
        _parser().error(f"--threads must be at least 1, got {args.threads}")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        _parser().error("--device cuda was asked for, but PyTorch sees no CUDA GPU")
    torch.set_num_threads(args.threads)
    _, metrics = train_task(args.task, epochs=args.epochs, seed=args.seed, data_seed=args.data_seed,
                            device=args.device, progress=not args.quiet, out=args.out, amp=args.amp)
    metrics_path = args.metrics_json or args.out / "metrics.json"
    metrics_path.parent.mkdir(parents=True, exist_ok=True)
    metrics_path.write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.task}: exact match {metrics['exact_match']:.1%}, BLEU {metrics['bleu']:.1f} on "
          f"{metrics['test_size']} test sentences; trained in {metrics['train_seconds']:.0f} s "
          f"({metrics['train_cpu_seconds']:.0f} s of CPU); checkpoint in {args.out}")
    if "ood" in metrics:
        print(f"out of distribution (longer sentences than in training, a limit): exact match "
              f"{metrics['ood']['exact_match']:.1%}, BLEU {metrics['ood']['bleu']:.1f} on {metrics['ood']['size']}")
    if "same_verb" in metrics:
        print(f"one verb in two senses (모자를 쓰고 돈을 썼다): exact match "
              f"{metrics['same_verb']['exact_match']:.1%} on {metrics['same_verb']['size']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
