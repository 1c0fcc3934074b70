"""The export command line, ``python -m transformer_edu.export``, run as a user runs it: what it
refuses before any work, and that a failed export leaves nothing behind. (The exported files
themselves: test_export.py.)"""

import subprocess
import sys
import textwrap

import pytest

from cli_support import assert_refused, command, environment, snapshot
from transformer_edu import Transformer, TransformerConfig
from transformer_edu.data import SubwordTokenizer
from transformer_edu.translation.translator import Translator

INSTALL = ('the ONNX export needs {missing}, which the package\'s export extra installs: pip install '
           '"transformer_edu[export]" (from a clone of the repository: pip install -e ".[export]")')


def run_as_module(*args, prelude: str) -> subprocess.CompletedProcess:
    """``python -m transformer_edu.export ARGS`` after ``prelude`` (which takes a package away, or breaks a step)."""
    code = textwrap.dedent(prelude) + textwrap.dedent("""
        import runpy
        sys.argv = ["python -m transformer_edu.export", *sys.argv[1:]]
        runpy.run_module("transformer_edu.export", run_name="__main__", alter_sys=True)
    """)
    return subprocess.run([sys.executable, "-c", "import sys\n" + code, *map(str, args)], capture_output=True,
                          text=True, env=environment(), timeout=300)


@pytest.mark.parametrize("missing", [("onnxscript",), ("onnx", "onnxscript")])
def test_a_missing_extra_is_named_with_its_install_line(tmp_path, missing):
    taken = "".join(f"sys.modules[{name!r}] = None\n" for name in missing)  # as if not installed
    process = run_as_module("--out", tmp_path / "onnx", prelude=taken)
    assert_refused(process, INSTALL.format(missing=" and ".join(missing)))
    assert not (tmp_path / "onnx").exists()


def test_a_subword_checkpoint_is_refused_before_any_work(tmp_path):
    tokenizer = SubwordTokenizer.train(["고양이가 생선을 먹었다", "the cat ate the fish"] * 4, 300)
    vocab = tokenizer.vocab()
    model = Transformer(TransformerConfig(len(vocab), len(vocab), d_model=16, n_heads=2, d_ff=32, n_layers=1))
    Translator(model, vocab, vocab, tokenizer, tokenizer).save(tmp_path / "bpe.pt")
    process = command("export", "--checkpoint", tmp_path / "bpe.pt", "--out", tmp_path / "onnx")
    assert_refused(process, f"--checkpoint {tmp_path / 'bpe.pt'}: its tokenizer is a learned subword (BPE) "
                            "vocabulary, and the live page splits text with a word table only, so it cannot be "
                            "exported; export a checkpoint trained with --tokenizer words")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bpe.pt"]


def test_a_failed_export_leaves_nothing_behind(tmp_path):
    """The decoder's export fails after the encoder's was written: neither a new --out nor an old one
    keeps a partial export, and no temporary directory is left."""
    breaks = """
        from transformer_edu.translation import export
        real = export._export_graph
        def failing(graph, args, path, dynamic, opset):
            if path.name == "decoder.onnx":
                raise RuntimeError("the exporter failed")
            real(graph, args, path, dynamic, opset)
        export._export_graph = failing
    """
    process = run_as_module("--out", tmp_path / "new", prelude=breaks)
    assert process.returncode != 0 and "the exporter failed" in process.stderr
    assert list(tmp_path.iterdir()) == []
    old = tmp_path / "old"
    old.mkdir()
    for name in ("encoder.onnx", "decoder.onnx", "vocab.json"):
        (old / name).write_text(f"the earlier {name}", encoding="utf-8")
    before = snapshot(tmp_path)
    process = run_as_module("--out", old, prelude=breaks)
    assert process.returncode != 0 and snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]


def test_bad_arguments_are_named(tmp_path):
    (tmp_path / "a file").write_text("mine", encoding="utf-8")
    (tmp_path / "metrics.json").write_text("{}", encoding="utf-8")
    before = snapshot(tmp_path)
    assert_refused(command("export", "--out", tmp_path / "a file"), f"--out {tmp_path / 'a file'}: it is a file")
    assert_refused(command("export", "--out", tmp_path / "onnx", "--checkpoint", tmp_path / "metrics.json"),
                   "--checkpoint: ", "is not a checkpoint written by python -m transformer_edu.train")
    assert_refused(command("export"), "the following arguments are required: --out")
    assert snapshot(tmp_path) == before and not (tmp_path / "onnx").exists()
