"""The translation command line, ``python -m transformer_edu.translate``, run as a user runs it.

Without ``--checkpoint`` it translates with the shipped ko-en model. One line
per sentence on standard output; a sentence that cannot be translated gets an
empty line there and one line on standard error naming its position, the
others are translated, and the exit code is 2. A mistake in the command line
stops it with one line, ``error: …``, and exit code 2.
"""

import os
import subprocess
import sys

import pytest
import torch

from cli_support import assert_refused, command, environment, snapshot
from transformer_edu.data import SubwordTokenizer, Vocab
from transformer_edu.training.checkpoint import save_training_state
from transformer_edu.translation.pretrained import pretrained_translator
from transformer_edu.translation.translator import Translator

CAT = "고양이가 생선을 먹었다"  # the cat ate the fish


def test_the_shipped_model_translates_by_default():
    process = command("translate", CAT, "나는 학교에 간다")
    assert process.returncode == 0 and process.stderr == "", process.stderr
    assert process.stdout == "the cat ate the fish\nI go to school\n"


def test_a_final_mark_is_read_as_such():
    """The toy grammar has no punctuation: a final . ? or ! is set aside and put back."""
    process = command("translate", f"{CAT}.", "나는 학교에 간다?", "개가 공을 잡았다 !")
    assert process.returncode == 0 and process.stderr == "", process.stderr
    assert process.stdout == "the cat ate the fish.\nI go to school?\nthe dog caught the ball!\n"


def test_one_bad_sentence_does_not_cost_the_others():
    process = command("translate", CAT, "고양이가 피자를 먹었다", "", "나는 학교에 간다", "?")
    assert process.returncode == 2
    assert process.stdout == "the cat ate the fish\n\n\nI go to school\n\n"  # one line per sentence
    errors = process.stderr.splitlines()
    assert errors == [
        "error: sentence 2: unknown word in '고양이가 피자를 먹었다': '피자를' (did you mean '모자를'?). The model "
        "knows only the 141 words of its training data.",
        "error: sentence 3: it is empty; nothing to translate",
        "error: sentence 5: it holds only punctuation; nothing to translate",
    ]


def test_standard_input_errors_name_the_line():
    process = command("translate", "--beam-size", 1, stdin=f"{CAT}\n\n고양이도 생선을 먹었다\r\n나는 학교에 간다\n")
    assert process.returncode == 2
    assert process.stdout == "the cat ate the fish\n\nI go to school\n"  # the blank line 2 is skipped
    assert process.stderr.startswith("error: line 3: unknown word in '고양이도 생선을 먹었다': '고양이도' (did you mean")
    assert len(process.stderr.splitlines()) == 1


def test_standard_input_may_have_a_byte_order_mark_and_crlf():
    process = command("translate", stdin=f"\ufeff{CAT}\r\n나는 학교에 간다\r\n".encode("utf-8"))
    assert process.returncode == 0 and process.stdout == "the cat ate the fish\nI go to school\n", process.stderr


def test_standard_input_in_cp949_is_named_with_its_conversion():
    process = command("translate", stdin=f"{CAT}\n".encode("cp949") + "나는 학교에 간다\n".encode("utf-8"))
    assert process.returncode == 2 and process.stdout == "\nI go to school\n"
    assert process.stderr == ("error: line 1: it is not UTF-8; it looks like CP949 (EUC-KR); convert the input with "
                              "iconv -f cp949 -t utf-8\n")


def test_nothing_to_translate_is_named():
    assert_refused(command("translate", stdin=""), "no sentence to translate: give sentences as arguments, or one "
                                                   "per line on standard input")
    assert_refused(command("translate", stdin="\n  \n"), "no sentence to translate")


def test_a_sentence_longer_than_the_model_reads_is_named():
    long = " ".join(["고양이가"] * 70)  # 140 tokens and EOS: the shipped model reads 128
    process = command("translate", long, CAT)
    assert process.returncode == 2 and process.stdout == "\nthe cat ate the fish\n"
    assert process.stderr == ("error: sentence 1: it is 141 tokens long (with the end-of-sentence token), more than "
                              "the 128 the model reads (its max_len); split it into shorter sentences\n")


def test_a_sentence_outside_the_grammar_is_translated_with_a_note():
    process = command("translate", "고양이가 먹었다", CAT)
    assert process.returncode == 0, process.stderr
    assert len(process.stdout.splitlines()) == 2 and all(process.stdout.splitlines())
    notes = process.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith("note: '고양이가 먹었다' is outside the grammar the model learned")
    assert "먹다 needs an object" in notes[0] and "Traceback" not in process.stderr


@pytest.mark.parametrize("args, message", [
    (["--beam-size", 0], "--beam-size must be at least 1, got 0"),
    (["--length-penalty", -1], "--length-penalty must be 0 or more, got -1.0"),
    (["--max-len", 0], "--max-len must be at least 1, got 0"),
    (["--max-len", 500], "--max-len 500: the model writes at most 128 tokens (its max_len)"),
    (["--device", "gpu"], "--device must be a device such as 'cpu', 'cuda' or 'cuda:1', got 'gpu'"),
    (["--beam-size", "four"], "argument --beam-size: invalid int value: 'four'"),
])
def test_bad_options_are_named(args, message):
    assert_refused(command("translate", *args, CAT), message)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_cuda_without_a_gpu_is_named():
    assert_refused(command("translate", "--device", "cuda", CAT),
                   "--device is 'cuda', but PyTorch sees no CUDA GPU on this machine; use 'cpu'")


def test_what_is_not_a_checkpoint_is_named(tmp_path):
    (tmp_path / "metrics.json").write_text('{"exact_match": 0.99}\n', encoding="utf-8")
    pretrained_translator("cpu").save(tmp_path / "whole.pt")
    whole = (tmp_path / "whole.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(whole[: len(whole) // 3])
    (tmp_path / "empty").mkdir()
    model = pretrained_translator("cpu").model
    save_training_state(tmp_path / "resume.pt", model, torch.optim.Adam(model.parameters()))
    before = snapshot(tmp_path)
    for path, why in ((tmp_path / "metrics.json", "is not a checkpoint written by python -m transformer_edu.train: "
                                                  "it is not a PyTorch file, or it was cut off while it was written"),
                      (tmp_path / "cut.pt", "is not a checkpoint written by python -m transformer_edu.train"),
                      (tmp_path / "empty", "is a directory without checkpoint.pt; give the directory python -m "
                                           "transformer_edu.train --out wrote, or the file itself"),
                      (tmp_path / "missing", "no checkpoint at"),
                      (tmp_path / "resume.pt", "is the state python -m transformer_edu.train keeps to resume training "
                                               "(resume.pt), not a model; give its checkpoint.pt")):
        line = assert_refused(command("translate", "--checkpoint", path, CAT), "--checkpoint: ", str(path), why)
        assert "weights_only" not in line and "arbitrary code" not in line
    assert snapshot(tmp_path) == before


def tiny_translator(tmp_path, favourite: str, tokenizer: SubwordTokenizer | None = None) -> str:
    """A checkpoint of an untrained model that always writes ``favourite`` first (an undertrained model's habit)."""
    if tokenizer is None:
        src, tgt = Vocab.build([CAT]), Vocab.build(["the cat ate the fish"])
    else:
        src = tgt = tokenizer.vocab()
    torch.manual_seed(0)
    from transformer_edu import Transformer, TransformerConfig

    model = Transformer(TransformerConfig(len(src), len(tgt), d_model=16, n_heads=2, d_ff=32, n_layers=1,
                                          max_len=32, share_embeddings=tokenizer is not None))
    with torch.no_grad():
        model.output.bias[tgt.stoi[favourite]] = 100.0
    Translator(model, src, tgt, tokenizer, tokenizer).save(tmp_path / "tiny.pt")
    return tmp_path / "tiny.pt"


def test_an_empty_translation_gets_a_note(tmp_path):
    process = command("translate", "--checkpoint", tiny_translator(tmp_path, "<eos>"), CAT)
    assert process.returncode == 0 and process.stdout == "\n"
    assert process.stderr == "note: sentence 1: the translation is empty (the model may be undertrained)\n"


def test_bytes_that_make_no_character_get_a_note(tmp_path):
    tokenizer = SubwordTokenizer.train([CAT, "the cat ate the fish"] * 4, 300)
    path = tiny_translator(tmp_path, "<0xEA>", tokenizer)
    process = command("translate", "--checkpoint", path, "--max-len", 3, CAT)
    assert process.returncode == 0 and "\ufffd" in process.stdout, process.stderr
    assert process.stderr == ("note: sentence 1: the translation holds bytes that make no whole character, shown as "
                              "� (the model may be undertrained)\n")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_terminal_is_told_how_to_end_its_input():
    controller, terminal = os.openpty()
    process = subprocess.Popen([sys.executable, "-m", "transformer_edu.translate"], stdin=terminal,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment())
    os.close(terminal)
    os.write(controller, f"{CAT}\n".encode("utf-8"))
    os.write(controller, b"\x04")  # Ctrl-D at the start of a line: the end of the input
    out, err = process.communicate(timeout=300)
    os.close(controller)
    assert process.returncode == 0, err.decode()
    assert err.decode() == "note: reading sentences from standard input, one per line (Ctrl-D to end)\n"
    assert out.decode() == "the cat ate the fish\n"
