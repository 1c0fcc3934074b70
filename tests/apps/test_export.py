"""The ONNX export of the shipped translator (transformer_edu.translation.export), run with onnxruntime.

The shipped files in ``transformer_edu/assets/ko_en/onnx`` are what the book's
live translator runs in the browser: their outputs must equal PyTorch's on the
held-out test split, with the masks on and switched off, and greedy decoding
through them must give the Translator's translations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import onnx
import pytest
import torch

import transformer_edu as te
from transformer_edu import data
from transformer_edu.translation import export
from transformer_edu.translation.pretrained import REBUILD_COMMAND, pretrained_translator

if __package__:
    from ..translation_support import natural_inputs, python_tokens
else:
    from translation_support import natural_inputs, python_tokens

TOLERANCE = 1e-4
STALE = f"The shipped ONNX files are out of date; regenerate them with: {REBUILD_COMMAND}"


@pytest.fixture(scope="module")
def translator(one_thread):
    return pretrained_translator("cpu")


@pytest.fixture(scope="module")
def shipped():
    return export.OnnxTranslator(export.ONNX_DIR)


@pytest.fixture(scope="module")
def held_out_pairs():
    return data.toy_translation_splits(0)["test"]


@pytest.fixture(scope="module")
def batch(translator, held_out_pairs):
    """The whole test split as one padded batch, for teacher forcing."""
    pad = data.Vocab.pad_id
    src = data.pad_batch([translator.src_vocab.encode(k) for k, _ in held_out_pairs], pad)  # (B, S)
    tgt = data.pad_batch([[data.Vocab.bos_id] + translator.tgt_vocab.encode(e, add_eos=False)
                          for _, e in held_out_pairs], pad)  # (B, T)
    return src, tgt


def masks(src, tgt, padding: bool, causal: bool):
    """The source and target masks with the padding and causal parts switched on or off."""
    pad = data.Vocab.pad_id
    if padding:
        src_mask = te.padding_mask(src, pad)  # (B, 1, 1, S)
    else:
        src_mask = torch.ones(src.shape[0], 1, 1, src.shape[1], dtype=torch.bool)
    tgt_mask = te.padding_mask(tgt, pad).expand(-1, -1, tgt.shape[1], -1)  # (B, 1, T, T)
    if causal:
        tgt_mask = tgt_mask & te.causal_mask(tgt.shape[1])
    return src_mask, tgt_mask.contiguous()


def pytorch_outputs(model, src, tgt, src_mask, tgt_mask):
    """Memory, logits and every attention map, recorded by the package's record_attention."""
    n_layers = model.config.n_layers
    with torch.no_grad(), te.record_attention(model) as maps:
        memory = model.encode(src, src_mask)
        logits = model.decode(tgt, memory, src_mask, tgt_mask)

    def stack(name):  # (B, N, H, Lq, Lk)
        return torch.stack([maps[name.format(i)] for i in range(n_layers)], dim=1)

    return {
        "memory": memory,
        "encoder_self_attention": stack("encoder.layers.{}.self_attn"),
        "logits": logits,
        "decoder_self_attention": stack("decoder.layers.{}.self_attn"),
        "cross_attention": stack("decoder.layers.{}.cross_attn"),
    }


def onnx_outputs(onnx_translator, src, tgt, src_mask, tgt_mask):
    memory, encoder_attention = onnx_translator.encode(src, src_mask)
    logits, decoder_attention, cross_attention = onnx_translator.decode(tgt, memory, src_mask, tgt_mask)
    return {"memory": memory, "encoder_self_attention": encoder_attention, "logits": logits,
            "decoder_self_attention": decoder_attention, "cross_attention": cross_attention}


def test_shipped_files_come_from_the_shipped_checkpoint(translator):
    stored = json.loads((export.ONNX_DIR / export.VOCAB_FILE).read_text(encoding="utf-8"))
    assert stored["model_fingerprint"] == export.model_fingerprint(translator), STALE
    assert stored == export.vocab_json(translator), STALE


def test_staleness_check_covers_the_onnx_files(translator, monkeypatch, tmp_path):
    from transformer_edu.translation import pretrained

    assert pretrained.onnx_problems() == [], STALE
    real = export.vocab_json
    monkeypatch.setattr(export, "vocab_json", lambda t: {**real(t), "model_fingerprint": "0" * 64})
    assert pretrained.onnx_problems() == ["the ONNX export was made from another checkpoint"]
    assert "the ONNX export was made from another checkpoint" in pretrained.asset_problems()
    monkeypatch.setattr(export, "vocab_json", lambda t: {**real(t), "max_len": 1})
    assert pretrained.onnx_problems() == ["the ONNX export's vocab.json differs from the one the package writes now"]
    monkeypatch.setattr(export, "ONNX_DIR", tmp_path)
    assert pretrained.onnx_problems() == ["the ONNX export lacks encoder.onnx, decoder.onnx, vocab.json"]


def test_rebuild_exports_the_checkpoint_it_writes(monkeypatch, tmp_path):
    """``pretrained --rebuild`` writes the ONNX files of the checkpoint it has just written."""
    from transformer_edu.translation import pretrained

    exported = {}

    def fake_train(command, check, env):  # the training command line, replaced by the shipped result
        out = Path(command[command.index("--out") + 1])
        translator = pretrained_translator("cpu")
        translator.save(out / "checkpoint.pt", extra={"recipe": {}, "history": []})
        (out / "metrics.json").write_text(json.dumps({"exact_match": 1.0}), encoding="utf-8")

    monkeypatch.setattr(pretrained.subprocess, "run", fake_train)
    monkeypatch.setattr(export, "export_onnx", lambda t, d: exported.update(translator=t, directory=d))
    pretrained.rebuild(tmp_path)
    assert exported["directory"] == tmp_path / "onnx"
    assert export.model_fingerprint(exported["translator"]) == export.model_fingerprint(
        pretrained_translator("cpu"))


def test_shipped_files_are_small_package_data():
    sizes = {name: (export.ONNX_DIR / name).stat().st_size
             for name in (export.ENCODER_FILE, export.DECODER_FILE, export.VOCAB_FILE)}
    assert sum(sizes.values()) <= 3 * 2**20, sizes  # fetched by the page when the demo starts
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
        import tomli as tomllib

    config = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["transformer_edu"]
    assert "assets/ko_en/onnx/*" in patterns


def test_vocab_json_holds_what_the_page_needs(translator):
    vocab = export.vocab_json(translator)
    assert vocab["src_itos"] == translator.src_vocab.itos
    assert vocab["tgt_itos"] == translator.tgt_vocab.itos
    assert vocab["special_ids"] == {"pad": 0, "bos": 1, "eos": 2, "unk": 3}
    assert vocab["never_generate"] == [0, 1, 3]
    assert vocab["max_len"] == translator.model.config.max_len
    assert vocab["pad_extra"] == export.PAD_EXTRA
    assert (vocab["n_layers"], vocab["n_heads"]) == (2, 4)
    assert vocab["grammar"] == data.grammar_spec()  # the page says when a sentence lies outside it
    json.dumps(vocab)  # serialisable
    whitespace = te.Translator(translator.model, translator.src_vocab, translator.tgt_vocab)
    assert export.vocab_json(whitespace)["grammar"] is None  # no grammar known: the page checks none


def test_onnx_tokens_follow_the_translator(translator, shipped, held_out_pairs):
    rule = shipped.vocab["tokenizer"]
    assert rule["kind"] == ("whitespace" if getattr(translator, "src_tokenizer", None) is None else "table")
    import sys

    assert rule["whitespace"] == "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    for sentence in [korean for korean, _ in held_out_pairs] + natural_inputs(held_out_pairs):
        assert shipped.tokens(sentence) == python_tokens(translator, sentence), repr(sentence)


def test_max_steps_is_the_translators(translator, shipped, held_out_pairs, monkeypatch):
    from transformer_edu.translation import translator as translator_module

    seen = []
    real = translator_module.greedy_decode

    def spy(model, src, **kwargs):
        seen.append((src.shape[1], kwargs["max_len"]))
        return real(model, src, **kwargs)

    monkeypatch.setattr(translator_module, "greedy_decode", spy)
    for korean, _ in held_out_pairs[:5]:
        translator.translate(korean, beam_size=1)
    assert seen and all(steps == shipped.max_steps(length) for length, steps in seen), seen


def test_shipped_files_carry_no_debug_info():
    for name in (export.ENCODER_FILE, export.DECODER_FILE):
        content = (export.ONNX_DIR / name).read_bytes()
        assert b"stack_trace" not in content and b"transformer_edu/" not in content, name


def test_graph_signatures_are_dynamic_in_batch_and_lengths():
    expected_types = {"src": "INT64", "tgt": "INT64", "memory": "FLOAT", "src_mask": "BOOL",
                      "tgt_mask": "BOOL", "logits": "FLOAT"}
    for name, signature in export.SIGNATURES.items():
        graph = onnx.load(str(export.ONNX_DIR / name))
        assert max(o.version for o in graph.opset_import if o.domain in ("", "ai.onnx")) == export.OPSET
        for kind, values in (("inputs", graph.graph.input), ("outputs", graph.graph.output)):
            assert [v.name for v in values] == list(signature[kind])
            for value in values:
                shape = value.type.tensor_type.shape.dim
                symbolic = [d.dim_param or d.dim_value for d in shape]
                wanted = signature[kind][value.name]
                assert len(symbolic) == len(wanted), (name, value.name, symbolic)
                for got, want in zip(symbolic, wanted):
                    if want in ("B", "S", "T"):
                        assert isinstance(got, str) and got, (name, value.name, symbolic)  # dynamic
                dtype = onnx.TensorProto.DataType.Name(value.type.tensor_type.elem_type)
                if value.name in expected_types:
                    assert dtype == expected_types[value.name], (value.name, dtype)


@pytest.mark.parametrize("padding, causal", [(True, True), (False, True), (True, False), (False, False)],
                         ids=["masks", "padding-off", "causal-off", "both-off"])
def test_outputs_equal_pytorch_on_the_test_split(translator, shipped, batch, padding, causal):
    src, tgt = batch
    src_mask, tgt_mask = masks(src, tgt, padding, causal)
    expected = pytorch_outputs(translator.model, src, tgt, src_mask, tgt_mask)
    got = onnx_outputs(shipped, src, tgt, src_mask, tgt_mask)
    for name, value in expected.items():
        assert got[name].shape == value.shape, name
        error = (got[name] - value).abs().max().item()
        assert error <= TOLERANCE, f"{name}: max |ONNX − PyTorch| = {error:.2e}"
    # The switch really changed the computation.
    reference = pytorch_outputs(translator.model, src, tgt, *masks(src, tgt, True, True))
    changed = (expected["logits"] - reference["logits"]).abs().max().item()
    assert (changed == 0.0) == (padding and causal)


def test_greedy_decoding_through_onnx_equals_the_translator(translator, shipped, held_out_pairs):
    sources = [korean for korean, _ in held_out_pairs]
    expected = translator.translate(sources, beam_size=1)
    assert shipped.translate(sources) == expected
    # As the page runs it: padded with PAD_EXTRA <pad>, which the padding mask hides.
    assert shipped.translate(sources, pad_extra=export.PAD_EXTRA) == expected


def test_greedy_tokens_equal_greedy_decode(translator, shipped, held_out_pairs):
    model = translator.model
    for korean, _ in held_out_pairs[:40]:
        src = torch.tensor([translator.src_vocab.encode(korean)])  # (1, S)
        steps = shipped.max_steps(src.shape[1])
        expected = te.greedy_decode(model, src, max_len=steps, bos_id=1, eos_id=2, unk_id=3)
        got = shipped.greedy_decode(src, te.padding_mask(src), steps)
        assert torch.equal(got, expected), korean


def test_padding_mask_off_is_what_pytorch_predicts(translator, shipped, held_out_pairs):
    """The page's padding switch: the sentence padded by PAD_EXTRA, all keys visible."""
    changed = 0
    for korean, _ in held_out_pairs[:60]:
        ids = translator.src_vocab.encode(korean)
        src = torch.tensor([ids + [data.Vocab.pad_id] * export.PAD_EXTRA])  # (1, S + PAD_EXTRA)
        open_mask = torch.ones(1, 1, 1, src.shape[1], dtype=torch.bool)
        steps = shipped.max_steps(len(ids))
        expected = te.greedy_decode(translator.model, src, src_mask=open_mask, max_len=steps,
                                    bos_id=1, eos_id=2, unk_id=3)
        got = shipped.greedy_decode(src, open_mask, steps)
        assert torch.equal(got, expected), korean
        masked = shipped.greedy_decode(src, te.padding_mask(src), steps)
        changed += not torch.equal(got, masked)
    assert changed > 0  # the mask matters for some sentences


def test_unknown_words_are_refused(shipped):
    with pytest.raises(ValueError, match=r"\['기린이'\]"):  # named as written (기린, giraffe, is unknown)
        shipped.translate(["기린이 생선을 먹었다"])


@pytest.mark.skipif(not export.exporter_available(),
                    reason=f"PyTorch {torch.__version__}: torch.onnx.export has no dynamo= / dynamic_shapes=")
def test_export_writes_graphs_equal_to_the_shipped_ones(translator, shipped, batch, tmp_path, capsys):
    from transformer_edu.cli.export import main

    assert main(["--out", str(tmp_path)]) == 0
    assert "encoder.onnx" in capsys.readouterr().out
    fresh = export.OnnxTranslator(tmp_path)
    assert fresh.vocab == shipped.vocab
    src, tgt = batch
    src, tgt = src[:50], tgt[:50]
    for padding, causal in ((True, True), (False, False)):
        src_mask, tgt_mask = masks(src, tgt, padding, causal)
        a = onnx_outputs(fresh, src, tgt, src_mask, tgt_mask)
        b = onnx_outputs(shipped, src, tgt, src_mask, tgt_mask)
        for name in a:
            assert (a[name] - b[name]).abs().max().item() <= 1e-6, name


def test_bad_arguments_are_named(translator, tmp_path):
    with pytest.raises(TypeError, match="translator must be a Translator"):
        export.export_onnx(translator.model, tmp_path)
    with pytest.raises(ValueError, match="opset"):
        export.export_onnx(translator, tmp_path, opset=11)
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        export.export_onnx(translator, a_file)
    with pytest.raises(FileNotFoundError, match="python -m transformer_edu.cli.export --out"):
        export.OnnxTranslator(tmp_path / "nowhere")
    with pytest.raises(TypeError, match="must be a Transformer"):
        export.EncoderGraph(translator)


def test_an_old_exporter_is_named(translator, tmp_path, monkeypatch):
    monkeypatch.setattr(export, "exporter_available", lambda: False)
    with pytest.raises(RuntimeError, match=re.escape(f"PyTorch {torch.__version__} has no such export")):
        export.export_onnx(translator, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before writing anything


def test_live_translator_html():
    from transformer_edu.figures import viz

    markup = export.live_translator_html()
    assert markup.startswith('<div id="live-translator"')
    assert "runs in the HTML book" in markup  # what Jupyter and Colab show
    assert 'data-example="고양이가 생선을 먹었다"' in markup
    colours = json.loads(markup.split("data-colours='")[1].split("'")[0])
    assert colours == [colour for _, colour in viz.plotly_colorscale()]
    assert 'data-example="a &lt;b&gt;"' in export.live_translator_html(example="a <b>")
    with pytest.raises(ValueError, match="example"):
        export.live_translator_html(example=" ")
