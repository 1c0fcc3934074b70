"""The command lines ``python -m transformer_edu.cli.train`` and ``python -m transformer_edu.cli.translate``.

One shortened run of the real ko-en recipe (2 of its epochs) is shared by the
tests; the full recipe's numbers are measured by hand and quoted in the README.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transformer_edu.recipes import RECIPES

REPO_ROOT = Path(__file__).resolve().parents[2]


def run(module, *args, stdin=None):
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))  # the repo, not installed
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-m", f"transformer_edu.cli.{module}", *map(str, args)], input=stdin,
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def ko_en(tmp_path_factory):
    """The ko-en recipe trained for 2 epochs: (output directory, metrics, process)."""
    out = tmp_path_factory.mktemp("ko-en")
    process = run("train", "--task", "ko-en", "--epochs", 2, "--out", out, "--metrics-json", out / "m.json",
                  "--quiet")
    assert process.returncode == 0, process.stderr
    return out, json.loads((out / "m.json").read_text(encoding="utf-8")), process


def test_train_writes_a_checkpoint_and_metrics(ko_en):
    out, metrics, process = ko_en
    assert (out / "checkpoint.pt").is_file() and not (out / "metrics.json").exists()  # --metrics-json wins
    assert "exact match" in process.stdout and str(out) in process.stdout
    for key in ("exact_match", "bleu", "bleu_signature", "train_seconds", "train_cpu_seconds", "test_size",
                "greedy_exact_match", "greedy_bleu", "config", "history"):
        assert key in metrics
    assert metrics["test_size"] == 300 and metrics["epochs_run"] == 2
    assert metrics["ood"]["size"] == 200 and set(metrics["ood"]) >= {"exact_match", "bleu", "greedy_bleu"}
    assert "out of distribution" in process.stdout
    assert metrics["decoding"] == {"method": "beam search", "beam_size": 4, "length_penalty": 0.6}
    recipe = RECIPES["ko-en"]
    assert metrics["config"]["d_model"] == recipe.d_model and metrics["config"]["n_layers"] == recipe.n_layers
    assert metrics["bleu_signature"].startswith("nrefs:1|")


def test_the_real_recipe_learns_within_two_epochs(ko_en):
    _, metrics, _ = ko_en
    losses = metrics["history"]["train_loss"]
    assert losses[1] < 0.5 * losses[0]
    assert metrics["exact_match"] > 0.2 and metrics["bleu"] > 50


def test_translate_prints_one_line_per_sentence(ko_en):
    out, _, _ = ko_en
    process = run("translate", "--checkpoint", out, "고양이가 생선을 먹었다", "나는 학교에 간다")
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    assert len(lines) == 2 and all(line.strip() for line in lines)
    from_stdin = run("translate", "--checkpoint", out / "checkpoint.pt", "--beam-size", "1",
                     stdin="고양이가 생선을 먹었다\n\n나는 학교에 간다\n")
    assert from_stdin.returncode == 0 and len(from_stdin.stdout.splitlines()) == 2
    tokens = run("translate", "--checkpoint", out, "고양이 가 생선 을 먹었다", "나 는 학교 에 간다")
    assert tokens.stdout == process.stdout  # written Korean is split into the tokens the model was trained on


def test_translate_explains_unknown_words_and_exits_with_2(ko_en):
    out, _, _ = ko_en
    process = run("translate", "--checkpoint", out, "고양이도 생선을 먹었다")
    assert process.returncode == 2 and process.stdout == ""
    assert "'고양이도' (did you mean" in process.stderr and "Traceback" not in process.stderr


def test_translate_notes_a_sentence_outside_the_grammar_and_still_translates_it(ko_en):
    out, _, _ = ko_en
    process = run("translate", "--checkpoint", out, "고양이가 먹었다", "고양이가 생선을 먹었다")
    assert process.returncode == 0, process.stderr
    assert len(process.stdout.splitlines()) == 2 and all(process.stdout.splitlines())
    notes = process.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith("note: '고양이가 먹었다' is outside the grammar the model learned")
    assert "먹다 needs an object" in notes[0] and "Traceback" not in process.stderr


@pytest.mark.parametrize("args, message", [
    (["--checkpoint", "no/such/dir", "나는 학교에 간다"], "no checkpoint at"),
    (["--checkpoint", ".", "--beam-size", "0", "나는 학교에 간다"], "--beam-size must be at least 1"),
])
def test_translate_refuses_bad_arguments(args, message):
    process = run("translate", *args)
    assert process.returncode == 2 and message in process.stderr and "Traceback" not in process.stderr


def test_train_the_reverse_task(tmp_path):
    process = run("train", "--task", "reverse", "--epochs", 2, "--out", tmp_path, "--quiet")
    assert process.returncode == 0, process.stderr
    metrics = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["task"] == "reverse" and metrics["test_size"] == 200 and (tmp_path / "checkpoint.pt").is_file()
    losses = metrics["history"]["train_loss"]
    assert len(losses) == 2 and losses[1] < losses[0]
