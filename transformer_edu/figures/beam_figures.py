"""The figures of Chapter 8: the beam-search explorer and the beam state of the translator playground."""

from __future__ import annotations

from .. import _validate
from .controls import Buttons, Panel, Slider, State
from .explorer import Explorer

__all__ = ["beam_explorer"]


def _beam_explorer_states(
    translator, sentence: str, beam_sizes, alphas, max_len: int
) -> dict:
    """The finished hypotheses of every (beam size, α), best first."""
    # imported here: the earlier figures need no decoding
    from ..data import Vocab, pad_batch
    from ..decoding import beam_search_nbest, gnmt_length_penalty

    model = translator.model
    device = next(model.parameters()).device
    src = pad_batch(
        [translator.encode_source(sentence)], Vocab.pad_id, device
    )  # (1, S)
    states = {}
    for beam_size in beam_sizes:
        for alpha in alphas:
            hypotheses = beam_search_nbest(
                model,
                src,
                max_len=max_len,
                bos_id=Vocab.bos_id,
                eos_id=Vocab.eos_id,
                unk_id=Vocab.unk_id,
                beam_size=beam_size,
                length_penalty=alpha,
            )[0]
            states[beam_size, alpha] = [
                {
                    "text": translator.tgt_vocab.decode(list(h.tokens)),
                    "length": len(h.tokens),
                    # 3 decimals: enough to rank, the same on every machine
                    "log_prob": round(h.log_prob, 3) + 0.0,
                    "penalty": round(
                        float(gnmt_length_penalty(len(h.tokens), alpha)), 3
                    ),
                    "score": round(h.score, 3) + 0.0,
                    "finished": h.finished,
                }
                for h in hypotheses
            ]
    return states


def beam_explorer(
    translator,
    sentence: str,
    reference: str | None = None,
    beam_sizes: tuple[int, ...] = (1, 2, 4, 8),
    alphas: tuple[float, ...] = (0.0, 0.6, 1.0),
    start_beam_size: int = 4,
    start_alpha: float = 0.6,
    max_len: int | None = None,
    explorer_id: str = "ch08-beam-explorer",
) -> Explorer:
    """The beam-search explorer of Chapter 8, precomputed for the book.

    Runs :func:`~transformer_edu.decoding.beam_search_nbest` on ``sentence``
    for every beam size K and every length-penalty α, and draws the finished
    hypotheses of one setting as bars, best first, each hypothesis written
    above its bar: the bar is the score log P(Y) / lp(Y) used to rank them
    (closer to 0 is better); the hover text gives log P(Y), the length |Y|
    (EOS counted) and the penalty lp(Y) = ((5 + |Y|) / 6)^α. The winner is
    dark; hypotheses equal to ``reference`` carry a ✓. K = 1 is greedy.

    Args:
        translator: a :class:`~transformer_edu.translation.translator.Translator`
            (e.g. :func:`~transformer_edu.translation.pretrained.pretrained_translator`);
            for the same figure on every machine, put it on the CPU.
        sentence: the source sentence, words known to the translator.
        reference: the correct translation, to mark; optional.
        beam_sizes: the beam sizes offered, one button each (1 … 16).
        alphas: the length-penalty exponents offered by the slider (0 … 5).
        start_beam_size, start_alpha: the setting shown first.
        max_len: the most tokens per hypothesis; default as
            :meth:`~transformer_edu.translation.translator.Translator.translate`.
        explorer_id: the explorer's HTML id.

    Returns:
        The :class:`Explorer`; controls ``beam_size`` and ``alpha``. Each
        state's summary names the winner and its score.

    See Chapter 8.
    """
    wanted_attributes = (
        "model",
        "tgt_vocab",
        "check_words",
        "encode_source",
        "output_limit",
    )
    for name in wanted_attributes:
        if not hasattr(translator, name):
            raise TypeError(
                "translator must be a Translator (with model and "
                f"vocabularies), got {type(translator).__name__}"
            )
    if not isinstance(sentence, str) or not sentence.split():
        raise ValueError(
            "sentence must be a non-empty string of space-separated words, "
            f"got {sentence!r}"
        )
    translator.check_words(sentence)  # names unknown words, suggests others
    if reference is not None and not isinstance(reference, str):
        raise TypeError(
            f"reference must be a str or None, got {type(reference).__name__}"
        )
    beam_sizes = _validate.int_choices("beam_sizes", beam_sizes, 1, 16)
    if (
        isinstance(alphas, (str, bytes))
        or not hasattr(alphas, "__iter__")
        or not tuple(alphas)
    ):
        raise ValueError(
            f"alphas must be a non-empty sequence of numbers, got {alphas!r}"
        )
    alphas = tuple(alphas)
    for alpha in alphas:
        _validate.number_in_range("alphas' values", alpha, 0, 5)
    if len(set(alphas)) != len(alphas):
        raise ValueError(f"alphas must not repeat a value, got {alphas}")
    alphas = tuple(float(alpha) for alpha in alphas)
    if start_beam_size not in beam_sizes:
        raise ValueError(
            f"start_beam_size must be one of beam_sizes {beam_sizes}, "
            f"got {start_beam_size!r}"
        )
    if start_alpha not in alphas:
        raise ValueError(
            f"start_alpha must be one of alphas {alphas}, got {start_alpha!r}"
        )
    limit = translator.model.config.max_len
    if max_len is None:  # the translator's: source (EOS counted) + 50
        source_length = len(translator.encode_source(sentence))
        max_len = translator.output_limit(source_length)
    else:
        _validate.int_in_range("max_len", max_len, 1, limit, why=" (the model's)")

    computed = _beam_explorer_states(
        translator, sentence, beam_sizes, alphas, max_len
    )
    wanted = None if reference is None else reference.split()
    rows = max(len(hypotheses) for hypotheses in computed.values())
    lowest = min(
        min(h["score"] for h in hypotheses) for hypotheses in computed.values()
    )
    lowest = min(lowest, -0.1)

    def label(rank: int, h: dict) -> str:
        words = h["text"] or "(nothing: EOS first)"
        mark = " ✓" if wanted is not None and h["text"].split() == wanted else ""
        cut = "" if h["finished"] else " …"
        return f"{rank}. {words}{cut}{mark}"

    def draw(beam_size: int, alpha: float) -> State:
        hypotheses = computed[beam_size, alpha]
        hover = [
            f"{h['text'] or '(nothing)'}<br>log P = {h['log_prob']:.3f}, "
            f"|Y| = {h['length']}, lp = {h['penalty']:.3f}<br>"
            f"score = {h['score']:.3f}"
            + ("" if h["finished"] else "<br>cut off at max_len, no EOS")
            for h in hypotheses
        ]
        trace = {
            "type": "bar",
            "orientation": "h",
            "x": [h["score"] for h in hypotheses],
            "y": list(range(len(hypotheses))),
            "width": 0.4,
            "marker": {
                "color": ["#08306b"] + ["#6baed6"] * (len(hypotheses) - 1)
            },
            "hovertext": hover,
            "hoverinfo": "text",
            "showlegend": False,
        }
        annotations = [
            {
                "text": f"{label(rank, h)} ({h['score']:.2f})",
                "xref": "paper",
                "x": 0,
                "xanchor": "left",
                "yref": "y",
                "y": rank - 1,
                "yanchor": "bottom",
                "yshift": 7,
                "showarrow": False,
                "align": "left",
            }
            for rank, h in enumerate(hypotheses, start=1)
        ]
        layout = {
            "xaxis": {
                "title": {"text": "score = log P(Y) / lp(Y)"},
                "range": [round(1.15 * lowest, 3), 0.0],
                "zeroline": True,
            },
            "yaxis": {
                "range": [rows - 0.5, -0.95],
                "showticklabels": False,
                "showgrid": False,
                "zeroline": False,
            },
            "annotations": annotations,
            "margin": {"l": 12, "r": 12, "t": 8, "b": 48},
        }
        best = hypotheses[0]
        summary = (
            f"K = {beam_size}{' (greedy)' if beam_size == 1 else ''}, "
            f"α = {alpha:g}: {len(hypotheses)} hypotheses; the best is "
            f"“{best['text'] or '(nothing)'}” with score {best['score']:.3f}"
            + (
                ", the reference."
                if wanted is not None and best["text"].split() == wanted
                else "."
            )
        )
        return State(
            Panel(
                {"data": [trace], "layout": layout},
                f"Finished hypotheses for K = {beam_size}, α = {alpha:g}, "
                "best first",
                height=80 + 48 * rows,
            ),
            summary,
        )

    return Explorer(
        explorer_id,
        title=f"Beam search on “{sentence}”",
        description=(
            "The finished hypotheses of beam search, best first, for a beam "
            "size K and a length-penalty exponent α. Each bar is the score "
            "log P(Y) / lp(Y) that ranks them (closer to 0 is better); the "
            "winner is dark"
            + ("; ✓ marks the reference." if wanted is not None else ".")
        ),
        controls=[
            Buttons(
                "beam_size",
                beam_sizes,
                labels=[
                    f"K = {k}" + (" (greedy)" if k == 1 else "")
                    for k in beam_sizes
                ],
                label="beam size",
                start=start_beam_size,
            ),
            Slider(
                "alpha",
                alphas,
                labels=[f"{a:g}" for a in alphas],
                label="length penalty α",
                start=float(start_alpha),
            ),
        ],
        states=draw,
    )
