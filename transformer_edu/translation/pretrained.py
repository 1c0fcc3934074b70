"""The trained Korean→English translator shipped with the package (Chapters 7 and 8).

Chapter 7 trains the toy Korean→English translator; Chapter 8 decodes with it
and should not spend its time training it again. So the package carries the
result, ``transformer_edu/assets/ko_en/checkpoint.pt`` (about 1 MB), which
:func:`pretrained_translator` loads::

    from transformer_edu.translation.pretrained import pretrained_translator

    translator = pretrained_translator()
    translator.translate("고양이가 생선을 먹었다")   # 'the cat ate the fish'
    translator.translate("생선을 고양이가 먹었다")   # the same: the particles carry the roles

How the asset was made
----------------------
One command checks that it is current, and with ``--rebuild`` retrains it
and its ONNX export, on the CPU, in a minute or two::

    python -m transformer_edu.translation.pretrained
    python -m transformer_edu.translation.pretrained --rebuild

It runs the package's training command line with the default ko-en recipe
(:data:`transformer_edu.training.recipes.RECIPES` ``["ko-en"]``), exactly::

    python -m transformer_edu.train --task ko-en --seed 0 --data-seed 0 \\
        --device cpu --threads 1 --quiet --out <a temporary directory>

and then copies the checkpoint the command wrote, the one a user translates
with: the configuration, the float32 weights, the two vocabularies and the
Korean tokenizer's table (not the state to resume training, which the
command keeps beside it and would make the file ten times larger). Into the
checkpoint's ``extra`` it adds the provenance:
the command, the recipe, the training history, the metrics the command
measured (exact match and BLEU, beam search and greedy, on the held-out test
split and on the out-of-distribution split) and a fingerprint of the
generated data. The checkpoint loads with ``torch.load(..., weights_only=True)``.

The same command then exports the new checkpoint to ONNX
(``transformer_edu/assets/ko_en/onnx``, see ``transformer_edu.translation.export``),
the files the HTML book's live translator runs in the reader's browser.

The asset goes stale when the grammar or the tokenizer of
:mod:`transformer_edu.data` or the ko-en recipe changes, and its ONNX export
when it no longer matches the checkpoint: :func:`asset_problems` then lists
what differs, the package's tests fail with these instructions, and the
command above makes fresh ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import torch

from .. import data
from ..training.checkpoint import CHECKPOINT_NAME, load_checkpoint
from .translator import Translator

__all__ = [
    "ASSET_DIR",
    "TASK",
    "asset_path",
    "asset_problems",
    "data_fingerprint",
    "onnx_problems",
    "pretrained_translator",
    "rebuild",
]

TASK = "ko-en"
ASSET_DIR = Path(__file__).resolve().parents[1] / "assets" / "ko_en"
"""The directory of the shipped checkpoint."""

REBUILD_COMMAND = "python -m transformer_edu.translation.pretrained --rebuild"
_TRAIN_ARGS = ("--task", TASK, "--seed", "0", "--data-seed", "0", "--device", "cpu", "--threads", "1", "--quiet")
MADE_WITH = "python -m transformer_edu.train " + " ".join(_TRAIN_ARGS) + " --out <tmp>"
"""The command that trained the shipped checkpoint, as its ``extra["made_with"]`` says."""


def asset_path() -> Path:
    """The file of the shipped checkpoint, ``transformer_edu/assets/ko_en/checkpoint.pt``.

    Raises:
        FileNotFoundError: the package was installed without its data files.
    """
    path = ASSET_DIR / CHECKPOINT_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"the shipped checkpoint is missing: no file at {str(path)!r}. Reinstall the package "
            f"(it is listed as package data in pyproject.toml) or make it with: {REBUILD_COMMAND}"
        )
    return path


def pretrained_translator(device: str | torch.device | None = None) -> Translator:
    """The trained toy Korean→English :class:`~transformer_edu.translation.translator.Translator`.

    Args:
        device: where to put the model; default ``"cuda"`` when a GPU is
            available, else ``"cpu"``.

    Returns:
        The translator, its model in eval mode.

    See Chapter 8.
    """
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return Translator.load(asset_path(), device=device)


def data_fingerprint(seed: int = 0) -> str:
    """SHA-256 of the ko-en pairs (all splits) :mod:`transformer_edu.data` generates now.

    Any change of the grammar, the vocabulary or the splits changes it.
    """
    splits = data.toy_translation_splits(seed)
    text = json.dumps({name: splits[name] for name in sorted(splits)}, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def asset_problems() -> list[str]:
    """What makes the shipped checkpoint out of date; an empty list when it is current.

    Compares its data fingerprint, vocabularies, tokenizer and recipe with
    what :mod:`transformer_edu.data` and :mod:`transformer_edu.training.recipes` give now.
    """
    from ..training.recipes import (
        RECIPES,  # imported here: the recipes are not needed to translate
    )

    extra = load_checkpoint(asset_path())["extra"]
    splits = data.toy_translation_splits(0)
    current = {
        "data_fingerprint": data_fingerprint(0),
        "src_vocab": data.Vocab.build([src for src, _ in splits["train"]]).to_dict(),
        "tgt_vocab": data.Vocab.build([tgt for _, tgt in splits["train"]]).to_dict(),
        "src_tokenizer": data.korean_tokenizer_spec(),
        "recipe": asdict(RECIPES[TASK]),
    }
    problems = []
    for key, value in current.items():
        if extra.get(key) != value:
            problems.append(f"the checkpoint's {key} differs from the one the package gives now")
    return problems + onnx_problems()


def onnx_problems() -> list[str]:
    """What makes the shipped ONNX export (``assets/ko_en/onnx``) differ from the shipped checkpoint."""
    from . import (
        export,  # its onnx imports are lazy: checking needs torch only
    )

    vocab_file = export.ONNX_DIR / export.VOCAB_FILE
    missing = [n for n in (export.ENCODER_FILE, export.DECODER_FILE, export.VOCAB_FILE)
               if not (export.ONNX_DIR / n).is_file()]
    if missing:
        return [f"the ONNX export lacks {', '.join(missing)}"]
    stored = json.loads(vocab_file.read_text(encoding="utf-8"))
    expected = export.vocab_json(pretrained_translator("cpu"))
    if stored.get("model_fingerprint") != expected["model_fingerprint"]:
        return ["the ONNX export was made from another checkpoint"]
    if stored != expected:
        return [f"the ONNX export's {export.VOCAB_FILE} differs from the one the package writes now"]
    return []


def rebuild(out: str | Path = ASSET_DIR) -> dict:
    """Train the ko-en recipe with the command line and write the slim checkpoint to ``out``.

    Returns:
        The metrics the training command measured on the test split.
    """
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "transformer_edu.train", *_TRAIN_ARGS, "--out", tmp]
        package_root = str(Path(__file__).resolve().parents[2])  # this copy of the package, installed or not
        path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
        subprocess.run(command, check=True, env={**os.environ, "PYTHONPATH": path})
        metrics = json.loads((Path(tmp) / "metrics.json").read_text(encoding="utf-8"))
        trained = Translator.load(tmp)
        extra = load_checkpoint(tmp)["extra"]
    kept_metrics = {k: v for k, v in metrics.items() if k not in ("history", "config", "recipe", "failures")}
    if trained.src_tokenizer != data.KOREAN_TOKENIZER:
        raise RuntimeError("the trained checkpoint's tokenizer differs from data.KOREAN_TOKENIZER")
    out.mkdir(parents=True, exist_ok=True)
    trained.save(out / CHECKPOINT_NAME, extra={  # weights, config and vocabularies; no training state
        "task": TASK,
        "recipe": extra["recipe"],
        "history": extra["history"],
        "metrics": kept_metrics,
        "data_fingerprint": data_fingerprint(0),
        "made_with": MADE_WITH,
    })
    from .export import (
        export_onnx,  # the live translator's files, from the checkpoint just written
    )

    export_onnx(Translator.load(out / CHECKPOINT_NAME, device="cpu"), out / "onnx")
    return kept_metrics


def main(argv: list[str] | None = None) -> int:
    """``python -m transformer_edu.translation.pretrained [--rebuild]``: is the shipped checkpoint current?"""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m transformer_edu.translation.pretrained",
        description="Check the shipped ko-en checkpoint and its ONNX export, or rebuild both with the training "
                    "command line (for the package's maintainers).",
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
