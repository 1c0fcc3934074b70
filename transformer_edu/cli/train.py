"""Train a translator from the command line (Chapters 7 and 9).

    python -m transformer_edu.cli.train --task ko-en --out runs/ko-en

trains the book's recipe for the task, shows a progress bar, saves the
checkpoint ``runs/ko-en/checkpoint.pt`` (read it back with
``Translator.load("runs/ko-en")``) and writes ``runs/ko-en/metrics.json``
with the exact match and BLEU on the held-out test split, decoded with the
recipe's beam search and greedily (for ko-en also on the out-of-distribution
split). Tasks: ``ko-en`` (the toy Korean→English grammar), ``copy`` and
``reverse`` (digit sequences), and ``tsv``, your own corpus (Chapter 9)::

    python -m transformer_edu.cli.train --task tsv --train train.tsv \\
        --valid valid.tsv --tokenizer bpe --vocab-size 8000 --shared-vocab \\
        --out runs/mine

Data-parallel training on N processes (GPUs, or CPU cores with gloo) runs
the same command under ``torchrun``; ``--batch-size`` is then the global
batch, shared out among the processes::

    torchrun --standalone --nproc_per_node 2 -m transformer_edu.cli.train \\
        --task ko-en --out runs/ddp

``python -m transformer_edu.train`` is a short name for this command. The
same run from Python: ``translator, metrics = train_task("ko-en")``
(:mod:`transformer_edu.recipes`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import torch

from ..distributed import close, init_from_env
from ..recipes import RECIPES, train_task
from ..training import AMP_DTYPES

__all__ = ["main"]

# Recipe fields a command-line option overrides: option name → (field, type, help).
_OVERRIDES = {
    "batch-size": ("batch_size", int, "sentence pairs per update, over all processes (the global batch)"),
    "dropout": ("dropout", float, "P_drop of every dropout layer (the paper: 0.1)"),
    "accumulate": ("accumulate", int, "split each process's share of a batch into K micro-batches and add "
                                      "their gradients before the update: the same update with less memory"),
    "tokenizer": ("tokenizer", str, "words: whitespace words (the toy task: the grammar's tokens); "
                                    "bpe: a byte-pair vocabulary learned from the training sentences"),
    "vocab-size": ("vocab_size", int, "the most pieces of a bpe vocabulary, counting 4 specials and 256 "
                                      "byte pieces (default 8000)"),
    "d-model": ("d_model", int, "model width"),
    "n-layers": ("n_layers", int, "encoder and decoder layers"),
    "n-heads": ("n_heads", int, "attention heads"),
    "d-ff": ("d_ff", int, "width of the feed-forward block"),
    "warmup": ("warmup", int, "warm-up updates of the learning-rate schedule"),
    "max-len": ("max_len", int, "the longest sentence in tokens (longer training pairs are left out)"),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_edu.cli.train",
        description="Train the book's Transformer, save a checkpoint and test it. Run it under "
                    "torchrun --nproc_per_node N for data-parallel training on N processes.",
    )
    parser.add_argument("--task", choices=sorted(RECIPES), default="ko-en",
                        help="ko-en: the toy Korean→English grammar; copy / reverse: digit sequences; "
                             "tsv: your own corpus (--train, --valid, --test)")
    parser.add_argument("--out", required=True, type=Path,
                        help="directory for checkpoint.pt and metrics.json (created if missing)")
    parser.add_argument("--train", type=Path, default=None,
                        help="--task tsv: the training pairs, one 'source<TAB>target' per line (UTF-8)")
    parser.add_argument("--valid", type=Path, default=None, help="--task tsv: the validation pairs")
    parser.add_argument("--test", type=Path, default=None,
                        help="--task tsv: the test pairs (default: measure on the validation pairs)")
    parser.add_argument("--metrics-json", type=Path, default=None,
                        help="where to write the metrics (default: OUT/metrics.json)")
    parser.add_argument("--epochs", type=int, default=None, help="override the recipe's number of epochs")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="stop after this many updates (without --epochs, as many epochs as they take)")
    for option, (_, kind, text) in _OVERRIDES.items():
        parser.add_argument(f"--{option}", type=kind, default=None, help=f"{text} (default: the task's recipe)",
                            choices=("words", "bpe") if option == "tokenizer" else None)
    parser.add_argument("--shared-vocab", action="store_true",
                        help="one vocabulary for both languages and one embedding matrix, as in the paper")
    parser.add_argument("--resume", action="store_true",
                        help="go on from OUT/checkpoint.pt (written by an earlier run), under any number of processes")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights, dropout and batch order")
    parser.add_argument("--data-seed", type=int, default=0, help="seed of the generated data and its splits")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cpu or cuda (default: cuda when available)")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads for PyTorch, per process (default 1: the models are small, and extra "
                             "threads slow training down badly on a busy machine)")
    parser.add_argument("--amp", choices=sorted(AMP_DTYPES), default=None,
                        help="mixed precision: train and decode under bfloat16 or float16 autocast (float16 with "
                             "a GradScaler, for GPUs without bfloat16 such as Colab's T4); default float32")
    parser.add_argument("--no-test", action="store_true",
                        help="train and save only: do not translate the test split at the end")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    for name in ("epochs", "max_steps", "threads"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.task == "tsv" and (args.train is None or args.valid is None):
        parser.error("--task tsv needs --train FILE and --valid FILE")
    if args.task != "tsv" and (args.train or args.valid or args.test):
        parser.error(f"--train, --valid and --test are for --task tsv, not --task {args.task}")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda was asked for, but PyTorch sees no CUDA GPU")
    changes = {field: getattr(args, option.replace("-", "_")) for option, (field, _, _) in _OVERRIDES.items()}
    changes = {field: value for field, value in changes.items() if value is not None}
    if args.shared_vocab:
        changes["shared_vocab"] = True
    try:
        recipe = replace(RECIPES[args.task], **changes)
    except ValueError as error:
        parser.error(str(error))
    checkpoint = args.out / "checkpoint.pt"
    if args.resume and not checkpoint.is_file():
        parser.error(f"--resume: there is no {checkpoint} to go on from")
    torch.set_num_threads(args.threads)
    world = init_from_env(args.device)
    device = f"cuda:{world.local_rank}" if args.device == "cuda" and world.distributed else args.device
    try:
        _, metrics = train_task(args.task, recipe=recipe, epochs=args.epochs, seed=args.seed,
                                data_seed=args.data_seed, device=device, progress=not args.quiet, out=args.out,
                                amp=args.amp, train=args.train, valid=args.valid, test=args.test,
                                max_steps=args.max_steps, resume=checkpoint if args.resume else None, world=world,
                                measure=not args.no_test)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        close(world)
    if not world.is_main:
        return 0
    metrics_path = args.metrics_json or args.out / "metrics.json"
    metrics_path.parent.mkdir(parents=True, exist_ok=True)
    metrics_path.write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.no_test:
        print(f"{args.task}: {metrics['steps']} updates on {world.size} process{'es' if world.size > 1 else ''}, "
              f"train loss {metrics['history']['train_loss'][-1]:.3f}; not tested (--no-test); checkpoint in "
              f"{args.out}")
        return 0
    print(f"{args.task}: exact match {metrics['exact_match']:.1%}, BLEU {metrics['bleu']:.1f} on "
          f"{metrics['test_size']} {metrics['test_split']} sentences after {metrics['steps']} updates on "
          f"{world.size} process{'es' if world.size > 1 else ''}; trained in {metrics['train_seconds']:.0f} s "
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
