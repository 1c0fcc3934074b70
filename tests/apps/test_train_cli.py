"""The training command line, ``python -m transformer_edu.train``, run as a user runs it.

One shortened run of the real ko-en recipe (2 of its epochs) and one run on a
written corpus with a learned subword vocabulary are shared by the tests; the
full recipe's numbers are measured by hand and quoted in CONTRIBUTING.md. Every
mistake a user can make is refused before any training, with one line
(``error: …``) and exit code 2, and leaves the files already there as they were.
"""

import json
import re
import shutil

import pytest
import torch

from cli_support import assert_refused, command, snapshot, unwritable_directory
from transformer_edu.training.checkpoint import load_checkpoint, load_training_state
from transformer_edu.training.recipes import RECIPES

TINY = ["--d-model", 16, "--n-heads", 2, "--d-ff", 32, "--n-layers", 1]


@pytest.fixture(scope="module")
def ko_en(tmp_path_factory):
    """The ko-en recipe trained for 2 epochs: (output directory, metrics, process)."""
    out = tmp_path_factory.mktemp("ko-en")
    process = command("train", "--task", "ko-en", "--epochs", 2, "--out", out, "--metrics-json", out / "m.json",
                      "--quiet")
    assert process.returncode == 0, process.stderr
    return out, json.loads((out / "m.json").read_text(encoding="utf-8")), process


def test_train_writes_a_checkpoint_its_training_state_and_metrics(ko_en):
    out, metrics, process = ko_en
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint.pt", "m.json", "resume.pt"]  # --metrics-json wins
    assert "exact match" in process.stdout and str(out) in process.stdout
    for key in ("exact_match", "bleu", "bleu_signature", "train_seconds", "train_cpu_seconds", "test_size",
                "greedy_exact_match", "greedy_bleu", "config", "history"):
        assert key in metrics
    assert metrics["test_size"] == 300 and metrics["epochs_run"] == 2
    assert metrics["ood"]["size"] == 200 and set(metrics["ood"]) >= {"exact_match", "bleu", "greedy_bleu"}
    assert "out of distribution" in process.stdout
    assert metrics["decoding"] == {"method": "beam search", "beam_size": 4, "length_penalty": 0.6}
    model = RECIPES["ko-en"].model
    assert metrics["config"]["d_model"] == model.d_model and metrics["config"]["n_layers"] == model.n_layers
    assert metrics["bleu_signature"].startswith("nrefs:1|")


def test_the_checkpoint_a_user_keeps_is_about_the_size_of_its_weights(ko_en):
    """checkpoint.pt: the model, its config, vocabularies and tokenizer; resume.pt: the rest."""
    out, _, _ = ko_en
    kept = load_checkpoint(out)
    weights = sum(t.numel() * t.element_size() for t in kept["model"].values())
    size = (out / "checkpoint.pt").stat().st_size
    assert size < 1.5 * weights, (size, weights)  # measured: 1.04 ×
    assert set(kept["extra"]) >= {"src_vocab", "tgt_vocab", "src_tokenizer", "task", "recipe", "history"}
    state = load_training_state(out)
    assert state["optimizer"] is not None and len(state["extra"]["averaged"]["weights"]) == 2
    assert (out / "resume.pt").stat().st_size > 5 * size  # Adam's moments, the training weights, the averages


def test_the_real_recipe_learns_within_two_epochs(ko_en):
    _, metrics, _ = ko_en
    losses = metrics["history"]["train_loss"]
    assert losses[1] < 0.5 * losses[0]
    # measured with seeds 0-3 (2026-11-27): exact match 33-45 %, BLEU 49.2-58.0; untrained: 0 and 0
    assert metrics["exact_match"] > 0.2 and metrics["bleu"] > 40


def test_a_run_translates_from_its_directory_without_its_training_state(ko_en, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(ko_en[0], run)
    (run / "resume.pt").write_bytes(b"not read to translate")
    process = command("translate", "--checkpoint", run, "고양이가 생선을 먹었다", "나는 학교에 간다")
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    assert len(lines) == 2 and all(line.strip() for line in lines)
    tokens = command("translate", "--checkpoint", run / "checkpoint.pt", "고양이 가 생선 을 먹었다", "나 는 학교 에 간다")
    assert tokens.stdout == process.stdout  # written Korean is split into the tokens the model was trained on


def test_an_earlier_run_is_not_written_over(ko_en):
    out, _, _ = ko_en
    before = snapshot(out)
    assert_refused(command("train", "--task", "ko-en", "--out", out, "--quiet"),
                   f"--out {out} holds a run already (checkpoint.pt, resume.pt); add --resume to go on with it, "
                   "--overwrite to replace it, or give another --out")
    assert_refused(command("train", "--task", "copy", "--resume", "--out", out),
                   "--task copy: ", "was trained with task 'ko-en'; resume it with that task")
    assert_refused(command("train", "--resume", "--overwrite", "--out", out),
                   "argument --overwrite: not allowed with argument --resume")
    assert_refused(command("train", "--resume", "--d-model", 32, "--out", out),
                   "--d-model 32: ", "was trained with 64; resume it with the same settings")
    assert snapshot(out) == before


def test_overwrite_replaces_a_run_and_resume_goes_on_with_it(tmp_path):
    out = tmp_path / "run"
    first = command("train", "--task", "reverse", *TINY, "--max-steps", 2, "--no-test", "--quiet", "--out", out)
    assert first.returncode == 0, first.stderr
    again = command("train", "--task", "reverse", *TINY, "--max-steps", 3, "--no-test", "--quiet", "--overwrite",
                    "--out", out)
    assert again.returncode == 0 and load_training_state(out)["extra"]["history"]["step"] == [3], again.stderr
    more = command("train", "--task", "reverse", *TINY, "--max-steps", 5, "--no-test", "--quiet", "--resume",
                   "--out", out)
    assert more.returncode == 0 and load_training_state(out)["extra"]["history"]["step"] == [5], more.stderr


def test_resume_without_a_run_to_go_on_with_is_named(tmp_path):
    assert_refused(command("train", "--resume", "--out", tmp_path),
                   f"--resume: nothing to go on with in --out {tmp_path}: it holds no resume.pt")
    (tmp_path / "checkpoint.pt").write_bytes(b"from an earlier version")
    assert_refused(command("train", "--resume", "--out", tmp_path),
                   "it holds checkpoint.pt but no resume.pt", "cannot be resumed")


def test_an_out_that_cannot_hold_the_run_is_refused(tmp_path):
    (tmp_path / "a file").write_text("mine", encoding="utf-8")
    assert_refused(command("train", "--out", tmp_path / "a file"), f"--out {tmp_path / 'a file'} is a file")
    locked = unwritable_directory(tmp_path)
    if locked is None:
        pytest.skip("no directory here refuses this process's files")
    assert_refused(command("train", "--task", "reverse", "--out", locked / "run"),
                   f"--out {locked / 'run'}: cannot write in {locked}")


@pytest.mark.parametrize("args, message", [
    (["--epochs", 0], "--epochs must be at least 1, got 0"),
    (["--max-steps", 0], "--max-steps must be at least 1, got 0"),
    (["--batch-size", 0], "--batch-size must be at least 1, got 0"),
    (["--dropout", 1.5], "--dropout must be in [0, 1), got 1.5"),
    (["--n-heads", 5], "--n-heads = 5 must divide --d-model = 64"),
    (["--max-len", 3], "--max-len 3: shorter than the longest sentence of train (22 tokens with EOS)"),
    (["--train", "x.tsv"], "--train is for --task tsv, not --task ko-en"),
    (["--task", "tsv"], "--task tsv needs --train FILE and --valid FILE"),
    (["--device", "tpu"], "--device must be a device such as 'cpu', 'cuda' or 'cuda:1', got 'tpu'"),
    (["--task", "french"], "argument --task: invalid choice: 'french'"),
    (["--epochs", "two"], "argument --epochs: invalid int value: 'two'"),
])
def test_bad_options_are_named(tmp_path, args, message):
    assert_refused(command("train", *args, "--out", tmp_path / "run", "--quiet"), message)
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_cuda_without_a_gpu_is_named(tmp_path):
    assert_refused(command("train", "--device", "cuda", "--out", tmp_path),
                   "--device is 'cuda', but PyTorch sees no CUDA GPU on this machine; use 'cpu'")


def test_each_option_states_one_default():
    process = command("train", "--help")
    assert process.returncode == 0
    options = re.split(r"\n  (?=-)", process.stdout.split("options:", 1)[1])
    for text in options:
        assert text.count("(default") <= 1, text
    assert "(default: 8000)" in process.stdout and "--src-col" in process.stdout
    assert "python -m transformer_edu.train" in process.stdout.splitlines()[0]


# --------------------------------------------------------------------------
# Your own corpus with a learned subword vocabulary (Chapter 9)
# --------------------------------------------------------------------------

UNSEEN = "강아지가 라면을 먹었다"  # "the puppy ate the ramen": neither noun is in the toy grammar


@pytest.fixture(scope="module")
def own_corpus(tmp_path_factory):
    """Written Korean / English lines (the toy grammar's, as written), with three bad lines and one
    with a third column, trained with --task tsv --tokenizer bpe --shared-vocab: (directory, metrics, process)."""
    from transformer_edu.data import detokenize_korean, toy_translation_splits

    root = tmp_path_factory.mktemp("tsv")
    splits = toy_translation_splits(0)
    for name, size in (("train", 3000), ("valid", 200)):
        lines = [f"{detokenize_korean(src)}\t{tgt}" for src, tgt in splits[name][:size]]
        assert not any(word in line for line in lines for word in ("강아지", "라면"))
        if name == "train":
            lines[10:10] = ["a line without a tab", "\tan empty source", "long\t" + "x" * 1001]
            lines[20] += "\tCC-BY 2.0"
        (root / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = root / "run"
    process = command("train", "--task", "tsv", "--train", root / "train.tsv", "--valid", root / "valid.tsv",
                      "--tokenizer", "bpe", "--vocab-size", 600, "--shared-vocab", "--d-model", 64, "--n-heads", 4,
                      "--d-ff", 256, "--n-layers", 2, "--warmup", 200, "--batch-size", 64, "--epochs", 3, "--out",
                      out, "--quiet")
    assert process.returncode == 0, process.stderr
    return out, json.loads((out / "metrics.json").read_text(encoding="utf-8")), process


def test_own_corpus_reports_its_bad_lines_and_trains_on_the_rest(own_corpus):
    _, metrics, process = own_corpus
    report = process.stdout
    assert "3 of 3003 lines skipped" in report
    for line, why in ((11, "1 column(s)"), (12, "empty source"), (13, "over 1000 characters")):
        assert f"line {line}: {why}" in report
    assert "1 line has more than 2 tab-separated columns, the extra ones ignored (line 21)" in report
    assert metrics["test_split"] == "valid" and metrics["test_size"] == 200  # no --test: measured on valid
    losses = metrics["history"]["train_loss"]
    assert losses[-1] < 0.6 * losses[0]


def test_own_corpus_checkpoint_holds_one_shared_subword_vocabulary(own_corpus):
    from transformer_edu.data import SubwordTokenizer
    from transformer_edu.translation.translator import Translator

    out, metrics, _ = own_corpus
    extra = load_checkpoint(out)["extra"]
    assert extra["src_tokenizer"]["type"] == extra["tgt_tokenizer"]["type"] == "subword"
    assert metrics["config"]["share_embeddings"] and metrics["config"]["tie_output"]
    translator = Translator.load(out)
    assert isinstance(translator.src_tokenizer, SubwordTokenizer) and translator.src_tokenizer == translator.tgt_tokenizer
    assert len(translator.src_vocab) <= 600 and translator.src_vocab == translator.tgt_vocab
    assert translator.model.src_embed.weight is translator.model.tgt_embed.weight is translator.model.output.weight


def test_own_corpus_translates_words_it_never_saw(own_corpus):
    from transformer_edu.translation.translator import Translator

    out, _, _ = own_corpus
    process = command("translate", "--checkpoint", out, UNSEEN, "고양이가 생선을 먹었다")
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    assert len(lines) == 2 and all(line.strip() for line in lines)
    assert "unknown" not in process.stderr
    pieces = Translator.load(out).source_tokens(UNSEEN)
    assert "<unk>" not in pieces and len(pieces) > len(UNSEEN.split())  # split into known pieces


def test_columns_and_a_header_are_options(tmp_path):
    """A Tatoeba-like file: English first, Korean second, an attribution third, a header line."""
    from transformer_edu.data import detokenize_korean, toy_translation_splits

    pairs = toy_translation_splits(0)["train"][:40]
    lines = ["english\tkorean\tby"] + [f"{en}\t{detokenize_korean(ko)}\tCC-BY" for ko, en in pairs]
    (tmp_path / "t.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    process = command("train", "--task", "tsv", "--train", tmp_path / "t.tsv", "--valid", tmp_path / "t.tsv",
                      "--src-col", 1, "--tgt-col", 0, "--skip-header", "--tokenizer", "words", *TINY, "--max-steps", 1,
                      "--no-test", "--quiet", "--out", tmp_path / "run")
    assert process.returncode == 0, process.stderr
    assert "40 lines have more than 2 tab-separated columns, the extra ones ignored (lines 2, 3, 4, 5, 6, …)" \
        in process.stdout
    extra = load_checkpoint(tmp_path / "run")["extra"]
    assert "고양이가" in extra["src_vocab"]["itos"] and "english" not in extra["tgt_vocab"]["itos"]
    assert_refused(command("train", "--task", "tsv", "--train", tmp_path / "t.tsv", "--valid", tmp_path / "t.tsv",
                           "--src-col", 1, "--tgt-col", 1, "--out", tmp_path / "other"),
                   "--src-col and --tgt-col are both 1")


KOREAN = "고양이가 생선을 먹었다\tthe cat ate the fish\n나는 학교에 간다\tI go to school\n"


@pytest.mark.parametrize("content, args, message", [
    (None, [], "--train {T}: no such file"),
    ("no tab\n\n\tempty\n", [], "--train {T} holds no usable source<TAB>target line (line 1: 1 column(s)"),
    ("", [], "--train {T} holds no usable source<TAB>target line (the file is empty)"),
    ("고양이가 생선을 먹었다\tthe cat ate the fish\n", [],
     "--train {T}: holds a single usable sentence pair (line 1): a model cannot learn to translate from one example"),
    (KOREAN.encode("cp949"), [], "--train {T}: line 1 is not UTF-8; it looks like CP949 (EUC-KR), which Korean "
                                 "Windows tools such as Excel write. Convert the file with: iconv -f cp949 -t utf-8 "
                                 "{T} > {D}/train.utf8.tsv"),
    (KOREAN, ["--vocab-size", 100], "--vocab-size 100: too small: a bpe vocabulary of the training text needs at "
                                    "least 277 pieces (4 specials, 256 byte pieces and one for each character of "
                                    "the text)"),
    (KOREAN, ["--tokenizer", "sentencepiece"], "argument --tokenizer: invalid choice: 'sentencepiece'"),
])
def test_own_corpus_refuses_bad_input_clearly(tmp_path, content, args, message):
    train_file = tmp_path / "train.tsv"
    if isinstance(content, str):
        train_file.write_text(content, encoding="utf-8")
    elif content is not None:
        train_file.write_bytes(content)
    (tmp_path / "valid.tsv").write_text(KOREAN, encoding="utf-8")
    before = snapshot(tmp_path)
    process = command("train", "--task", "tsv", "--train", train_file, "--valid", tmp_path / "valid.tsv", *args,
                      *TINY, "--out", tmp_path / "out", "--quiet")
    assert_refused(process, message.format(T=train_file, D=tmp_path))
    assert snapshot(tmp_path) == before and not (tmp_path / "out").exists()  # nothing written, not even --out


def test_a_corpus_with_a_byte_order_mark_and_crlf_line_ends_trains(tmp_path):
    text = "\ufeff" + KOREAN.replace("\n", "\r\n")
    (tmp_path / "train.tsv").write_bytes(text.encode("utf-8"))
    process = command("train", "--task", "tsv", "--train", tmp_path / "train.tsv", "--valid", tmp_path / "train.tsv",
                      "--tokenizer", "words", *TINY, "--max-steps", 1, "--no-test", "--quiet", "--out", tmp_path / "r")
    assert process.returncode == 0, process.stderr
    assert process.stdout.startswith("tsv: 1 updates on 1 process") and "skipped" not in process.stdout
    assert "고양이가" in load_checkpoint(tmp_path / "r")["extra"]["src_vocab"]["itos"]  # no BOM glued to it
