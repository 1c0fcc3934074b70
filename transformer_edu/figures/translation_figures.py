"""The figures of Chapters 6 to 8: the shipped translator under switchable masks, live."""

from __future__ import annotations

import torch

from ..masks import causal_mask, padding_mask
from .. import _validate
from .controls import Buttons, Panel, Select, Slider, State
from .explorer import heatmap_panel
from .live import LiveExplorer, Text, Toggle

__all__ = [
    "PAD_EXTRA",
    "attention_playground",
    "beam_state",
    "decoder_playground",
    "translation_run",
    "translation_state",
    "translator_playground",
]


PAD_EXTRA = 4
"""Pads after the source in the translator's playgrounds (as on the page)."""


def _check_translator(translator) -> None:
    for name in ("model", "src_vocab", "tgt_vocab", "encode_source"):
        if not hasattr(translator, name):
            raise TypeError(
                "translator must be a Translator (e.g. pretrained_translator"
                f"()), got {type(translator).__name__}"
            )


def _grammar_note(korean: str) -> str:
    """'' when the toy grammar reads ``korean``, else its message (as the Translator's warning gives it)."""
    from ..data import grammar_problem

    return grammar_problem(korean) or ""


def _masks(src, tgt, pad_id: int, padding: bool, causal: bool):
    (batch, s), t = src.shape, tgt.shape[1]
    src_mask = padding_mask(src, pad_id)  # (B, 1, 1, S)
    if not padding:
        src_mask = torch.ones(batch, 1, 1, s, dtype=torch.bool)
    tgt_mask = torch.ones(batch, 1, t, t, dtype=torch.bool)
    if causal:
        tgt_mask = tgt_mask & causal_mask(t)  # (B, 1, T, T)
    return src_mask.to(src.device), tgt_mask.to(src.device)


@torch.no_grad()
def translation_run(
    translator,
    korean: str,
    english: str | None = None,
    *,
    pads: int = PAD_EXTRA,
    padding: bool = True,
    causal: bool = True,
    beam_size: int = 1,
    alpha: float = 0.6,
) -> dict:
    """Translate with the masks switched, then re-run teacher-forced.

    As the HTML book's live translator does: the source gets ``pads``
    ``<pad>`` tokens after its EOS; the search (greedy for ``beam_size``
    1, else beam search with length penalty ``alpha``) uses the padding
    mask or not, and is always causal (it writes left to right); then the
    decoder re-reads ``<bos>`` + the translation (or ``english``, when
    given) with the causal mask or not, recording every attention map.

    Args:
        translator: a :class:`~transformer_edu.translation.translator.Translator`.
        korean: the source, written Korean; unknown words raise the
            translator's :class:`~transformer_edu.translation.translator.UnknownWordsError`.
        english: a target to re-read instead of the translation.
        pads: ``<pad>`` tokens after the source (0 … 8).
        padding, causal: the masks' switches.
        beam_size: 1 … 16; alpha: the length penalty (0 … 5).

    Returns:
        A dict: ``english`` (the translation), ``target`` (the re-read
        words), ``predictions`` (what each decoder position predicts in the
        re-run), ``source`` and ``target_in`` (the tokens on the axes),
        ``maps`` (name → (H, Lq, Lk) weights), ``grammar`` (``''`` or the
        grammar's message) and ``hypotheses`` (beam search's, best first,
        as (text, score); the greedy output alone for ``beam_size`` 1).
    """
    from ..attention import record_attention
    from ..data import Vocab
    from ..decoding import beam_search_nbest, greedy_decode

    _check_translator(translator)
    _validate.text("korean", korean, nonempty=True)
    pads = _validate.int_in_range("pads", pads, 0, 8)
    beam_size = _validate.int_in_range("beam_size", beam_size, 1, 16)
    _validate.number_in_range("alpha", alpha, 0, 5)
    model = translator.model.eval()
    device = next(model.parameters()).device
    ids = translator.encode_source(korean)  # raises on unknown words
    pad, bos, eos = Vocab.pad_id, Vocab.bos_id, Vocab.eos_id
    src = torch.tensor([ids + [pad] * pads], device=device)  # (1, S)
    src_mask, _ = _masks(src, src, pad, padding, True)
    limit = translator.output_limit(len(ids))
    if beam_size == 1:
        out = greedy_decode(
            model, src, src_mask=src_mask, bos_id=bos, eos_id=eos,
            unk_id=Vocab.unk_id, max_len=limit,
        )  # (1, L): generation is always causal  # fmt: skip
        found = translator.tgt_vocab.decode(out[0].tolist())
        hypotheses = [(found, None)]
    else:
        best = beam_search_nbest(
            model, src, src_mask=src_mask, bos_id=bos, eos_id=eos,
            unk_id=Vocab.unk_id, max_len=limit, beam_size=beam_size,
            length_penalty=float(alpha),
        )[0]  # fmt: skip
        hypotheses = [
            (translator.tgt_vocab.decode(list(h.tokens)), h.score)
            for h in best
        ]
        found = hypotheses[0][0]
    target = found if english is None else english
    _validate.text("english", target)
    unknown = translator.tgt_vocab.unknown_tokens(target)
    if unknown:
        raise ValueError(
            f"english has words the model does not know: {unknown}"
        )
    forced = [bos] + translator.tgt_vocab.encode(target, add_eos=False)
    tgt = torch.tensor([forced], device=device)  # (1, T)
    src_mask, tgt_mask = _masks(src, tgt, pad, padding, causal)
    with record_attention(model) as maps:
        memory = model.encode(src, src_mask)  # (1, S, D)
        logits = model.decode(tgt, memory, src_mask, tgt_mask)  # (1, T, V)
    never = [pad, bos, Vocab.unk_id]
    logits[..., never] = -torch.inf
    predictions = [
        translator.tgt_vocab.itos[i] for i in logits[0].argmax(-1).tolist()
    ]
    return {
        "english": found,
        "target": target.split(),
        "predictions": predictions,
        "source": translator.source_tokens(korean) + ["<eos>"]
        + ["<pad>"] * pads,
        "target_in": ["<bos>"] + target.split(),
        "maps": {name: w[0].float().cpu() for name, w in maps.items()},
        "grammar": _grammar_note(korean),
        "hypotheses": hypotheses,
    }  # fmt: skip


def _pick(weights, head):
    """One head's map, or the mean over heads (head = "mean"). (Lq, Lk)"""
    return weights.mean(0) if head == "mean" else weights[head]


def translation_state(
    translator,
    korean: str,
    english: str = "",
    pads: int = PAD_EXTRA,
    padding: bool = True,
    causal: bool = True,
    layer: int = -1,
    head="mean",
    *,
    beam_size: int = 1,
    alpha: float = 0.6,
) -> State:
    """One state of the translator playgrounds (Chapters 6 and 7).

    Runs :func:`translation_run` and draws, for one layer and one head (or
    their mean), the encoder's self-attention, the decoder's
    self-attention (cells the causal mask blocks empty) and the
    cross-attention.

    Args:
        translator, korean, pads, padding, causal, beam_size, alpha: as in
            :func:`translation_run`.
        english: a target for the decoder to re-read; ``""``: the
            translation.
        layer: the layer (negative counts from the last).
        head: a head index, or ``"mean"``.

    Returns:
        The :class:`~transformer_edu.figures.controls.State`. Its summary gives
        the translation (and the grammar's message for a sentence outside
        it: the model still translates); its details what each decoder
        position predicts and how much weight the ``<pad>`` keys get.
    """
    _check_translator(translator)
    layers = translator.model.config.n_layers
    heads = translator.model.config.n_heads
    _validate.int_in_range("layer", layer, -layers, layers - 1)
    if head != "mean":
        _validate.int_in_range("head", head, 0, heads - 1, why=" (or 'mean')")
    run = translation_run(
        translator, korean, english.strip() or None, pads=pads,
        padding=padding, causal=causal, beam_size=beam_size, alpha=alpha,
    )  # fmt: skip
    n = layer % layers
    maps = run["maps"]
    enc = _pick(maps[f"encoder.layers.{n}.self_attn"], head)  # (S, S)
    dec = _pick(maps[f"decoder.layers.{n}.self_attn"], head)  # (T, T)
    cross = _pick(maps[f"decoder.layers.{n}.cross_attn"], head)  # (T, S)
    future = torch.ones_like(dec, dtype=torch.bool).triu(1)
    panels = [
        heatmap_panel(
            enc, run["source"], title="encoder self-attention",
            height=340, colorbar=False,
        ),
        heatmap_panel(
            dec, run["target_in"], title="decoder self-attention",
            blocked=future if causal else None, height=340, colorbar=False,
        ),
        heatmap_panel(
            cross, run["target_in"], run["source"], height=340,
            title="cross-attention", xlabel="Korean (key)",
            ylabel="English (query)",
        ),
    ]  # fmt: skip
    which = "mean of heads" if head == "mean" else f"head {head + 1}"
    switches = (
        f"padding mask {'on' if padding else 'off'}, causal mask "
        f"{'on' if causal else 'off'}"
    )
    summary = (
        f"{korean} → {run['english']} ({switches}; layer {n + 1}, {which})."
    )
    if run["grammar"]:
        summary += (
            " Outside the grammar the model learned, so its output is a "
            f"guess: {run['grammar']}"
        )
    pad_keys = torch.tensor([t == "<pad>" for t in run["source"]])
    on_pads = max(
        w[..., pad_keys].sum(-1).max().item() if pad_keys.any() else 0.0
        for name, w in maps.items()
        if "cross" in name or name.startswith("encoder")
    )
    details = (
        f"re-read: {' '.join(run['target_in'])}\n"
        f"predicts: {' '.join(run['predictions'])}\n"
        f"most weight on <pad> keys (any layer, head, query): {on_pads:.4f}"
    )
    if len(run["hypotheses"]) > 1:
        details += "\n" + "\n".join(
            f"{rank}. {text} (score {score:.3f})"
            for rank, (text, score) in enumerate(run["hypotheses"], 1)
        )
    return State(panels, summary, details)


def _translator_controls(translator, korean: str, extra=()) -> list:
    config = translator.model.config
    return [
        Text("korean", korean, label="Korean"),
        *extra,
        Toggle("padding", True, label="padding mask"),
        Toggle("causal", True, label="causal mask"),
        Buttons(
            "layer",
            range(config.n_layers),
            labels=[f"layer {n + 1}" for n in range(config.n_layers)],
            start=config.n_layers - 1,
        ),
        Select(
            "head",
            ["mean", *range(config.n_heads)],
            labels=["mean of heads"]
            + [f"head {h + 1}" for h in range(config.n_heads)],
        ),
    ]


def attention_playground(
    translator, korean: str = "고양이가 생선을 먹었다"
) -> LiveExplorer:
    """Chapter 7's playground: the trained model's attention on a Korean
    sentence you type, with the padding and causal masks switchable.

    Args:
        translator: the trained translator, e.g.
            :func:`~transformer_edu.translation.pretrained.pretrained_translator`.
        korean: the sentence shown first (written Korean: 고양이가, not
            고양이 가).

    Returns:
        The :class:`LiveExplorer` of :func:`translation_state`.
    """
    _check_translator(translator)
    return LiveExplorer(
        translation_state,
        title="The trained translator's attention on your sentence",
        description="Type a Korean sentence of the toy grammar and press "
        f"Enter. The source gets {PAD_EXTRA} <pad> tokens; greedy decoding "
        "uses the padding mask or not, then the decoder re-reads its "
        "translation with the causal mask or not. Grey cells are blocked.",
        controls=_translator_controls(translator, korean),
        fixed={"translator": translator, "english": "", "pads": PAD_EXTRA},
    )


def decoder_playground(
    translator,
    korean: str = "고양이가 생선을 먹었다",
    english: str = "the cat ate the fish",
) -> LiveExplorer:
    """Chapter 6's playground: the decoder's masks with the shipped model.

    The decoder re-reads a target you type (teacher forcing); switch the
    causal mask off and every position can read the words after it.

    Args:
        translator: the shipped translator.
        korean: the source shown first.
        english: the target shown first (``""``: the translation).

    Returns:
        The :class:`LiveExplorer` of :func:`translation_state`.
    """
    _check_translator(translator)
    return LiveExplorer(
        translation_state,
        title="The decoder's masks, on the shipped model",
        description="The decoder re-reads the English target, teacher-"
        "forced: each row of its self-attention is one position; with the "
        "causal mask off it can read the words it should predict. The "
        f"source gets {PAD_EXTRA} <pad> tokens (padding mask switchable).",
        controls=_translator_controls(
            translator, korean, [Text("english", english, label="English")]
        ),
        fixed={"translator": translator, "pads": PAD_EXTRA},
    )


def beam_state(
    translator,
    korean: str,
    beam_size: int = 4,
    alpha: float = 0.6,
    padding: bool = True,
    causal: bool = True,
) -> State:
    """One state of the translator playground of Chapter 8: beam search's
    finished hypotheses, best first (as in
    :func:`~transformer_edu.figures.beam_figures.beam_explorer`), and the
    cross-attention of the winner's teacher-forced re-run (mean of heads,
    last layer).

    Args:
        translator, korean, beam_size, alpha, padding, causal: as in
            :func:`translation_run` (with its ``pads``).

    Returns:
        The :class:`~transformer_edu.figures.controls.State`.
    """
    run = translation_run(
        translator, korean, pads=PAD_EXTRA, padding=padding, causal=causal,
        beam_size=beam_size, alpha=alpha,
    )  # fmt: skip
    hypotheses = run["hypotheses"]
    scored = [(t, s) for t, s in hypotheses if s is not None]
    bars = {
        "type": "bar",
        "orientation": "h",
        "x": [s for _, s in scored] or [0.0],
        "y": list(range(max(1, len(scored)))),
        "width": 0.4,
        "marker": {"color": "#08306b"},
    }
    notes = [
        {
            "text": f"{rank}. {text or '(nothing)'} ({score:.3f})",
            "xref": "paper", "x": 0, "y": rank - 1, "yshift": 7,
        }
        for rank, (text, score) in enumerate(scored, 1)
    ]  # fmt: skip
    if not scored:
        notes = [{"text": f"greedy: {hypotheses[0][0]}", "xref": "paper",
                  "x": 0, "y": 0, "yshift": 7}]  # fmt: skip
    rows = len(notes)
    last = translator.model.config.n_layers - 1
    cross = run["maps"][f"decoder.layers.{last}.cross_attn"].mean(0)  # (T, S)
    panels = [
        Panel(
            {
                "data": [bars],
                "layout": {
                    "xaxis": {"title": {"text": "score = log P(Y) / lp(Y)"}},
                    "yaxis": {
                        "range": [rows - 0.5, -0.95],
                        "showticklabels": False,
                    },
                    "annotations": notes,
                },
            },
            f"Finished hypotheses, K = {beam_size}, α = {alpha:g}",
            height=80 + 48 * rows,
        ),
        heatmap_panel(
            cross, run["target_in"], run["source"],
            title="cross-attention of the winner (last layer, mean of heads)",
            xlabel="Korean (key)", ylabel="English (query)",
        ),
    ]  # fmt: skip
    summary = (
        f"{korean} → {run['english']} (K = {beam_size}, α = {alpha:g}; "
        f"padding mask {'on' if padding else 'off'}, causal mask "
        f"{'on' if causal else 'off'} in the re-run)."
    )
    if run["grammar"]:
        summary += (
            " Outside the grammar the model learned, so its output is a "
            f"guess: {run['grammar']}"
        )
    details = f"re-run predicts: {' '.join(run['predictions'])}"
    return State(panels, summary, details)


def translator_playground(
    translator, korean: str = "어제 민수는 공원에서 책을 읽었다"
) -> LiveExplorer:
    """Chapter 8's playground: the translator on your sentence, with beam
    size, length penalty and the masks.

    Args:
        translator: the shipped translator.
        korean: the sentence shown first.

    Returns:
        The :class:`LiveExplorer` of :func:`beam_state`.
    """
    _check_translator(translator)
    return LiveExplorer(
        beam_state,
        title="The translator on your sentence",
        description="Beam search's finished hypotheses, best first (score "
        "closer to 0 is better), and where the winner's words look in the "
        f"source. The source gets {PAD_EXTRA} <pad> tokens; the padding "
        "mask applies to the search and the re-run, the causal mask to the "
        "re-run (a search always writes left to right).",
        controls=[
            Text("korean", korean, label="Korean"),
            Buttons(
                "beam_size",
                [1, 2, 4, 8],
                labels=["K = 1 (greedy)", "K = 2", "K = 4", "K = 8"],
                start=4,
                label="beam size",
            ),
            Slider(
                "alpha",
                [0.0, 0.3, 0.6, 1.0, 1.5, 2.0],
                start=0.6,
                label="length penalty α",
            ),
            Toggle("padding", True, label="padding mask"),
            Toggle("causal", True, label="causal mask"),
        ],
        fixed={"translator": translator},
    )
