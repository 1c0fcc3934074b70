"""The trained ko-en translator shipped in transformer_edu/assets/ko_en (transformer_edu.translation.pretrained)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

import pytest
import torch

from transformer_edu import data, metrics
from transformer_edu.translation import pretrained
from transformer_edu.training.checkpoint import CHECKPOINT_NAME
from transformer_edu.training.recipes import RECIPES

REPO_ROOT = Path(__file__).resolve().parents[2]
STALE = f"The shipped checkpoint is out of date; regenerate it with: {pretrained.REBUILD_COMMAND}"


@pytest.fixture(scope="module")
def stored() -> dict:
    # weights_only=True: the file must hold nothing but tensors and plain values
    return torch.load(pretrained.asset_path(), map_location="cpu", weights_only=True)


@pytest.fixture(scope="module")
def translator():
    return pretrained.pretrained_translator("cpu")


def test_asset_is_small_and_where_the_package_looks():
    path = pretrained.asset_path()
    assert path == pretrained.ASSET_DIR / CHECKPOINT_NAME
    assert path.stat().st_size <= 5 * 2**20


def test_asset_loads_with_weights_only_and_holds_the_model_only(stored):
    assert stored["format_version"] == 2 and stored["kind"] == "model"
    assert set(stored) == {"format_version", "kind", "torch_version", "config", "model", "extra"}  # no optimizer
    assert all(t.dtype == torch.float32 for t in stored["model"].values() if t.is_floating_point())
    weights = sum(t.numel() * t.element_size() for t in stored["model"].values())
    assert pretrained.asset_path().stat().st_size < 1.1 * weights  # measured: 1.04 ×
    extra = stored["extra"]
    assert extra["task"] == "ko-en"
    assert extra["made_with"] == ("python -m transformer_edu.train --task ko-en --seed 0 --data-seed 0 --device cpu "
                                  "--threads 1 --quiet --out <tmp>")


def test_asset_matches_the_current_grammar_and_recipe(stored):
    splits = data.toy_translation_splits(0)
    extra = stored["extra"]
    assert extra["data_fingerprint"] == pretrained.data_fingerprint(0), STALE
    assert extra["src_vocab"] == data.Vocab.build([src for src, _ in splits["train"]]).to_dict(), STALE
    assert extra["tgt_vocab"] == data.Vocab.build([tgt for _, tgt in splits["train"]]).to_dict(), STALE
    assert extra["recipe"] == asdict(RECIPES["ko-en"]), STALE
    config = stored["config"]
    model = RECIPES["ko-en"].model
    assert {**config, "src_vocab_size": 4, "tgt_vocab_size": 4} == model.to_dict(), STALE  # all but the vocabularies
    assert (config["src_vocab_size"], config["tgt_vocab_size"]) == (len(extra["src_vocab"]["itos"]),
                                                                   len(extra["tgt_vocab"]["itos"]))
    assert extra["src_tokenizer"] == data.korean_tokenizer_spec(), STALE
    assert pretrained.asset_problems() == [], STALE


def test_asset_problems_names_what_changed(monkeypatch):
    real = data.toy_translation_splits

    def other_grammar(seed=0, **kwargs):
        splits = real(seed, **kwargs)
        return {**splits, "train": splits["train"][:-1] + [("곰이 빵을 먹었다", "the bear ate the new bread")]}

    monkeypatch.setattr(data, "toy_translation_splits", other_grammar)
    problems = pretrained.asset_problems()
    assert any("data_fingerprint" in p for p in problems) and any("tgt_vocab" in p for p in problems)
    assert not any("src_tokenizer" in p for p in problems)
    monkeypatch.setattr(data, "korean_tokenizer_spec", lambda: {"splits": {}})
    assert any("src_tokenizer" in p for p in pretrained.asset_problems())


def test_stored_metrics_include_the_out_of_distribution_split(stored):
    metrics = stored["extra"]["metrics"]
    assert metrics["exact_match"] >= 0.99 and metrics["test_size"] == 300
    assert metrics["ood"]["size"] == 200 and 0 <= metrics["ood"]["exact_match"] < metrics["exact_match"]


TRAINING_CPU_BUDGET_S = 150
"""The target for training the shipped translator, in CPU time of the training process (one
thread), not wall time, which depends on what else the machine runs."""


def test_the_shipped_translator_trained_within_the_cpu_time_budget(stored):
    seconds = stored["extra"]["metrics"]["train_cpu_seconds"]
    assert seconds <= TRAINING_CPU_BUDGET_S
    readme = (REPO_ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert f"≤ {TRAINING_CPU_BUDGET_S} s" in readme and f"{seconds:.0f} s of CPU time" in readme


def test_translates_the_running_examples(translator):
    for korean, english in data.RUNNING_EXAMPLES:
        assert translator.translate(korean, beam_size=1) == english
        assert translator.translate(korean) == english  # beam search, the default
    assert data.RUNNING_EXAMPLES == (("나는 학교에 간다", "I go to school"),
                                     ("고양이가 생선을 먹었다", "the cat ate the fish"))


@pytest.fixture(scope="module")
def held_out_pairs():
    return data.toy_translation_splits(0)["test"]


def test_exact_match_on_the_held_out_test_split(translator, held_out_pairs):
    sources, references = map(list, zip(*held_out_pairs))
    outputs = translator.translate(sources, beam_size=1)
    assert metrics.exact_match(outputs, references) >= 0.99
    written = translator.translate([data.detokenize_korean(s) for s in sources], beam_size=1)
    assert written == outputs  # learners type 고양이가, the model reads 고양이 가


def _variants(pairs, change):
    """(variant, its rule translation, the original's translation) for each sentence ``change`` applies to."""
    out = []
    for korean, english in pairs:
        try:
            variant = change(korean)
        except ValueError:  # no clause to change
            continue
        out.append((variant, data.translate_by_rule(variant), english))
    return out


def test_swapping_the_particles_swaps_the_roles(translator, held_out_pairs):
    swapped = _variants(held_out_pairs, data.swap_roles)  # 고양이 가 개 를 쫓았다 → 고양이 를 개 가 쫓았다
    assert len(swapped) > 100
    sources, references, originals = map(list, zip(*swapped))
    assert all(r != o for r, o in zip(references, originals))  # the roles really changed
    outputs = translator.translate(sources, beam_size=1)
    assert metrics.exact_match(outputs, references) >= 0.97
    # the old roles come back rarely: 1 sentence of 223 with the asset of 2026-11-27 (0 before it)
    assert metrics.exact_match(outputs, originals) <= 0.02
    assert translator.translate("고양이를 개가 쫓았다", beam_size=1) == "the dog chased the cat"
    assert translator.translate("고양이가 개를 쫓았다", beam_size=1) == "the cat chased the dog"


def test_object_first_sentences_translate_like_their_originals(translator, held_out_pairs):
    scrambled = _variants(held_out_pairs, lambda korean: data.reorder(korean, "OSV"))
    assert len(scrambled) > 100
    sources, references, originals = map(list, zip(*scrambled))
    assert references == originals  # the same meaning
    assert metrics.exact_match(translator.translate(sources, beam_size=1), references) >= 0.97


def test_shuffled_tokens_break_the_translation_where_order_carries_meaning(translator, held_out_pairs):
    """Shuffle each sentence's tokens (particles part from their nouns): the roles become a coin toss."""
    animates = {n.korean for n in data.ANIMATES}
    groups = {"compound": [], "two animates": [], "other": []}
    for korean, english in held_out_pairs:
        clauses = data.parse_sentence(korean).clauses
        group = "compound" if len(clauses) > 1 else "two animates" if clauses[0].complement in animates else "other"
        groups[group].append((korean, english))
    rng = random.Random(0)

    def shuffled_exact_match(pairs):
        sources = []
        for korean, _ in pairs:
            tokens = korean.split()
            rng.shuffle(tokens)
            sources.append(" ".join(tokens))
        return metrics.exact_match(translator.translate(sources, beam_size=1, warn_outside_grammar=False),
                                   [english for _, english in pairs])

    assert all(len(pairs) > 30 for pairs in groups.values())
    assert shuffled_exact_match(groups["compound"]) < 0.15  # which clause a noun belongs to is lost
    assert 0.3 < shuffled_exact_match(groups["two animates"]) < 0.7  # who did it to whom: a coin toss
    assert shuffled_exact_match(groups["other"]) > 0.7  # one person or animal and a thing: meaning decides
    assert shuffled_exact_match(held_out_pairs) < 0.6


def test_default_device_and_repr(translator):
    default = pretrained.pretrained_translator()
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert next(default.model.parameters()).device.type == expected
    assert not default.model.training
    assert "d_model=64" in repr(translator)


def test_missing_asset_says_how_to_make_it(monkeypatch, tmp_path):
    monkeypatch.setattr(pretrained, "ASSET_DIR", tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="--rebuild"):
        pretrained.pretrained_translator("cpu")


def test_asset_is_package_data():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["transformer_edu"]
    relative = pretrained.asset_path().relative_to(REPO_ROOT / "transformer_edu").as_posix()
    assert any(Path(relative).match(pattern) for pattern in patterns), (relative, patterns)


def test_command_line_check_reports_current():
    process = subprocess.run([sys.executable, "-m", "transformer_edu.translation.pretrained"], capture_output=True,
                             text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                 filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))})
    assert process.returncode == 0 and process.stdout == "the checkpoint is current\n", process.stderr
    assert "RuntimeWarning" not in process.stderr  # runpy's warning of a module imported twice
