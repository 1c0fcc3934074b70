"""The book's recipes and the run they make (transformer_edu.training.recipes, Chapters 7 and 9)."""

from dataclasses import asdict, replace
from pathlib import Path

import pytest

from training_support import weights_differ
from transformer_edu import TransformerConfig
from transformer_edu.data import read_tsv_corpus
from transformer_edu.training.checkpoint import load_checkpoint, load_training_state
from transformer_edu.training.recipes import (
    RECIPES,
    Recipe,
    SettingError,
    recipe_differences,
    recipe_model,
    task_splits,
    train_task,
)

pytestmark = pytest.mark.usefixtures("one_thread")
QUIET = dict(progress=False, log=lambda message: None)
SMALL = dict(d_model=16, n_heads=2, d_ff=32, n_layers=1)


def test_a_recipe_holds_its_model_as_a_transformer_config():
    recipe = RECIPES["ko-en"]
    assert isinstance(recipe.model, TransformerConfig)
    model = recipe.model
    assert (model.d_model, model.n_layers, model.dropout, model.max_len) == (64, 2, 0.0, 128)
    changed = recipe.changed(src_positional=False, d_model=32, smoothing=0.0)
    assert changed.model == replace(recipe.model, src_positional=False, d_model=32) and changed.smoothing == 0.0
    assert recipe.model.src_positional is True  # the recipe itself is unchanged
    assert asdict(recipe)["model"]["d_ff"] == 256  # stored as plain values, the model's nested
    assert RECIPES["reverse"] is RECIPES["copy"]


def test_a_recipe_checks_its_settings_once_with_the_configs_words():
    with pytest.raises(ValueError, match="n_heads = 5 must divide d_model = 64"):  # TransformerConfig's own check
        RECIPES["ko-en"].changed(n_heads=5)
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        RECIPES["ko-en"].changed(batch_size=0)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        RECIPES["ko-en"].changed(batch_size=True)
    with pytest.raises(ValueError, match="tokenizer must be one of 'words', 'bpe'; got 'spm'"):
        RECIPES["ko-en"].changed(tokenizer="spm")
    with pytest.raises(ValueError, match="smoothing must be in"):
        RECIPES["ko-en"].changed(smoothing=1.0)
    with pytest.raises(TypeError, match="model must be a TransformerConfig"):
        replace(RECIPES["ko-en"], model={"d_model": 64})
    with pytest.raises(TypeError, match="unexpected keyword argument 'd_modle'"):
        RECIPES["ko-en"].changed(d_modle=64)
    assert recipe_model(d_model=8, n_heads=2).src_vocab_size == 4  # set by train_task from the data


def test_recipe_differences_name_each_setting_but_the_epochs():
    stored = asdict(RECIPES["ko-en"].changed(epochs=3, d_model=32, warmup=100))
    assert recipe_differences(stored, RECIPES["ko-en"]) == [("warmup", 100, 200), ("d_model", 32, 64)]
    assert recipe_differences(asdict(RECIPES["ko-en"]), RECIPES["ko-en"].changed(epochs=30)) == []


def test_train_task_takes_a_changed_recipe():
    recipe = RECIPES["reverse"].changed(src_positional=False, d_model=32, d_ff=64, n_layers=1)
    translator, metrics = train_task("reverse", recipe=recipe, epochs=1, progress=False)
    assert translator.model.config.src_positional is False and translator.model.config.d_model == 32
    assert metrics["recipe"]["model"]["src_positional"] is False and metrics["epochs_run"] == 1
    assert isinstance(RECIPES["reverse"], Recipe) and RECIPES["reverse"].model.src_positional is True
    with pytest.raises(TypeError, match="recipe must be a Recipe"):
        train_task("reverse", recipe={"epochs": 1})


def test_train_task_rewrites_every_source_with_src_transform():
    seen = []

    def reverse_back(source: str) -> str:
        seen.append(source)
        return " ".join(reversed(source.split()))

    recipe = RECIPES["reverse"].changed(**SMALL)
    translator, metrics = train_task("reverse", recipe=recipe, epochs=1, progress=False, src_transform=reverse_back)
    splits = task_splits("reverse")
    assert seen == [src for name in splits for src, _ in splits[name]]  # every split, every source, once
    assert metrics["src_transform"] == "reverse_back" and translator.src_tokenizer is None
    with pytest.raises(TypeError, match="src_transform must be a function"):
        train_task("reverse", recipe=recipe, epochs=1, src_transform="sorted")


def test_train_task_resumes_across_epochs_with_its_averages(tmp_path):
    """A run stopped after 12 steps (an epoch and a half of the shortened copy task) and resumed
    to 40 equals the run of 40 straight: weights, averaged weights, history."""
    recipe = RECIPES["copy"].changed(average_last=3, batch_size=512, d_model=32, d_ff=64, n_layers=1)
    straight, metrics = train_task("copy", recipe=recipe, max_steps=40, out=tmp_path / "a", **QUIET)
    train_task("copy", recipe=recipe, max_steps=12, out=tmp_path / "b", **QUIET)
    resumed, again = train_task("copy", recipe=recipe, max_steps=40, resume=tmp_path / "b", out=tmp_path / "b",
                                **QUIET)
    assert weights_differ(straight.model, resumed.model) == 0.0
    for key in ("train_loss", "valid_exact_match", "step", "tokens"):
        assert again["history"][key] == pytest.approx(metrics["history"][key], rel=1e-12), key
    state = load_training_state(tmp_path / "b")["extra"]
    assert len(state["averaged"]["weights"]) == min(3, metrics["epochs_run"] - 1)
    kept = load_checkpoint(tmp_path / "b")
    assert kept["extra"]["task"] == "copy" and kept["extra"]["recipe"] == again["recipe"]
    assert kept["extra"]["history"]["step"] == again["history"]["step"]


def test_resuming_another_task_or_recipe_is_refused_by_name(tmp_path):
    recipe = RECIPES["copy"].changed(batch_size=512, **SMALL)
    train_task("copy", recipe=recipe, max_steps=2, out=tmp_path, measure=False, **QUIET)
    with pytest.raises(SettingError, match="was trained with task 'copy'; resume it with that task") as error:
        train_task("reverse", recipe=recipe, max_steps=4, resume=tmp_path, **QUIET)
    assert (error.value.setting, error.value.value) == ("task", "reverse")
    with pytest.raises(SettingError, match="was trained with 16; resume it with the same settings") as error:
        train_task("copy", recipe=recipe.changed(d_model=32), max_steps=4, resume=tmp_path, **QUIET)
    assert (error.value.setting, error.value.value) == ("d_model", 32)


def test_a_vocabulary_too_small_for_the_text_is_named_before_training(tmp_path):
    for name, text in (("t.tsv", "고양이가 생선을 먹었다\tthe cat ate the fish\n개가\tthe dog\n"), ("v.tsv", "개가\tthe dog\n")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    recipe = RECIPES["tsv"].changed(vocab_size=100, **SMALL)
    with pytest.raises(SettingError, match=r"too small: a bpe vocabulary of the training text needs at least 2\d\d "
                                           r"pieces") as error:
        train_task("tsv", recipe=recipe, train=tmp_path / "t.tsv", valid=tmp_path / "v.tsv", **QUIET)
    assert (error.value.setting, error.value.value) == ("vocab_size", 100)


def test_a_max_len_too_short_for_the_data_is_named():
    with pytest.raises(SettingError, match="shorter than the longest sentence of train") as error:
        train_task("copy", recipe=RECIPES["copy"].changed(max_len=4, **SMALL), **QUIET)
    assert error.value.setting == "max_len"


def test_corpus_files_are_named_as_the_setting_that_gave_them(tmp_path):
    (tmp_path / "v.tsv").write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(SettingError, match=r"holds a single usable sentence pair \(line 1\)") as error:
        train_task("tsv", train=tmp_path / "v.tsv", valid=tmp_path / "v.tsv", **QUIET)
    assert error.value.setting == "train"
    with pytest.raises(SettingError, match="no such file") as error:
        train_task("tsv", train=tmp_path / "missing.tsv", valid=tmp_path / "v.tsv", **QUIET)
    assert error.value.setting == "train" and error.value.value == str(tmp_path / "missing.tsv")
    with pytest.raises(SettingError, match="task 'tsv' needs a valid file"):
        task_splits("tsv", train=tmp_path / "v.tsv")


def test_corpora_read_with_other_columns_are_taken_as_they_are(tmp_path):
    path = tmp_path / "tatoeba.tsv"
    path.write_text("english\tkorean\tby\nthe cat\t고양이\tann\nthe dog\t개\tbob\n", encoding="utf-8")
    corpus = read_tsv_corpus(path, src_col=1, tgt_col=0, skip_header=True)
    splits = task_splits("tsv", train=corpus, valid=corpus)
    assert splits["train"] == [("고양이", "the cat"), ("개", "the dog")]
    assert splits["skipped"] == [corpus.report()] * 2 and "the extra ones ignored (lines 2, 3)" in corpus.report()


def test_an_out_that_cannot_hold_the_run_is_refused_before_training(tmp_path):
    (tmp_path / "a file").write_text("", encoding="utf-8")
    with pytest.raises(SettingError, match="it is a file; expected a directory") as error:
        train_task("copy", out=tmp_path / "a file", **QUIET)
    assert error.value.setting == "out"
    with pytest.raises(SettingError, match="is a file"):
        train_task("copy", out=tmp_path / "a file" / "run", **QUIET)
