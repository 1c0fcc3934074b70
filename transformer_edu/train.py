"""Train a translator from the command line (Chapters 7 and 9).

The command ::

    python -m transformer_edu.train --task ko-en --out runs/ko-en

trains the book's recipe for the task, shows a progress bar, and after every
epoch saves the run in ``runs/ko-en``: ``checkpoint.pt``, the model to
translate with (``python -m transformer_edu.translate --checkpoint
runs/ko-en``, or ``Translator.load("runs/ko-en")``), and ``resume.pt``, the
state ``--resume`` goes on from. At the end it writes ``metrics.json`` with
the exact match and BLEU on the held-out test split, decoded with the
recipe's beam search and greedily (for ko-en also on the out-of-distribution
split). Tasks: ``ko-en`` (the toy Korean→English grammar), ``copy`` and
``reverse`` (digit sequences), and ``tsv``, your own corpus (Chapter 9)::

    python -m transformer_edu.train --task tsv --train train.tsv \\
        --valid valid.tsv --tokenizer bpe --vocab-size 8000 --shared-vocab \\
        --out runs/mine

Data-parallel training on N processes (GPUs, or CPU cores with gloo) runs
the same command under ``torchrun``; ``--batch-size`` is then the global
batch, shared out among the processes::

    torchrun --standalone --nproc_per_node 2 -m transformer_edu.train \\
        --task ko-en --out runs/ddp

A mistake in the command or its files stops it before any training with one
line, ``error: …``, and exit code 2; an ``--out`` that holds a run is only
written over with ``--resume`` or ``--overwrite``. The same run from Python:
``translator, metrics = train_task("ko-en")``
(:mod:`transformer_edu.training.recipes`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import torch

from . import _validate
from ._cli import EXIT_USAGE, CommandLineError, Parser, defaults_by_task, os_message, report
from .data import read_tsv_corpus
from .training.checkpoint import CHECKPOINT_NAME, RESUME_NAME
from .training.distributed import close, init_from_env
from .training.recipes import RECIPES, SettingError, train_task
from .training.scale import AMP_DTYPES

__all__ = ["main"]

PROG = "python -m transformer_edu.train"
METRICS_NAME = "metrics.json"

# Recipe settings an option overrides: option → (recipe or model field, type, help).
OVERRIDES = {
    "batch-size": ("batch_size", int, "sentence pairs per update, over all processes (the global batch)"),
    "dropout": ("dropout", float, "P_drop of every dropout layer; the paper's is 0.1"),
    "accumulate": ("accumulate", int, "split each process's share of a batch into K micro-batches and add "
                                      "their gradients before the update: the same update with less memory"),
    "tokenizer": ("tokenizer", str, "words: whitespace words (the toy task: the grammar's tokens); "
                                    "bpe: a byte-pair vocabulary learned from the training sentences"),
    "vocab-size": ("vocab_size", int, "--tokenizer bpe: the most pieces, counting 4 specials and 256 byte pieces"),
    "d-model": ("d_model", int, "model width"),
    "n-layers": ("n_layers", int, "encoder and decoder layers"),
    "n-heads": ("n_heads", int, "attention heads"),
    "d-ff": ("d_ff", int, "width of the feed-forward block"),
    "warmup": ("warmup", int, "warm-up updates of the learning-rate schedule"),
    "max-len": ("max_len", int, "the longest sentence in tokens (longer training pairs are left out)"),
}


def _recipe_value(recipe, field: str):
    return getattr(recipe.model, field) if hasattr(recipe.model, field) else getattr(recipe, field)


def _parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Train the book's Transformer, save the run after every epoch and test it. Run it under "
                    "torchrun --nproc_per_node N for data-parallel training on N processes.",
    )
    parser.add_argument("--task", choices=sorted(RECIPES), default="ko-en",
                        help="ko-en: the toy Korean→English grammar; copy / reverse: digit sequences; "
                             "tsv: your own corpus (--train, --valid, --test) (default: ko-en)")
    parser.add_argument("--out", required=True, type=Path,
                        help=f"directory for {CHECKPOINT_NAME} (the model), {RESUME_NAME} (the state --resume "
                             f"reads) and {METRICS_NAME}; created if missing")
    again = parser.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help=f"go on with the run in --out ({RESUME_NAME}), under any number of processes")
    again.add_argument("--overwrite", action="store_true",
                       help="start a new run in an --out that holds one, replacing its files as it saves")
    corpus = parser.add_argument_group("--task tsv: your own corpus, one sentence pair per line, tab-separated, "
                                       "UTF-8")
    corpus.add_argument("--train", type=Path, default=None, help="the training pairs")
    corpus.add_argument("--valid", type=Path, default=None, help="the validation pairs")
    corpus.add_argument("--test", type=Path, default=None,
                        help="the test pairs (default: measure on the validation pairs)")
    corpus.add_argument("--src-col", type=int, default=0, help="the column of the source sentence, from 0 "
                                                               "(default: 0)")
    corpus.add_argument("--tgt-col", type=int, default=1, help="the column of the target sentence (default: 1)")
    corpus.add_argument("--skip-header", action="store_true", help="the first line of each file is a header")
    parser.add_argument("--metrics-json", type=Path, default=None,
                        help=f"where to write the metrics (default: OUT/{METRICS_NAME})")
    parser.add_argument("--epochs", type=int, default=None,
                        help=f"epochs to train (default: the task's recipe, "
                             f"{defaults_by_task({t: r.epochs for t, r in RECIPES.items()})})")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="stop after this many updates (without --epochs, as many epochs as they take)")
    recipe = parser.add_argument_group("the recipe (default: the task's)")
    for option, (field, kind, text) in OVERRIDES.items():
        values = defaults_by_task({task: _recipe_value(r, field) for task, r in RECIPES.items()})
        recipe.add_argument(f"--{option}", type=kind, default=None, help=f"{text} (default: {values})",
                            choices=("words", "bpe") if option == "tokenizer" else None)
    recipe.add_argument("--shared-vocab", action="store_true",
                        help="one vocabulary for both languages and one embedding matrix, as in the paper")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights, dropout and batch order "
                                                            "(default: 0)")
    parser.add_argument("--data-seed", type=int, default=0,
                        help="seed of the generated data and its splits (default: 0)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cpu, cuda or cuda:N (default: cuda when PyTorch sees a GPU, else cpu)")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads for PyTorch, per process; the models are small, and extra threads slow "
                             "training down badly on a busy machine (default: 1)")
    parser.add_argument("--amp", choices=sorted(AMP_DTYPES), default=None,
                        help="mixed precision: train and decode under bfloat16 or float16 autocast (float16 with "
                             "a GradScaler, for GPUs without bfloat16 such as Colab's T4) (default: float32)")
    parser.add_argument("--no-test", action="store_true",
                        help="train and save only: do not translate the test split at the end")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _as_options(message: str) -> str:
    """A recipe's message with its field names written as the options that set them."""
    for option, (field, _, _) in OVERRIDES.items():
        message = re.sub(rf"\b{field}\b", f"--{option}", message)
    return message


def _recipe(args):
    """The task's recipe with the options' changes."""
    changes = {field: getattr(args, option.replace("-", "_")) for option, (field, _, _) in OVERRIDES.items()}
    changes = {field: value for field, value in changes.items() if value is not None}
    if args.shared_vocab:
        changes["shared_vocab"] = True
    try:
        recipe = RECIPES[args.task].changed(**changes)
    except (TypeError, ValueError) as error:
        raise CommandLineError(_as_options(str(error))) from None
    if args.vocab_size is not None and recipe.tokenizer != "bpe":
        report(f"--vocab-size is for --tokenizer bpe; --task {args.task} uses --tokenizer {recipe.tokenizer}, so it "
               "is ignored", "note")
    return recipe


def _check_arguments(args) -> None:
    """Everything the command line alone can tell is wrong, before any file is read."""
    for name in ("epochs", "max_steps", "threads"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise CommandLineError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.task == "tsv":
        missing = [f"--{name} FILE" for name in ("train", "valid") if getattr(args, name) is None]
        if missing:
            raise CommandLineError(f"--task tsv needs {' and '.join(missing)}: your corpus, one "
                                   "'source<TAB>target' pair per line")
        for name in ("src_col", "tgt_col"):
            if getattr(args, name) < 0:
                raise CommandLineError(f"--{name.replace('_', '-')} must be 0 or more, got {getattr(args, name)}")
        if args.src_col == args.tgt_col:
            raise CommandLineError(f"--src-col and --tgt-col are both {args.src_col}; the source and the target "
                                   "are different columns")
    else:
        given = [f"--{name.replace('_', '-')}" for name in ("train", "valid", "test", "skip_header")
                 if getattr(args, name)] + [f"--{name.replace('_', '-')}" for name, default in
                                             (("src_col", 0), ("tgt_col", 1)) if getattr(args, name) != default]
        if given:
            raise CommandLineError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for --task tsv, "
                                   f"not --task {args.task}")
    try:
        _validate.device("--device", args.device)
    except ValueError as error:
        raise CommandLineError(str(error)) from None


def _check_out(args) -> None:
    """Refuse to lose a run: an --out that holds one needs --resume or --overwrite."""
    out = args.out
    if out.exists() and not out.is_dir():
        raise CommandLineError(f"--out {out} is a file; give a directory for the run")
    held = [name for name in (CHECKPOINT_NAME, RESUME_NAME) if (out / name).exists()]
    if args.resume:
        if not (out / RESUME_NAME).is_file():
            why = f"it holds {CHECKPOINT_NAME} but no {RESUME_NAME} (the state to go on from; a run written by " \
                  "an earlier version of transformer_edu cannot be resumed)" if held else f"it holds no {RESUME_NAME}"
            raise CommandLineError(f"--resume: nothing to go on with in --out {out}: {why}")
    elif held and not args.overwrite:
        raise CommandLineError(f"--out {out} holds a run already ({', '.join(held)}); add --resume to go on with "
                               "it, --overwrite to replace it, or give another --out")


def _corpora(args) -> dict:
    """The --task tsv files, read, with the options' columns; ``{}`` for the other tasks."""
    if args.task != "tsv":
        return {}
    corpora = {}
    for name in ("train", "valid", "test"):
        path = getattr(args, name)
        if path is None:
            continue
        try:
            corpora[name] = read_tsv_corpus(path, src_col=args.src_col, tgt_col=args.tgt_col,
                                            skip_header=args.skip_header)
        except (OSError, ValueError) as error:
            raise CommandLineError(f"--{name} {os_message(error)}") from None
    return corpora


def _write_json(path: Path, value: dict) -> None:
    """Write ``value`` as JSON to ``path``, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _summary(args, metrics: dict, processes: int) -> list[str]:
    where = f"{processes} process{'es' if processes > 1 else ''}"
    if args.no_test:
        return [f"{args.task}: {metrics['steps']} updates on {where}, train loss "
                f"{metrics['history']['train_loss'][-1]:.3f}; not tested (--no-test); the run is in {args.out}"]
    lines = [f"{args.task}: exact match {metrics['exact_match']:.1%}, BLEU {metrics['bleu']:.1f} on "
             f"{metrics['test_size']} {metrics['test_split']} sentences after {metrics['steps']} updates on {where}; "
             f"trained in {metrics['train_seconds']:.0f} s ({metrics['train_cpu_seconds']:.0f} s of CPU); the run "
             f"is in {args.out}"]
    if "ood" in metrics:
        lines.append(f"out of distribution (longer sentences than in training, a limit): exact match "
                     f"{metrics['ood']['exact_match']:.1%}, BLEU {metrics['ood']['bleu']:.1f} on "
                     f"{metrics['ood']['size']}")
    if "same_verb" in metrics:
        lines.append(f"one verb in two senses (모자를 쓰고 돈을 썼다): exact match "
                     f"{metrics['same_verb']['exact_match']:.1%} on {metrics['same_verb']['size']}")
    return lines


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        _check_arguments(args)
        recipe = _recipe(args)
        _check_out(args)
        corpora = _corpora(args)
    except CommandLineError as error:
        report(str(error))
        return EXIT_USAGE
    torch.set_num_threads(args.threads)
    world = init_from_env(args.device)
    device = f"cuda:{world.local_rank}" if args.device == "cuda" and world.distributed else args.device
    try:
        _, metrics = train_task(args.task, recipe=recipe, epochs=args.epochs, seed=args.seed,
                                data_seed=args.data_seed, device=device, progress=not args.quiet, out=args.out,
                                amp=args.amp, max_steps=args.max_steps, resume=args.out if args.resume else None,
                                world=world, measure=not args.no_test, **corpora)
    except SettingError as error:
        option = f"--{error.setting.replace('_', '-')}"
        report(f"{option} {error.value}: {_as_options(error.problem)}" if error.value is not None
               else f"{option}: {_as_options(error.problem)}")
        return EXIT_USAGE
    except (FileNotFoundError, ValueError) as error:
        report(str(error))
        return EXIT_USAGE
    finally:
        close(world)
    if not world.is_main:
        return 0
    _write_json(args.metrics_json or args.out / METRICS_NAME, metrics)
    print("\n".join(_summary(args, metrics, world.size)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
