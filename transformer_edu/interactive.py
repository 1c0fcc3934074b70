"""Interactive figures that work without a kernel (the static HTML book, Colab, Jupyter).

ipywidgets need a running Python kernel, so in the published book they are
dead. Each chapter therefore also shows a Plotly figure *precomputed* from the
real package over the widget's settings, switched with Plotly's own buttons
(``updatemenus``) or sliders, which run in the browser alone.

:func:`show` displays such a figure. Its HTML is deterministic (a fixed div
id, numbers rounded to 4 decimals, no random ids), so ``pytest --nbval``
compares it across runs and across CPU and GPU. It uses the page's
``window.Plotly`` when there is one (the book serves ``plotly.min.js`` from its
own ``_static`` folder), and otherwise loads Plotly from its CDN first (Colab,
Jupyter).

Figures (one section per chapter; later chapters append theirs at the end):

- :func:`mask_explorer_figure`: padding and causal masks (Chapter 1).
- :func:`positional_explorer_figure`: the sinusoidal table and its rotations (Chapter 3).
- :func:`beam_explorer_figure`: beam search over beam sizes and length penalties (Chapter 8).
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.offline import get_plotlyjs_version
from plotly.subplots import make_subplots

from . import viz
from .attention import scaled_dot_product_attention
from .masks import causal_mask, padding_mask
from .positional import sinusoidal_table

__all__ = ["BOOK_TEMPLATE", "figure_html", "show", "rounded", "mask_explorer_figure", "positional_explorer_figure",
           "beam_explorer_figure"]

DECIMALS = 4
"""Digits kept for every number of a displayed figure."""

BOOK_TEMPLATE = go.layout.Template(
    layout=dict(
        font=dict(family="DejaVu Sans, NanumGothic, 'Noto Sans KR', sans-serif", size=12, color="#222222"),
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=60, r=20, t=60, b=50),
        hoverlabel=dict(font=dict(size=12)),
    )
)
"""A small Plotly template in the book's look. Plotly's default template is
avoided on purpose: it would add several kilobytes to every stored figure."""

_DIV_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


# ---------------------------------------------------------------------------
# Displaying a figure
# ---------------------------------------------------------------------------


def rounded(value, decimals: int = DECIMALS):
    """A JSON-ready copy of ``value`` with every float rounded to ``decimals`` places.

    Walks dicts, lists, tuples, NumPy arrays and tensors; ``-0.0`` becomes ``0.0``,
    so CPU and GPU runs produce the same text.
    """
    if isinstance(value, dict):
        return {key: rounded(item, decimals) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(item, decimals) for item in value]
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        return rounded(value.tolist(), decimals)
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return None  # JSON has no NaN / inf; Plotly draws None as a gap
        return round(value, decimals) + 0.0
    return value


def figure_html(fig: go.Figure, div_id: str) -> str:
    """The HTML fragment that draws ``fig`` into a ``<div id=div_id>``.

    Args:
        fig: a Plotly figure.
        div_id: a stable id, unique on its page (letters, digits, ``-``, ``_``).

    Returns:
        A ``<div>`` and a ``<script>``. The script draws with ``window.Plotly``
        when the page has it, and otherwise loads the matching plotly.js from
        the CDN first (with RequireJS where the page uses it, as the classic
        Jupyter notebook does).
    """
    if not isinstance(fig, go.Figure):
        raise TypeError(f"fig must be a plotly.graph_objects.Figure, got {type(fig).__name__}")
    if not isinstance(div_id, str) or not _DIV_ID.match(div_id):
        raise ValueError(
            f"div_id must start with a letter and hold only letters, digits, '-' and '_', got {div_id!r}"
        )
    spec = rounded(fig.to_plotly_json())
    height = spec.get("layout", {}).get("height") or 450
    payload = json.dumps(
        {"data": spec.get("data", []), "layout": spec.get("layout", {})},
        separators=(",", ":"),
        ensure_ascii=False,
    ).replace("</", "<\\/")  # a "</script>" inside a label must not end the script
    cdn = f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min"
    return f"""<div id="{div_id}" class="plotly-graph-div" style="height:{height}px; width:100%;"></div>
<script type="text/javascript">
(function () {{
  var figure = {payload};
  var config = {{"responsive": true, "displayModeBar": false}};
  function draw(Plotly) {{
    var element = document.getElementById("{div_id}");
    if (element) {{ Plotly.newPlot(element, figure.data, figure.layout, config); }}
  }}
  if (window.Plotly) {{ draw(window.Plotly); return; }}
  if (typeof window.requirejs === "function") {{
    window.requirejs.config({{paths: {{plotly: "{cdn}"}}}});
    window.requirejs(["plotly"], function (Plotly) {{ window.Plotly = Plotly; draw(Plotly); }});
    return;
  }}
  if (!window.__bookPlotlyLoading) {{
    window.__bookPlotlyLoading = new Promise(function (resolve, reject) {{
      var script = document.createElement("script");
      script.src = "{cdn}.js";
      script.onload = function () {{ resolve(window.Plotly); }};
      script.onerror = reject;
      document.head.appendChild(script);
    }});
  }}
  window.__bookPlotlyLoading.then(draw);
}})();
</script>"""


def show(fig: go.Figure, div_id: str) -> None:
    """Display ``fig`` as a kernel-free interactive figure (see :func:`figure_html`).

    The output has a ``text/html`` part (the figure) and a short
    ``text/plain`` part (its title), both deterministic.
    """
    from IPython.display import display

    html = figure_html(fig, div_id)
    title = fig.layout.title.text if fig.layout.title and fig.layout.title.text else div_id
    display({"text/html": html, "text/plain": f"<interactive figure: {_plain(title)}>"}, raw=True)


def _button_row(buttons: list[dict], active: int, y: float) -> dict:
    """A left-aligned row of toggle buttons above the plot (one ``updatemenus`` entry)."""
    return dict(type="buttons", direction="right", buttons=buttons, active=active, showactive=True,
                x=0.0, xanchor="left", y=y, yanchor="bottom", pad=dict(r=4, t=0))


def _slider(steps: list[dict], active: int, prefix: str, x: float, length: float, y: float, pad: int) -> dict:
    """A slider below the plot showing its current value after ``prefix`` (one ``sliders`` entry)."""
    return dict(steps=steps, active=active, currentvalue=dict(prefix=prefix), x=x, len=length, y=y,
                yanchor="top", pad=dict(t=pad))


def _plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", str(text))


# ---------------------------------------------------------------------------
# Chapter 1: the attention-mask explorer
# ---------------------------------------------------------------------------

_MASK_MODES = (
    ("no mask", False, False),
    ("padding mask", True, False),
    ("causal mask", False, True),
    ("padding + causal", True, True),
)


def _mask_explorer_states(
    tokens: list[str], max_pad: int, d_model: int, seed: int
) -> list[dict]:
    """Attention weights and output changes for every pad count and mask mode."""
    generator = torch.Generator().manual_seed(seed)
    vocab = sorted(set(tokens)) + ["<pad>"]
    embedding = torch.randn(len(vocab), d_model, generator=generator)  # one vector per word
    w_q, w_k, w_v = (torch.randn(d_model, d_model, generator=generator) / math.sqrt(d_model) for _ in range(3))
    pad_id = len(vocab) - 1

    def attend(n_pad: int, use_padding: bool, use_causal: bool):
        ids = torch.tensor([[vocab.index(t) for t in tokens] + [pad_id] * n_pad])  # (1, L)
        x = embedding[ids][:, None]  # (1, 1, L, D): batch and one head, as the masks expect
        allowed = torch.ones(1, 1, ids.shape[1], ids.shape[1], dtype=torch.bool)
        if use_padding:
            allowed = allowed & padding_mask(ids, pad_id)  # (1, 1, 1, L)
        if use_causal:
            allowed = allowed & causal_mask(ids.shape[1])  # (1, 1, L, L)
        out, weights = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, allowed)
        return out[0, 0], weights[0, 0], allowed[0, 0].expand_as(weights[0, 0])  # (L, D), (L, L), (L, L)

    states = []
    for n_pad in range(max_pad + 1):
        panels = []
        for name, use_padding, use_causal in _MASK_MODES:
            out, weights, allowed = attend(n_pad, use_padding, use_causal)
            reference, _, _ = attend(0, use_padding, use_causal)  # the same sentence without padding
            moved = (out[: len(tokens)] - reference).norm(dim=-1).max().item()
            panels.append({"name": name, "weights": weights, "allowed": allowed, "moved": moved})
        states.append({"n_pad": n_pad, "labels": tokens + ["<pad>"] * n_pad, "panels": panels})
    return states


def mask_explorer_figure(
    sentence: str = "the cat sat on the mat",
    max_pad: int = 3,
    start_pad: int = 2,
    d_model: int = 16,
    seed: int = 0,
) -> go.Figure:
    """The attention-mask explorer of Chapter 1, precomputed for the static book.

    A real sentence, embedded with a seeded random table and projected by
    seeded random W_Q, W_K, W_V, goes through
    :func:`~transformer_edu.scaled_dot_product_attention` with four masks side
    by side: none, padding (:func:`~transformer_edu.padding_mask`), causal
    (:func:`~transformer_edu.causal_mask`) and both. Two rows of buttons:

    - the first chooses how many ``<pad>`` tokens follow the sentence (0 … ``max_pad``);
      it changes the plotted weights;
    - the second highlights one query token's row in every panel.

    Each panel's title gives how far the real tokens' outputs moved compared
    with the unpadded sentence (the largest norm of the change): 0 exactly
    when the mask keeps the pads out. Blocked cells are empty (grey).

    Args:
        sentence: space-separated tokens.
        max_pad: the largest number of pad tokens offered (0 … 8).
        start_pad: the number of pads shown first.
        d_model: width of the random embeddings.
        seed: seed of the embeddings and projections.

    Returns:
        The figure; display it with :func:`show`.
    """
    if not isinstance(sentence, str) or not sentence.split():
        raise ValueError(f"sentence must be a non-empty string of space-separated tokens, got {sentence!r}")
    tokens = sentence.split()
    if "<pad>" in tokens:
        raise ValueError("sentence must not contain '<pad>': the figure adds the pads itself")
    if isinstance(max_pad, bool) or not isinstance(max_pad, int) or not 0 <= max_pad <= 8:
        raise ValueError(f"max_pad must be an int in 0 … 8, got {max_pad!r}")
    if isinstance(start_pad, bool) or not isinstance(start_pad, int) or not 0 <= start_pad <= max_pad:
        raise ValueError(f"start_pad must be an int in 0 … max_pad = {max_pad}, got {start_pad!r}")
    if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model < 1:
        raise ValueError(f"d_model must be a positive int, got {d_model!r}")
    states = _mask_explorer_states(tokens, max_pad, d_model, seed)

    titles = [panel["name"] for panel in states[start_pad]["panels"]]
    fig = make_subplots(rows=2, cols=2, subplot_titles=titles, horizontal_spacing=0.12, vertical_spacing=0.2)
    colorscale = viz.plotly_colorscale()

    def trace_values(state: dict, panel: dict) -> tuple[list, list, list]:
        weights = panel["weights"].numpy().round(DECIMALS)
        z = np.where(panel["allowed"].numpy(), weights, np.nan)  # blocked cells: a gap
        labels = state["labels"]
        text = [
            [
                f"query {labels[i]} → key {labels[j]}: "
                + (f"{weights[i, j]:.4f}" if panel["allowed"][i, j] else "blocked")
                for j in range(len(labels))
            ]
            for i in range(len(labels))
        ]
        positions = list(range(len(labels)))
        return rounded(z), positions, text

    first = states[start_pad]
    for index, panel in enumerate(first["panels"]):
        z, positions, text = trace_values(first, panel)
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=positions,
                y=positions,
                text=text,
                hoverinfo="text",
                colorscale=colorscale,
                zmin=0.0,
                zmax=1.0,
                showscale=index == 0,
                colorbar=dict(title=dict(text="weight"), len=0.9, thickness=12),
                xgap=1,
                ygap=1,
            ),
            row=index // 2 + 1,
            col=index % 2 + 1,
        )

    def axis_layout(state: dict) -> dict:
        labels = state["labels"]
        positions = list(range(len(labels)))
        layout = {}
        for index in range(4):
            suffix = "" if index == 0 else str(index + 1)
            layout[f"xaxis{suffix}.tickvals"] = positions
            layout[f"xaxis{suffix}.ticktext"] = labels
            layout[f"xaxis{suffix}.range"] = [-0.5, len(labels) - 0.5]
            layout[f"yaxis{suffix}.tickvals"] = positions
            layout[f"yaxis{suffix}.ticktext"] = labels
            layout[f"yaxis{suffix}.range"] = [len(labels) - 0.5, -0.5]  # query 0 at the top
        return layout

    subplot_titles = [a.to_plotly_json() for a in fig.layout.annotations]
    menu_labels = [
        dict(text=text, xref="paper", yref="paper", x=0.0, y=y, xanchor="right", yanchor="bottom",
             showarrow=False, font=dict(size=12), yshift=6)
        for text, y in (("pads", 1.16), ("query", 1.09))
    ]

    def titles_for(state: dict) -> list[dict]:
        annotations = [dict(a) for a in subplot_titles]
        for annotation, panel in zip(annotations, state["panels"]):
            annotation["text"] = f"{panel['name']}<br><sub>real outputs moved by {panel['moved']:.4f}</sub>"
        return annotations + menu_labels

    pad_buttons = []
    for state in states:
        columns = [trace_values(state, panel) for panel in state["panels"]]
        restyle = {
            "z": [c[0] for c in columns],
            "x": [c[1] for c in columns],
            "y": [c[1] for c in columns],
            "text": [c[2] for c in columns],
        }
        relayout = {**axis_layout(state), "annotations": titles_for(state)}
        n_pad = state["n_pad"]
        pad_buttons.append(
            dict(label=f"{n_pad} pad{'s' if n_pad != 1 else ''}", method="update", args=[restyle, relayout])
        )

    def row_box(query: int) -> list[dict]:
        return [
            dict(
                type="rect",
                xref=f"x{'' if i == 0 else i + 1} domain",
                yref=f"y{'' if i == 0 else i + 1}",
                x0=0,
                x1=1,
                y0=query - 0.5,
                y1=query + 0.5,
                line=dict(color="#d62728", width=2),
            )
            for i in range(4)
        ]

    query_buttons = [dict(label="no query", method="relayout", args=[{"shapes": []}])] + [
        dict(label=token, method="relayout", args=[{"shapes": row_box(q)}]) for q, token in enumerate(tokens)
    ]

    fig.update_layout(axis_layout(first))
    fig.update_layout(
        template=BOOK_TEMPLATE,
        title=dict(text="Attention weights under four masks<br><sup>rows: queries, columns: keys</sup>",
                   x=0.0, xref="paper", xanchor="left", y=0.975, yanchor="top", yref="container"),
        height=780,
        margin=dict(t=180, l=70, r=20, b=60),
        updatemenus=[
            _button_row(pad_buttons, active=start_pad, y=1.16),
            _button_row(query_buttons, active=0, y=1.09),
        ],
    )
    fig.layout.annotations = titles_for(first)
    # Blocked cells are gaps in the heatmap, so the grey background shows through.
    fig.update_layout(plot_bgcolor=viz.BLOCKED_COLOR)
    fig.update_xaxes(tickangle=-45, showgrid=False, zeroline=False)
    fig.update_yaxes(showgrid=False, zeroline=False)
    return fig


# ---------------------------------------------------------------------------
# Chapter 3: the positional-encoding explorer
# ---------------------------------------------------------------------------


def _int_choices(name: str, values, low: int, high: int) -> tuple[int, ...]:
    """``values`` as a tuple of distinct ints in ``low … high``, else raise."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of ints, got {type(values).__name__} ({values!r})")
    values = tuple(values)
    if not values:
        raise ValueError(f"{name} must hold at least one value, got an empty sequence")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{name} must hold ints in {low} … {high}, got {value!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a value, got {values}")
    return values


def _pair_turns(k: int, d_model: int) -> torch.Tensor:
    """The angle k · ω_i in degrees (0 … 360) by which M_k turns each pair i.  (d_model / 2,)"""
    omega = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    return torch.remainder(k * omega, 2 * math.pi) * (180.0 / math.pi)


def positional_explorer_figure(
    d_models: tuple[int, ...] = (16, 32, 64, 128),
    max_len: int = 48,
    positions: tuple[int, ...] = (0, 1, 5, 10, 20, 40),
    offsets: tuple[int, ...] = (1, 2, 5, 10, 20, 50),
    start_d_model: int = 64,
) -> go.Figure:
    """The sinusoidal-encoding explorer of Chapter 3, precomputed for the static book.

    Three panels computed with :func:`~transformer_edu.sinusoidal_table`:

    - top: the table, positions down and dimensions across, with one
      position's row outlined;
    - bottom left: that position's encoding, sines in the even dimensions and
      cosines in the odd ones;
    - bottom right: the rotation M_k with PE(pos + k) = M_k PE(pos), as the
      angle k · ω_i (in degrees, modulo 360) by which it turns each pair i.

    Buttons choose d_model; one slider chooses the outlined position, another
    the offset k. Each control changes its own part of the figure (the
    buttons which width is visible, the sliders the data of every width), so
    they combine freely.

    Args:
        d_models: the widths offered, one button each (even, 2 … 512).
        max_len: the number of positions in the table (1 … 512).
        positions: the positions offered by the first slider (0 … max_len − 1).
        offsets: the offsets k offered by the second slider (0 … 10000).
        start_d_model: the width shown first; one of ``d_models``.

    Returns:
        The figure; display it with :func:`show`.
    """
    d_models = _int_choices("d_models", d_models, 2, 512)
    odd = [d for d in d_models if d % 2]
    if odd:
        raise ValueError(f"d_models must be even (sines and cosines come in pairs), got {odd}")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or not 1 <= max_len <= 512:
        raise ValueError(f"max_len must be an int in 1 … 512, got {max_len!r}")
    positions = _int_choices("positions", positions, 0, max_len - 1)
    offsets = _int_choices("offsets", offsets, 0, 10_000)
    if start_d_model not in d_models:
        raise ValueError(f"start_d_model must be one of d_models {d_models}, got {start_d_model!r}")

    tables = {d: sinusoidal_table(max_len, d) for d in d_models}  # (max_len, d) each
    start_position, start_offset = positions[0], offsets[0]
    n = len(d_models)
    fig = make_subplots(
        rows=2,
        cols=2,
        specs=[[{"colspan": 2}, None], [{}, {}]],
        row_heights=[0.56, 0.44],
        vertical_spacing=0.18,
        horizontal_spacing=0.12,
        subplot_titles=(
            "the table: one row per position",
            "the outlined row<br><sub>● sin (even dimensions), ■ cos (odd dimensions)</sub>",
            "M<sub>k</sub> turns pair i by k·ω<sub>i</sub><br><sub>PE(pos + k) = M<sub>k</sub> PE(pos)</sub>",
        ),
    )

    def row_values(d: int, position: int) -> tuple[list, list]:
        row = tables[d][position]
        return rounded(row[0::2]), rounded(row[1::2])  # sines, cosines

    for d in d_models:  # traces 0 … n − 1: the tables
        fig.add_trace(
            go.Heatmap(
                z=rounded(tables[d]),
                x=list(range(d)),
                y=list(range(max_len)),
                colorscale=viz.plotly_colorscale(viz.DIVERGING_CMAP),
                zmin=-1.0,
                zmax=1.0,
                colorbar=dict(title=dict(text="value"), len=0.5, y=0.78, thickness=12),
                hovertemplate="position %{y}, dimension %{x}: %{z:.4f}<extra></extra>",
                visible=d == start_d_model,
            ),
            row=1,
            col=1,
        )
    curves = (("sin (even dimensions)", "circle", "#1f77b4"), ("cos (odd dimensions)", "square", "#ff7f0e"))
    for column, (name, symbol, color) in enumerate(curves):
        for d in d_models:  # traces n … 2n − 1: sines; 2n … 3n − 1: cosines
            fig.add_trace(
                go.Scatter(
                    x=list(range(column, d, 2)),
                    y=row_values(d, start_position)[column],
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    marker=dict(symbol=symbol, size=5, color=color),
                    line=dict(width=1, color=color),
                    hovertemplate="dimension %{x}: %{y:.4f}<extra></extra>",
                    showlegend=False,
                    visible=d == start_d_model,
                ),
                row=2,
                col=1,
            )
    for d in d_models:  # traces 3n … 4n − 1: the turn of each pair
        fig.add_trace(
            go.Bar(
                x=list(range(d // 2)),
                y=rounded(_pair_turns(start_offset, d)),
                marker=dict(color="#2ca02c"),
                hovertemplate="pair %{x}: turns by %{y:.1f}°<extra></extra>",
                showlegend=False,
                visible=d == start_d_model,
            ),
            row=2,
            col=2,
        )

    def outline(position: int) -> list[dict]:
        return [
            dict(type="rect", xref="x domain", yref="y", x0=0, x1=1, y0=position - 0.5, y1=position + 0.5,
                 line=dict(color="black", width=2))
        ]

    width_buttons = [
        dict(
            label=f"d_model = {d}",
            method="restyle",
            args=[{"visible": [d == shown for _ in range(4) for shown in d_models]}],
        )
        for d in d_models
    ]
    row_traces = list(range(n, 3 * n))
    position_steps = [
        dict(
            label=str(position),
            method="update",
            args=[
                {"y": [row_values(d, position)[0] for d in d_models] + [row_values(d, position)[1] for d in d_models]},
                {"shapes": outline(position)},
                row_traces,
            ],
        )
        for position in positions
    ]
    bar_traces = list(range(3 * n, 4 * n))
    offset_steps = [
        dict(label=str(k), method="restyle", args=[{"y": [rounded(_pair_turns(k, d)) for d in d_models]}, bar_traces])
        for k in offsets
    ]

    fig.update_layout(
        template=BOOK_TEMPLATE,
        title=dict(text="Sinusoidal encoding: pick d_model, a position, an offset k",
                   x=0.0, xanchor="left", y=0.985, yanchor="top", yref="container"),
        height=780,
        margin=dict(t=120, l=60, r=20, b=110),
        shapes=outline(start_position),
        updatemenus=[
            _button_row(width_buttons, active=d_models.index(start_d_model), y=1.09),
        ],
        sliders=[
            _slider(position_steps, active=0, prefix="position: ", x=0.0, length=0.44, y=-0.06, pad=10),
            _slider(offset_steps, active=0, prefix="offset k: ", x=0.56, length=0.44, y=-0.06, pad=10),
        ],
    )
    fig.update_yaxes(autorange="reversed", title_text="position", row=1, col=1)
    fig.update_xaxes(title_text="dimension", row=1, col=1)
    fig.update_xaxes(title_text="dimension", row=2, col=1)
    fig.update_yaxes(range=[-1.1, 1.1], title_text="value", row=2, col=1)
    fig.update_xaxes(title_text="pair i", row=2, col=2)
    fig.update_yaxes(range=[0, 360], tickvals=[0, 90, 180, 270, 360], title_text="degrees", row=2, col=2)
    fig.update_xaxes(showgrid=False, zeroline=False)
    return fig


# ---------------------------------------------------------------------------
# Chapter 8: the beam-search explorer
# ---------------------------------------------------------------------------


def _beam_explorer_states(translator, sentence: str, beam_sizes, alphas, max_len: int) -> dict:
    """The finished hypotheses of every (beam size, α), best first, as plain rounded values."""
    from .data import Vocab, pad_batch  # imported here: the earlier figures need no decoding
    from .decoding import beam_search_nbest, gnmt_length_penalty

    model = translator.model
    src = pad_batch([translator.src_vocab.encode(sentence)], Vocab.pad_id, next(model.parameters()).device)  # (1, S)
    states = {}
    for beam_size in beam_sizes:
        for alpha in alphas:
            hypotheses = beam_search_nbest(model, src, max_len=max_len, bos_id=Vocab.bos_id, eos_id=Vocab.eos_id,
                                           unk_id=Vocab.unk_id, beam_size=beam_size, length_penalty=alpha)[0]
            states[beam_size, alpha] = [
                {
                    "text": translator.tgt_vocab.decode(list(h.tokens)),
                    "length": len(h.tokens),
                    # 3 decimals: enough to rank, and the same numbers on every machine
                    "log_prob": round(h.log_prob, 3) + 0.0,
                    "penalty": round(float(gnmt_length_penalty(len(h.tokens), alpha)), 3),
                    "score": round(h.score, 3) + 0.0,
                    "finished": h.finished,
                }
                for h in hypotheses
            ]
    return states


def beam_explorer_figure(
    translator,
    sentence: str,
    reference: str | None = None,
    beam_sizes: tuple[int, ...] = (1, 2, 4, 8),
    alphas: tuple[float, ...] = (0.0, 0.6, 1.0),
    start_beam_size: int = 4,
    start_alpha: float = 0.6,
    max_len: int | None = None,
) -> go.Figure:
    """The beam-search explorer of Chapter 8, precomputed for the static book.

    Runs :func:`~transformer_edu.decoding.beam_search_nbest` on ``sentence``
    for every beam size K and every length-penalty α, and draws the finished
    hypotheses of one setting as bars, best first: the bar is the score
    log P(Y) / lp(Y) used to rank them (closer to 0 is better), the hover
    text gives log P(Y), the length |Y| (EOS counted) and the penalty
    lp(Y) = ((5 + |Y|) / 6)^α. The winner is dark; hypotheses equal to
    ``reference`` carry a ✓.

    Buttons choose K (which bars are visible), a slider chooses α (the
    data of every K), so the two combine freely. K = 1 is greedy decoding.

    Args:
        translator: a :class:`~transformer_edu.translator.Translator`
            (e.g. :func:`~transformer_edu.pretrained.pretrained_translator`);
            for the same figure on every machine, put it on the CPU.
        sentence: the source sentence, words known to the translator.
        reference: the correct translation, to mark; optional.
        beam_sizes: the beam sizes offered, one button each (1 … 16).
        alphas: the length-penalty exponents offered by the slider (0 … 5).
        start_beam_size, start_alpha: the setting shown first.
        max_len: the most tokens per hypothesis; default as
            :meth:`~transformer_edu.translator.Translator.translate`.

    Returns:
        The figure; display it with :func:`show`.

    See Chapter 8.
    """
    for name in ("model", "src_vocab", "tgt_vocab", "check_words"):
        if not hasattr(translator, name):
            raise TypeError(
                f"translator must be a Translator (with model and vocabularies), got {type(translator).__name__}"
            )
    if not isinstance(sentence, str) or not sentence.split():
        raise ValueError(f"sentence must be a non-empty string of space-separated words, got {sentence!r}")
    translator.check_words(sentence)  # names unknown words and suggests known ones
    if reference is not None and not isinstance(reference, str):
        raise TypeError(f"reference must be a str or None, got {type(reference).__name__}")
    beam_sizes = _int_choices("beam_sizes", beam_sizes, 1, 16)
    if isinstance(alphas, (str, bytes)) or not hasattr(alphas, "__iter__") or not tuple(alphas):
        raise ValueError(f"alphas must be a non-empty sequence of numbers, got {alphas!r}")
    alphas = tuple(alphas)
    for alpha in alphas:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 5:
            raise ValueError(f"alphas must hold numbers in 0 … 5, got {alpha!r}")
    if len(set(alphas)) != len(alphas):
        raise ValueError(f"alphas must not repeat a value, got {alphas}")
    if start_beam_size not in beam_sizes:
        raise ValueError(f"start_beam_size must be one of beam_sizes {beam_sizes}, got {start_beam_size!r}")
    if start_alpha not in alphas:
        raise ValueError(f"start_alpha must be one of alphas {alphas}, got {start_alpha!r}")
    limit = translator.model.config.max_len
    if max_len is None:
        max_len = min(2 * (len(sentence.split()) + 1) + 10, limit)  # the source counts its EOS
    elif isinstance(max_len, bool) or not isinstance(max_len, int) or not 1 <= max_len <= limit:
        raise ValueError(f"max_len must be an int in 1 … {limit} (the model's max_len), got {max_len!r}")

    states = _beam_explorer_states(translator, sentence, beam_sizes, alphas, max_len)
    wanted = None if reference is None else reference.split()

    def bars(beam_size: int, alpha: float) -> dict:
        hypotheses = states[beam_size, alpha]
        labels, hover, colors = [], [], []
        for rank, h in enumerate(hypotheses, start=1):
            words = h["text"] or "(nothing: EOS first)"
            mark = " ✓" if wanted is not None and h["text"].split() == wanted else ""
            cut = "" if h["finished"] else " …"
            labels.append(f"{rank}. {words}{cut}{mark}")
            hover.append(
                f"{words}<br>log P = {h['log_prob']:.3f}, |Y| = {h['length']}, lp = {h['penalty']:.3f}"
                f"<br>score = {h['score']:.3f}" + ("" if h["finished"] else "<br>cut off at max_len, no EOS")
            )
            colors.append("#08306b" if rank == 1 else "#6baed6")
        return {
            "x": [h["score"] for h in hypotheses],
            "y": labels,
            "text": [f"{h['score']:.2f}" for h in hypotheses],
            "hovertext": hover,
            "colors": colors,
        }

    fig = go.Figure()
    for beam_size in beam_sizes:  # one trace per beam size; the buttons choose the visible one
        values = bars(beam_size, start_alpha)
        fig.add_trace(
            go.Bar(
                x=values["x"],
                y=values["y"],
                orientation="h",
                text=values["text"],
                textposition="outside",
                hovertext=values["hovertext"],
                hoverinfo="text",
                marker=dict(color=values["colors"]),
                name=f"K = {beam_size}",
                showlegend=False,
                visible=beam_size == start_beam_size,
            )
        )

    lowest = min(h["score"] for hypotheses in states.values() for h in hypotheses)
    buttons = [
        dict(label=f"K = {beam_size}" + (" (greedy)" if beam_size == 1 else ""), method="restyle",
             args=[{"visible": [k == beam_size for k in beam_sizes]}])
        for beam_size in beam_sizes
    ]
    steps = []
    for alpha in alphas:
        columns = [bars(beam_size, alpha) for beam_size in beam_sizes]
        steps.append(
            dict(
                label=f"{alpha:g}",
                method="restyle",
                args=[{
                    "x": [c["x"] for c in columns],
                    "y": [c["y"] for c in columns],
                    "text": [c["text"] for c in columns],
                    "hovertext": [c["hovertext"] for c in columns],
                    "marker.color": [c["colors"] for c in columns],
                }],
            )
        )
    rows = max(len(hypotheses) for hypotheses in states.values())
    fig.update_layout(
        template=BOOK_TEMPLATE,
        title=dict(text=f"Beam search on “{sentence}” <br><sub>finished hypotheses, best first; "
                        "score = log P(Y) / lp(Y), closer to 0 is better</sub>",
                   x=0.0, xanchor="left", y=0.96, yanchor="top", yref="container"),
        height=260 + 34 * rows,
        margin=dict(t=120, l=20, r=20, b=80),
        xaxis=dict(title=dict(text="score"), range=[1.25 * lowest, 0.0], zeroline=True, showgrid=True),
        yaxis=dict(autorange="reversed", automargin=True, type="category"),
        bargap=0.35,
        updatemenus=[
            _button_row(buttons, active=beam_sizes.index(start_beam_size), y=1.02),
        ],
        sliders=[
            _slider(steps, active=alphas.index(start_alpha), prefix="length penalty α: ", x=0.0, length=1.0,
                    y=-0.08, pad=30),
        ],
    )
    return fig
