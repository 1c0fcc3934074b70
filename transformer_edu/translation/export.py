"""The trained translator as ONNX files, for the live demo of the HTML book (Chapter 8).

The published book has no Python kernel. Its live translator runs the
shipped model in the reader's browser with ONNX Runtime Web, from three
files this module writes::

    python -m transformer_edu.export --out DIR

or, from Python, ``export_onnx(translator, "DIR")``:

* ``encoder.onnx``: ``(src, src_mask) → (memory, encoder_self_attention)``;
* ``decoder.onnx``: ``(tgt, memory, src_mask, tgt_mask) → (logits,
  decoder_self_attention, cross_attention)``;
* ``vocab.json``: both vocabularies, the special ids, the model's
  ``max_len``, the tokenisation rule, the grammar the model learned (so the
  page can say when a sentence lies outside it) and the graphs' signatures.

The masks are inputs, so the page can switch the padding or the causal mask
off and *recompute*. Besides the memory and the logits, each graph returns
the attention weights of every layer and head, recorded by
:func:`~transformer_edu.record_attention` inside the package's own modules.
The shipped files live in ``transformer_edu/assets/ko_en/onnx``
(:data:`ONNX_DIR`); ``python -m transformer_edu.translation.pretrained --rebuild``
remakes them with the checkpoint.

Shape legend: B batch, S source length, T target length, D = d_model,
N layers, H heads, V target vocabulary size. Masks: ``True`` = may attend.
"""

from __future__ import annotations

import hashlib
import html
import inspect
import json
import logging
import os
import sys
import unicodedata
import warnings
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor, nn

from .. import _validate, data
from ..attention import record_attention
from ..data import Vocab
from ..masks import causal_mask, padding_mask
from ..model import Transformer
from .translator import Translator

__all__ = [
    "DECODER_FILE",
    "ENCODER_FILE",
    "ONNX_DIR",
    "OPSET",
    "PAD_EXTRA",
    "VOCAB_FILE",
    "DecoderGraph",
    "EncoderGraph",
    "OnnxTranslator",
    "export_onnx",
    "exporter_available",
    "live_translator_html",
    "model_fingerprint",
    "vocab_json",
]

ONNX_DIR = Path(__file__).resolve().parents[1] / "assets" / "ko_en" / "onnx"
"""Where the package keeps the ONNX export of the shipped translator."""

ENCODER_FILE = "encoder.onnx"
DECODER_FILE = "decoder.onnx"
VOCAB_FILE = "vocab.json"
OPSET = 18
"""ONNX opset of the graphs: torch.onnx's default, which ONNX Runtime Web runs."""

PAD_EXTRA = 4
"""``<pad>`` tokens the page appends to the reader's sentence, as a batch with
a sentence four tokens longer would: with the padding mask they change
nothing; without it, every query also attends to them."""

FORMAT_VERSION = 1

MAX_STEPS = {"per_source_token": 1, "extra": 50}
"""The decoding limit of :meth:`~transformer_edu.translation.translator.Translator.translate` with its default
``max_len`` (:meth:`Translator.output_limit`, the paper's source length plus
50): ``min(per_source_token · S + extra, max_len)`` target tokens for a source
of S ids (``<eos>`` counted); a test checks it against the Translator."""


class _ModelGraph(nn.Module):
    """A graph to export that runs part of a :class:`~transformer_edu.Transformer`."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = _validate.instance("model", model, Transformer, "a Transformer")


class EncoderGraph(_ModelGraph):
    """The encoder of a :class:`~transformer_edu.Transformer`, returning its attention weights too.

    It runs :meth:`~transformer_edu.model.Transformer.encode` under
    :func:`~transformer_edu.record_attention`. :func:`export_onnx` traces it
    from inside its own door, so ``encode`` checks nothing in the graph (its
    check reads the token ids' values, which an exported graph cannot do).

    Args:
        model: the trained model.

    Shape:
        - src: (B, S) token ids
        - src_mask: (B, 1, 1, S) boolean, ``True`` = may attend
        - memory: (B, S, D)
        - encoder_self_attention: (B, N, H, S, S)
    """

    def forward(self, src: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        m = self.model
        with record_attention(m.encoder) as maps:
            memory = m.encode(src, src_mask)  # (B, S, D)
        names = [f"layers.{i}.self_attn" for i in range(len(m.encoder.layers))]
        return memory, torch.stack([maps[n] for n in names], dim=1)  # (B, N, H, S, S)


class DecoderGraph(_ModelGraph):
    """The decoder and output layer of a :class:`~transformer_edu.Transformer`, with attention weights.

    It runs :meth:`~transformer_edu.model.Transformer.decode` under
    :func:`~transformer_edu.record_attention`, without a key/value cache
    (the page recomputes the prefix at each step); as for
    :class:`EncoderGraph`, the exported graph holds no checks.

    Args:
        model: the trained model.

    Shape:
        - tgt: (B, T) token ids, starting with ``<bos>``
        - memory: (B, S, D)
        - src_mask: (B, 1, 1, S) boolean
        - tgt_mask: (B, 1, T, T) boolean, e.g. from :func:`target_mask`
        - logits: (B, T, V)
        - decoder_self_attention: (B, N, H, T, T)
        - cross_attention: (B, N, H, T, S)
    """

    def forward(
        self, tgt: Tensor, memory: Tensor, src_mask: Tensor, tgt_mask: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        m = self.model
        with record_attention(m.decoder) as maps:
            logits = m.decode(tgt, memory, src_mask, tgt_mask)  # (B, T, V)
        layers = range(len(m.decoder.layers))
        self_attention = torch.stack([maps[f"layers.{i}.self_attn"] for i in layers], dim=1)
        cross_attention = torch.stack([maps[f"layers.{i}.cross_attn"] for i in layers], dim=1)
        return logits, self_attention, cross_attention  # (B, T, V), (B, N, H, T, T), (B, N, H, T, S)


SIGNATURES = {
    ENCODER_FILE: {
        "inputs": {"src": ["B", "S"], "src_mask": ["B", 1, 1, "S"]},
        "outputs": {"memory": ["B", "S", "D"], "encoder_self_attention": ["B", "N", "H", "S", "S"]},
    },
    DECODER_FILE: {
        "inputs": {"tgt": ["B", "T"], "memory": ["B", "S", "D"], "src_mask": ["B", 1, 1, "S"],
                   "tgt_mask": ["B", 1, "T", "T"]},
        "outputs": {"logits": ["B", "T", "V"], "decoder_self_attention": ["B", "N", "H", "T", "T"],
                    "cross_attention": ["B", "N", "H", "T", "S"]},
    },
}
"""Input and output names of the two graphs with their shapes (B, S, T dynamic)."""


def model_fingerprint(translator: Translator) -> str:
    """SHA-256 of a translator's configuration, vocabularies and weights.

    ``vocab.json`` stores it, so a test can tell ONNX files made from an
    older checkpoint.
    """
    _check_translator(translator)
    digest = hashlib.sha256()
    header = {"config": translator.model.config.to_dict(), "src": translator.src_vocab.itos,
              "tgt": translator.tgt_vocab.itos}
    digest.update(json.dumps(header, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    for name, tensor in translator.model.state_dict().items():
        digest.update(name.encode("utf-8"))
        digest.update(tensor.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def _python_whitespace() -> str:
    """Every character ``str.split()`` splits on, so that the page splits the same way."""
    return "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())


def tokenizer_json(translator: Translator) -> dict:
    """How the page turns the reader's text into source tokens, as data.

    ``kind`` is ``"whitespace"`` (split on whitespace, as ``str.split()``)
    or ``"table"``: the translator's source tokenizer (``src_tokenizer``,
    :class:`~transformer_edu.data.tokenizer.KoreanTokenizer`), whose ``to_dict()`` is
    included: normalise the text to ``normalize`` (NFC), split it on
    whitespace, replace each word that is a key of ``splits`` by its two
    tokens. ``whitespace`` lists the characters Python splits on.
    """
    _check_translator(translator)
    tokenizer = getattr(translator, "src_tokenizer", None)
    if isinstance(tokenizer, data.SubwordTokenizer) or getattr(translator, "tgt_tokenizer", None) is not None:
        raise ValueError("tokenizer_json: the live page tokenizes with a word table or on whitespace; a "
                         "translator with a SubwordTokenizer (Chapter 9) cannot be exported to it")
    if tokenizer is None:
        return {"kind": "whitespace", "normalize": None, "whitespace": _python_whitespace()}
    return {"kind": "table", "normalize": "NFC", "whitespace": _python_whitespace(), **tokenizer.to_dict()}


def vocab_json(translator: Translator) -> dict:
    """Everything the page needs besides the two graphs, as a JSON-serialisable dict.

    Keys: ``src_itos`` and ``tgt_itos`` (id → token), ``special_ids``,
    ``never_generate`` (ids greedy decoding skips, as
    :func:`~transformer_edu.decoding.greedy_decode` with ``unk_id``), ``max_len``,
    ``max_steps`` (the decoding limit of :meth:`~transformer_edu.translation.translator.Translator.translate`:
    ``min(per_source_token · S + extra, max_len)`` with S counting
    ``<eos>``), ``pad_extra`` (:data:`PAD_EXTRA`), ``tokenizer`` (the rule
    that splits the reader's text into source tokens), ``grammar`` (for a
    translator whose tokenizer is the toy grammar's, the grammar it learned,
    :func:`~transformer_edu.data.grammar.grammar_spec`, which the page checks the
    reader's sentence against; else ``None``), the model's sizes, the
    graphs' signatures and the model's fingerprint.
    """
    _check_translator(translator)
    config = translator.model.config
    specials = {"pad": Vocab.pad_id, "bos": Vocab.bos_id, "eos": Vocab.eos_id, "unk": Vocab.unk_id}
    return {
        "format": FORMAT_VERSION,
        "made_with": "python -m transformer_edu.export",
        "model_fingerprint": model_fingerprint(translator),
        "src_itos": list(translator.src_vocab.itos),
        "tgt_itos": list(translator.tgt_vocab.itos),
        "special_ids": specials,
        "never_generate": sorted({Vocab.pad_id, Vocab.bos_id, Vocab.unk_id}),
        "max_len": config.max_len,
        "max_steps": dict(MAX_STEPS),
        "pad_extra": PAD_EXTRA,
        "tokenizer": tokenizer_json(translator),
        "grammar": data.grammar_spec() if translator.src_tokenizer == data.KOREAN_TOKENIZER else None,
        "d_model": config.d_model,
        "n_heads": config.n_heads,
        "n_layers": config.n_layers,
        "graphs": SIGNATURES,
    }


@_validate.door(lambda translator, directory, *, opset=OPSET: _check_export(translator, directory, opset))
def export_onnx(translator: Translator, directory: str | os.PathLike, *, opset: int = OPSET) -> dict[str, Path]:
    """Write ``encoder.onnx``, ``decoder.onnx`` and ``vocab.json`` for ``translator`` into ``directory``.

    The graphs are traced with ``torch.onnx.export`` (the ``torch.export``
    based exporter) on the CPU, with the batch and both lengths dynamic
    (each length at most the model's ``max_len``).

    Args:
        translator: the trained translator.
        directory: where to write; created if missing.
        opset: the ONNX opset.

    Returns:
        ``{"encoder": path, "decoder": path, "vocab": path}``.

    Raises:
        ValueError: the translator tokenizes with a learned subword vocabulary,
            which the page cannot (checked before any work).
    """
    if not exporter_available():
        raise RuntimeError(
            "export_onnx needs torch.onnx.export with dynamo= and dynamic_shapes= "
            f"(the torch.export based exporter); PyTorch {torch.__version__} has no such "
            "export: install a newer PyTorch"
        )
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model = _cpu_copy(translator.model)
    config = model.config

    # Example inputs (any ids do): two sources, the second padded, and a three-token target prefix.
    unk, eos, pad = Vocab.unk_id, Vocab.eos_id, Vocab.pad_id
    src = torch.tensor([[unk, unk, unk, eos], [unk, unk, eos, pad]])  # (2, S)
    src_mask = padding_mask(src, pad)  # (2, 1, 1, S)
    tgt = torch.tensor([[Vocab.bos_id, unk, unk]] * 2)  # (2, T)
    tgt_mask = causal_mask(tgt.shape[1]).expand(2, -1, -1, -1)  # (2, 1, T, T)
    with torch.no_grad():
        memory = model.encode(src, src_mask)  # (2, S, D)

    batch = torch.export.Dim("B", max=4096)
    source = torch.export.Dim("S", max=config.max_len)
    target = torch.export.Dim("T", max=config.max_len)
    paths = {"encoder": directory / ENCODER_FILE, "decoder": directory / DECODER_FILE,
             "vocab": directory / VOCAB_FILE}
    jobs = [
        (EncoderGraph(model), (src, src_mask), paths["encoder"],
         {"src": {0: batch, 1: source}, "src_mask": {0: batch, 3: source}}),
        (DecoderGraph(model), (tgt, memory, src_mask, tgt_mask), paths["decoder"],
         {"tgt": {0: batch, 1: target}, "memory": {0: batch, 1: source},
          "src_mask": {0: batch, 3: source}, "tgt_mask": {0: batch, 2: target, 3: target}}),
    ]
    registration = logging.getLogger("torch.onnx._internal.exporter._registration")
    level = registration.level
    registration.setLevel(logging.ERROR)  # "torchvision is not installed": no torchvision op is used
    try:
        for graph, args, path, dynamic in jobs:
            _export_graph(graph, args, path, dynamic, opset)
    finally:
        registration.setLevel(level)
    text = json.dumps(vocab_json(translator), ensure_ascii=False, indent=1)
    paths["vocab"].write_text(text + "\n", encoding="utf-8")
    return paths


def exporter_available() -> bool:
    """Whether this PyTorch's ``torch.onnx.export`` is the ``torch.export`` based exporter this module uses."""
    parameters = inspect.signature(torch.onnx.export).parameters
    return "dynamo" in parameters and "dynamic_shapes" in parameters


def _export_graph(graph: nn.Module, args: tuple, path: Path, dynamic: dict, opset: int) -> None:
    names = SIGNATURES[path.name]
    with warnings.catch_warnings():
        # The exporter warns that axes sharing a Dim keep one name, which is the point.
        warnings.filterwarnings("ignore", message=".*axis name.*will not be used.*")
        warnings.filterwarnings("ignore", category=FutureWarning)
        torch.onnx.export(
            graph.eval(), args, str(path), input_names=list(names["inputs"]),
            output_names=list(names["outputs"]), opset_version=opset, dynamo=True,
            dynamic_shapes=dynamic, external_data=False, verbose=False,
        )
    _strip_debug_info(path)


def _strip_debug_info(path: Path) -> None:
    """Drop the exporter's debugging notes (source paths, line numbers, module names).

    They make the file depend on where and how the export ran; without them
    the same model always gives the same bytes.
    """
    import onnx

    model = onnx.load(str(path))
    graphs = [model.graph, *(f for f in model.functions)]
    for graph in graphs:
        del graph.metadata_props[:]
        nodes = graph.node
        values = [*getattr(graph, "value_info", []), *getattr(graph, "input", []), *getattr(graph, "output", []),
                  *getattr(graph, "initializer", [])]
        for item in [*nodes, *values]:
            del item.metadata_props[:]
            item.doc_string = ""
    del model.metadata_props[:]
    onnx.save(model, str(path))


def _check_translator(translator: object) -> None:
    _validate.instance("translator", translator, Translator, "a Translator")


def _check_export(translator: object, directory: object, opset: object) -> None:
    """The checks of :func:`export_onnx`."""
    _check_translator(translator)
    tokenizer_json(translator)  # a translator the page cannot tokenize is refused before the long export
    _validate.int_in_range("opset", opset, 18)  # the exporter's oldest
    _validate.not_a_file("directory", Path(directory))


def _cpu_copy(model: Transformer) -> Transformer:
    """The model on the CPU in eval mode (a copy when it lives elsewhere)."""
    if next(model.parameters()).device.type != "cpu":
        clone = Transformer(model.config)
        clone.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
        model = clone
    return model.eval()


class OnnxTranslator:
    """The exported files run with ``onnxruntime`` in Python: what the page computes, step for step.

    Greedy decoding here follows the page's JavaScript: encode once, then
    run the decoder on the whole prefix at every step (no key/value cache)
    and take the most likely token that is not in ``never_generate``.

    Args:
        directory: a directory written by :func:`export_onnx`; default
            :data:`ONNX_DIR`, the shipped export.

    Attributes:
        vocab: the contents of ``vocab.json``.
    """

    def __init__(self, directory: str | os.PathLike = ONNX_DIR) -> None:
        try:
            import onnxruntime
        except ImportError as error:  # pragma: no cover - onnxruntime is a dependency
            raise ImportError("OnnxTranslator needs onnxruntime: pip install onnxruntime") from error
        directory = Path(directory)
        missing = [n for n in (ENCODER_FILE, DECODER_FILE, VOCAB_FILE) if not (directory / n).is_file()]
        if missing:
            raise FileNotFoundError(
                f"no {', '.join(missing)} in {str(directory)!r}; write them with "
                f"python -m transformer_edu.export --out {directory}"
            )
        self.directory = directory
        self.vocab = json.loads((directory / VOCAB_FILE).read_text(encoding="utf-8"))
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.encoder = onnxruntime.InferenceSession(str(directory / ENCODER_FILE), options,
                                                    providers=["CPUExecutionProvider"])
        self.decoder = onnxruntime.InferenceSession(str(directory / DECODER_FILE), options,
                                                    providers=["CPUExecutionProvider"])
        self.src_stoi = {t: i for i, t in enumerate(self.vocab["src_itos"])}

    def encode(self, src: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        """Run ``encoder.onnx``. Returns ``(memory, encoder_self_attention)`` as tensors."""
        outputs = self.encoder.run(None, {"src": _numpy(src), "src_mask": _numpy(src_mask)})
        return tuple(torch.from_numpy(o) for o in outputs)

    def decode(self, tgt: Tensor, memory: Tensor, src_mask: Tensor, tgt_mask: Tensor
               ) -> tuple[Tensor, Tensor, Tensor]:
        """Run ``decoder.onnx``. Returns ``(logits, decoder_self_attention, cross_attention)``."""
        feeds = {"tgt": _numpy(tgt), "memory": _numpy(memory), "src_mask": _numpy(src_mask),
                 "tgt_mask": _numpy(tgt_mask)}
        return tuple(torch.from_numpy(o) for o in self.decoder.run(None, feeds))

    def tokens(self, sentence: str, *, split: bool = True) -> list[str]:
        """The source tokens of ``sentence`` by ``vocab.json``'s rule (see ``tokenizer_json``).

        With ``split=False``, the written words before the table splits them.
        """
        rule = self.vocab["tokenizer"]
        if rule["kind"] not in ("whitespace", "table"):
            raise ValueError(f"unknown tokenizer kind {rule['kind']!r} in {VOCAB_FILE}")
        if rule["normalize"]:
            sentence = unicodedata.normalize(rule["normalize"], sentence)
        words = sentence.split()
        if rule["kind"] == "whitespace" or not split:
            return words
        return [token for word in words for token in rule["splits"].get(word, [word])]

    def max_steps(self, source_length: int) -> int:
        """The most target tokens for a source of ``source_length`` ids (``<eos>`` counted)."""
        steps = self.vocab["max_steps"]
        return min(steps["per_source_token"] * source_length + steps["extra"], self.vocab["max_len"])

    @torch.no_grad()
    def greedy_decode(self, src: Tensor, src_mask: Tensor, max_steps: int) -> Tensor:
        """Greedy decoding through the graphs, the whole prefix at every step.

        Shape:
            - src: (B, S); src_mask: (B, 1, 1, S)
            - output: (B, L) ids without ``<bos>``; after ``<eos>``, ``<pad>``
        """
        ids = self.vocab["special_ids"]
        memory, _ = self.encode(src, src_mask)
        tokens = torch.full((src.shape[0], 1), ids["bos"], dtype=torch.long)  # (B, 1)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_steps):
            tgt_mask = causal_mask(tokens.shape[1]).expand(src.shape[0], -1, -1, -1)  # (B, 1, t, t)
            logits = self.decode(tokens, memory, src_mask, tgt_mask)[0][:, -1]  # (B, V)
            logits[:, self.vocab["never_generate"]] = float("-inf")
            next_token = logits.argmax(dim=-1).masked_fill(done, ids["pad"])  # (B,)
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)  # (B, t + 1)
            done |= next_token == ids["eos"]
            if bool(done.all()):
                break
        return tokens[:, 1:]

    def translate(self, sentences: Sequence[str], *, pad_extra: int = 0) -> list[str]:
        """Greedy translations, each sentence alone, with ``pad_extra`` ``<pad>`` appended (as the page does).

        Raises:
            ValueError: a word is not in the source vocabulary.
        """
        ids = self.vocab["special_ids"]
        itos = self.vocab["tgt_itos"]
        outputs = []
        for sentence in sentences:
            unknown = list(dict.fromkeys(  # named as written: 기린이, not 기린
                word for word in self.tokens(sentence, split=False)
                if any(token not in self.src_stoi for token in self.tokens(word))))
            if unknown:
                raise ValueError(f"unknown words {unknown} in {sentence!r}")
            src_ids = [self.src_stoi[token] for token in self.tokens(sentence)] + [ids["eos"]]
            src = torch.tensor([src_ids + [ids["pad"]] * pad_extra])  # (1, S + pad_extra)
            out = self.greedy_decode(src, padding_mask(src, ids["pad"]), self.max_steps(len(src_ids)))[0]
            words_out = []
            for i in out.tolist():
                if i == ids["eos"]:
                    break
                words_out.append(itos[i])
            outputs.append(" ".join(words_out))
        return outputs


def _numpy(tensor: Tensor):
    return tensor.detach().cpu().contiguous().numpy()


def live_translator_html(*, example: str = "고양이가 생선을 먹었다") -> str:
    """The container of the book's live translator, with a text for Jupyter and Colab.

    In the HTML book, ``book/_static/live-translator.js`` (added to the pages
    holding this container by the book's Sphinx extension) builds the demo
    inside it and hides the text; in Jupyter and Colab there is no such
    script, and the text says where the demo runs.

    Args:
        example: the sentence the input starts with.
    """
    from ..figures.viz import (  # the book's colours for attention maps
        BLOCKED_COLOR,
        plotly_colorscale,
    )

    _validate.text("example", example, nonempty=True)
    colours = json.dumps([colour for _, colour in plotly_colorscale()])
    return (
        f'<div id="live-translator" class="live-translator" data-example="{html.escape(example)}" '
        f"data-colours='{colours}' data-blocked=\"{BLOCKED_COLOR}\">\n"
        '<p class="live-translator-fallback">The live translator runs in the HTML book, in your '
        "browser: type a Korean sentence, watch the attention maps and switch the masks off. "
        "Here, in Jupyter or Colab, the cells below do the same in Python.</p>\n"
        "</div>"
    )
