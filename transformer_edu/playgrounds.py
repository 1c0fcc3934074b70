"""Live explorers: the book's figures recomputed in a running kernel.

A kernel-free :class:`~transformer_edu.interactive.Explorer` shows states
computed when the notebook was executed; the HTML book can show nothing else.
In Jupyter or Colab a :class:`LiveExplorer` calls the *same* states function
with the reader's inputs and redraws: type your own tokens or sentence,
switch a mask, pass in the attention function you just wrote. One API, two
modes::

    explorer = ix.positional_explorer()   # precomputed: the HTML book
    explorer.live()                       # the same function, live
    playgrounds.mask_playground(attention=my_attention)  # Chapter 1

Where each works:

- the kernel-free explorer: in the HTML book, and in a trusted notebook
  (Jupyter, Colab) that can load Plotly;
- a live explorer: in a running kernel only (Jupyter, JupyterLab, Colab,
  VS Code). It uses core ipywidgets only (text boxes, check boxes, toggle
  buttons, sliders, drop-downs and an ``Output``), which Colab renders without
  a custom widget manager, and it draws each state with Matplotlib as a PNG
  image: Plotly figures inside an ``Output`` widget do not reliably draw in
  Colab (googlecolab/colabtools issues 1458 and 5889), a PNG does everywhere.
  In the HTML book the cell shows a line of text naming its controls
  (``scripts/execute_notebooks.py`` stores it), never a dead widget.

Controls: the explorer's own :class:`~transformer_edu.interactive.Buttons`,
:class:`~transformer_edu.interactive.Slider` and
:class:`~transformer_edu.interactive.Select` (a toggle-button row, a selection
slider, a drop-down), and two that only a kernel can answer: :class:`Text`
(a text box, read when Enter is pressed) and :class:`Toggle` (a check box).

The figures of a live explorer are the states' Plotly panels drawn by
:func:`render_state` (heatmaps, bars, lines, outlines); the printed lines
under them are the state's ``summary`` and ``details``.

The chapters' playgrounds: :func:`mask_playground` (Chapter 1),
:func:`heads_playground` (Chapter 2), :func:`positional_playground`
(Chapter 3), :func:`decoder_playground` (Chapter 6),
:func:`attention_playground` (Chapter 7) and :func:`translator_playground`
(Chapter 8).
"""

from __future__ import annotations

import io
import math
import zlib
from collections.abc import Callable, Mapping, Sequence

import matplotlib
import numpy as np
import torch
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from . import interactive as ix
from . import viz
from .attention import MultiHeadAttention, scaled_dot_product_attention
from .masks import causal_mask, padding_mask

__all__ = [
    "MAX_TOKENS",
    "PAD_EXTRA",
    "LiveExplorer",
    "Text",
    "Toggle",
    "attention_playground",
    "beam_state",
    "decoder_playground",
    "heads_playground",
    "heads_state",
    "mask_playground",
    "mask_state",
    "positional_playground",
    "render_state",
    "translation_run",
    "translation_state",
    "translator_playground",
]


# ---------------------------------------------------------------------------
# Controls that only a kernel can answer
# ---------------------------------------------------------------------------


def _name(kind: str, name) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            f"{kind} name must be a Python identifier (it is the keyword of "
            f"the states function), got {name!r}"
        )
    return name


def _label(kind: str, name: str, label) -> str:
    label = name.replace("_", " ") if label is None else label
    if not isinstance(label, str) or not label.strip():
        raise ValueError(
            f"{kind} {name!r}: label must be a non-empty string, got {label!r}"
        )
    return label


class Text:
    """A text box; the states function receives its text when Enter is
    pressed (or the box loses focus).

    Args:
        name: the keyword under which ``states`` receives the text.
        value: the text shown first.
        label: the box's visible name (default: ``name``).
    """

    def __init__(self, name: str, value: str, *, label: str | None = None):
        self.name = _name("Text", name)
        if not isinstance(value, str):
            raise TypeError(
                f"Text {name!r}: value must be a str, got "
                f"{type(value).__name__}"
            )
        self.label = _label("Text", name, label)
        self.start = value

    def __repr__(self) -> str:
        return f"Text({self.name!r}, {self.start!r})"


class Toggle:
    """A check box; the states function receives ``True`` or ``False``.

    Args:
        name: the keyword under which ``states`` receives the value.
        value: checked first (default ``True``).
        label: the box's visible name (default: ``name``).
    """

    def __init__(self, name: str, value: bool = True, *, label=None):
        self.name = _name("Toggle", name)
        if not isinstance(value, bool):
            raise TypeError(
                f"Toggle {name!r}: value must be a bool, got {value!r}"
            )
        self.label = _label("Toggle", name, label)
        self.start = value

    def __repr__(self) -> str:
        return f"Toggle({self.name!r}, {self.start!r})"


_CONTROLS = (ix.Buttons, ix.Slider, ix.Select, Text, Toggle)


def _widget(control):
    """The ipywidgets control for one of ours (core widgets only)."""
    import ipywidgets as widgets

    style = {"description_width": "initial"}
    if isinstance(control, Text):
        return widgets.Text(
            value=control.start,
            description=control.label,
            continuous_update=False,
            style=style,
            layout=widgets.Layout(width="32em"),
        )
    if isinstance(control, Toggle):
        return widgets.Checkbox(
            value=control.start,
            description=control.label,
            indent=False,
            layout=widgets.Layout(width="auto"),
        )
    options = list(zip(control.labels, control.values))
    if isinstance(control, ix.Buttons):
        return widgets.ToggleButtons(
            options=options,
            value=control.start,
            description=control.label,
            style={**style, "button_width": "auto"},
        )
    if isinstance(control, ix.Slider):
        return widgets.SelectionSlider(
            options=options,
            value=control.start,
            description=control.label,
            continuous_update=False,
            style=style,
        )
    return widgets.Dropdown(
        options=options,
        value=control.start,
        description=control.label,
        style=style,
    )


# ---------------------------------------------------------------------------
# Drawing a state with Matplotlib
# ---------------------------------------------------------------------------

_PX = 96.0  # Plotly px per inch of the live figure
_MARKERS = {"circle": "o", "square": "s", "diamond": "D", "x": "x"}


def _text(value) -> str:
    if isinstance(value, Mapping):
        return str(value.get("text", ""))
    return "" if value is None else str(value)


def _colormap(colorscale) -> LinearSegmentedColormap:
    return LinearSegmentedColormap.from_list(
        "panel", [(float(level), color) for level, color in colorscale]
    )


def _grid(trace: dict, name: str, size: int) -> np.ndarray:
    values = np.asarray(trace.get(name, range(size)), dtype=float)
    if values.size != size:
        raise ValueError(
            f"a heatmap's {name} has {values.size} values for {size} cells"
        )
    return values


def _heatmap(figure: Figure, ax, trace: dict) -> None:
    z = np.array(
        [[np.nan if v is None else v for v in row] for row in trace["z"]],
        dtype=float,
    )  # (R, C), NaN where blocked
    x = _grid(trace, "x", z.shape[1])
    y = _grid(trace, "y", z.shape[0])
    step_x = x[1] - x[0] if x.size > 1 else 1.0
    step_y = y[1] - y[0] if y.size > 1 else 1.0
    image = ax.imshow(
        np.ma.masked_invalid(z),
        cmap=_colormap(trace["colorscale"]),
        vmin=trace.get("zmin"),
        vmax=trace.get("zmax"),
        aspect="auto",
        interpolation="nearest",
        origin="lower",
        extent=(
            x[0] - step_x / 2,
            x[-1] + step_x / 2,
            y[0] - step_y / 2,
            y[-1] + step_y / 2,
        ),
    )
    if trace.get("showscale", True):
        bar = figure.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
        bar.set_label(_text(trace.get("colorbar", {}).get("title")))


def _scatter(ax, trace: dict) -> None:
    mode = trace.get("mode", "lines+markers")
    marker = trace.get("marker", {})
    ax.plot(
        trace["x"],
        trace["y"],
        linestyle="-" if "lines" in mode else "none",
        marker=_MARKERS.get(marker.get("symbol"), "o")
        if "markers" in mode
        else None,
        markersize=marker.get("size", 6) / 2,
        color=marker.get("color") or trace.get("line", {}).get("color"),
        linewidth=trace.get("line", {}).get("width", 1.5),
        label=trace.get("name"),
    )


def _bar(ax, trace: dict) -> None:
    color = trace.get("marker", {}).get("color", "#1f77b4")
    width = trace.get("width", 0.8)
    if trace.get("orientation") == "h":
        ax.barh(trace["y"], trace["x"], height=width, color=color)
    else:
        ax.bar(trace["x"], trace["y"], width=width, color=color)


def _axis(ax, which: str, spec: dict) -> None:
    set_label = ax.set_xlabel if which == "x" else ax.set_ylabel
    set_label(_text(spec.get("title")))
    if "tickvals" in spec:
        ticks = ax.set_xticks if which == "x" else ax.set_yticks
        labels = spec.get("ticktext") or [f"{v:g}" for v in spec["tickvals"]]
        rotation = -spec.get("tickangle", 0) if which == "x" else 0
        ticks(
            spec["tickvals"],
            labels,
            rotation=rotation,
            ha="right" if rotation else "center",
        )
    if spec.get("showticklabels") is False:
        ax.tick_params(axis=which, labelbottom=False, labelleft=False)
    limits = ax.set_xlim if which == "x" else ax.set_ylim
    if spec.get("range"):
        limits(*spec["range"])
    elif spec.get("autorange") == "reversed":
        low, high = (ax.get_xlim if which == "x" else ax.get_ylim)()
        limits(max(low, high), min(low, high))


def _shapes(ax, layout: dict) -> None:
    for shape in layout.get("shapes", []):
        if shape.get("type") != "rect" or shape.get("yref") != "y":
            continue
        low, high = ax.get_xlim()
        ax.add_patch(
            Rectangle(
                (min(low, high), shape["y0"]),
                abs(high - low),
                shape["y1"] - shape["y0"],
                fill=False,
                edgecolor=shape.get("line", {}).get("color", "black"),
                linewidth=shape.get("line", {}).get("width", 2),
                clip_on=False,
            )
        )


def _annotations(ax, layout: dict) -> None:
    for note in layout.get("annotations", []):
        on_axes = note.get("xref") == "paper"
        ax.annotate(
            _text(note.get("text")),
            (note.get("x", 0), note.get("y", 0)),
            xycoords=ax.get_yaxis_transform() if on_axes else "data",
            xytext=(0, note.get("yshift", 0)),
            textcoords="offset points",
            ha=note.get("xanchor", "left"),
            va="bottom",
            fontsize=8,
        )


def render_state(state: ix.State, *, width: float = 10.0) -> Figure:
    """Draw a state's panels with Matplotlib, as the live mode shows them.

    The same Plotly traces the kernel-free explorer draws: heatmaps (blocked
    cells empty, on the panel's background), bars (vertical or horizontal),
    lines and markers; axis titles, tick labels and ranges, outlined rows and
    text notes from the layout. Wide panels take a row of their own, the
    others share a row, three at most.

    Args:
        state: an :class:`~transformer_edu.interactive.State`.
        width: the figure's width in inches.

    Returns:
        A :class:`matplotlib.figure.Figure` (not attached to pyplot), one
        axes per panel in the order of ``state.panels``.

    Raises:
        ValueError: a trace type it cannot draw (named).
    """
    if not isinstance(state, ix.State):
        raise TypeError(
            f"state must be an interactive.State, got {type(state).__name__}"
        )
    # Hangul labels, whether or not the chapter set the book's style
    with matplotlib.rc_context({"font.family": viz.font_families()}):
        return _render(state, width)


def _render(state: ix.State, width: float) -> Figure:
    rows: list[list[ix.Panel]] = []
    for panel in state.panels:
        if panel.wide or not rows or rows[-1][0].wide or len(rows[-1]) == 3:
            rows.append([panel])
        else:
            rows[-1].append(panel)
    heights = [max(p.height for p in row) / _PX + 0.4 for row in rows]
    figure = Figure(figsize=(width, sum(heights)), layout="constrained")
    grid = figure.add_gridspec(len(rows), 1, height_ratios=heights)
    for r, row in enumerate(rows):
        cells = grid[r].subgridspec(1, len(row))
        for c, panel in enumerate(row):
            ax = figure.add_subplot(cells[c])
            ax.set_facecolor(panel.layout.get("plot_bgcolor", "white"))
            for trace in panel.data:
                kind = trace.get("type", "scatter")
                if kind == "heatmap":
                    _heatmap(figure, ax, trace)
                elif kind == "scatter":
                    _scatter(ax, trace)
                elif kind == "bar":
                    _bar(ax, trace)
                else:
                    raise ValueError(
                        f"render_state draws heatmap, scatter and bar traces, "
                        f"got a {kind!r} trace in panel {panel.title!r}"
                    )
            _axis(ax, "x", panel.layout.get("xaxis", {}))
            _axis(ax, "y", panel.layout.get("yaxis", {}))
            _shapes(ax, panel.layout)
            _annotations(ax, panel.layout)
            ax.set_title(panel.title, fontsize=10, loc="left", wrap=True)
            if panel.layout.get("showlegend") and len(panel.data) > 1:
                ax.legend(frameon=False, fontsize=8)
    return figure


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)
    return buffer.getvalue()


# ---------------------------------------------------------------------------
# The live explorer
# ---------------------------------------------------------------------------


class LiveExplorer:
    """An explorer recomputed in a running kernel: ipywidgets controls call
    the states function and the figure redraws.

    Args:
        states: a function of the controls' values (keyword arguments) and
            of ``fixed``, returning an
            :class:`~transformer_edu.interactive.State`, as for
            :class:`~transformer_edu.interactive.Explorer`.
        title: the figure's name, shown above the controls.
        description: how to read it, shown under the title.
        controls: :class:`~transformer_edu.interactive.Buttons`,
            :class:`~transformer_edu.interactive.Slider`,
            :class:`~transformer_edu.interactive.Select`, :class:`Text` and
            :class:`Toggle` controls (distinct names).
        fixed: more keyword arguments of ``states``, never changed.

    Display it as a cell's last expression (its widget appears), or use
    :attr:`widget`. :meth:`state` and :meth:`figure` compute without a
    widget; :meth:`set` changes controls as a reader would. A states
    function that raises ``ValueError`` or ``TypeError`` (an unknown word,
    a position past the table) shows its message in place of the figure.
    """

    def __init__(
        self,
        states: Callable[..., ix.State],
        *,
        title: str,
        description: str,
        controls: Sequence,
        fixed: Mapping | None = None,
    ) -> None:
        if not callable(states):
            raise TypeError(
                "states must be a function of the controls' values, got "
                f"{type(states).__name__}"
            )
        for name, text in (("title", title), ("description", description)):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(
                    f"{name} must be a non-empty string, got {text!r}"
                )
        names = ix.check_controls(
            controls, _CONTROLS, "Buttons, Slider, Select, Text or Toggle"
        )
        fixed = dict(fixed or {})
        both = sorted(set(names) & set(fixed))
        if both:
            raise ValueError(
                f"{both} are both controls and fixed arguments; give each "
                "argument once"
            )
        self.states = states
        self.title = " ".join(title.split())
        self.description = " ".join(description.split())
        self.controls = list(controls)
        self.fixed = fixed
        self.values = {c.name: c.start for c in self.controls}
        self.last_state: ix.State | None = None
        self._widget = None
        self._inputs: dict = {}
        self._output = None

    def __repr__(self) -> str:
        return (
            f"LiveExplorer({self.title!r}, controls="
            f"{[c.name for c in self.controls]})"
        )

    def state(self, **values) -> ix.State:
        """The state for the current values, changed by ``values``."""
        unknown = sorted(set(values) - set(self.values))
        if unknown:
            raise ValueError(
                f"unknown control(s) {unknown}; the controls are "
                f"{list(self.values)}"
            )
        state = self.states(**self.fixed, **{**self.values, **values})
        if not isinstance(state, ix.State):
            raise TypeError(
                "the states function must return an interactive.State, got "
                f"{type(state).__name__}"
            )
        return state

    def figure(self, **values) -> Figure:
        """:func:`render_state` of :meth:`state`."""
        return render_state(self.state(**values))

    def precompute(self, explorer_id: str) -> ix.Explorer:
        """The kernel-free explorer of the same function over the offered
        values of its Buttons, Slider and Select controls (Text and Toggle
        values kept at their current value): the book's mode of this live
        explorer."""
        gridded = [c for c in self.controls if not isinstance(c, _LIVE_ONLY)]
        kept = {
            c.name: self.values[c.name]
            for c in self.controls
            if isinstance(c, _LIVE_ONLY)
        }
        for control in gridded:  # start where the live explorer is
            if self.values[control.name] not in control.values:
                raise ValueError(
                    f"{control.name} = {self.values[control.name]!r} is not "
                    f"one of the values {control.values} to precompute"
                )

        def draw(**values):
            return self.states(**self.fixed, **kept, **values)

        return ix.Explorer(
            explorer_id,
            title=self.title,
            description=self.description,
            controls=[
                type(c)(
                    c.name,
                    c.values,
                    labels=c.labels,
                    label=c.label,
                    start=self.values[c.name],
                )
                for c in gridded
            ],
            states=draw,
        )

    # -- the widget ---------------------------------------------------------

    @property
    def widget(self):
        """The widget (an ipywidgets box) with the title, the controls and
        the redrawn output."""
        if self._widget is None:
            self._widget = self._build()
        return self._widget

    def _build(self):
        import html

        import ipywidgets as widgets

        header = widgets.HTML(
            f"<b>{html.escape(self.title)}</b><br>"
            f"<span style='font-size:90%'>{html.escape(self.description)}"
            "</span>"
        )
        self._inputs = {c.name: _widget(c) for c in self.controls}
        for name, control in self._inputs.items():
            control.observe(self._changed(name), names="value")
        self._output = widgets.Output()
        box = widgets.VBox(
            [
                header,
                widgets.HBox(
                    list(self._inputs.values()),
                    layout=widgets.Layout(flex_flow="row wrap"),
                ),
                self._output,
            ]
        )
        box.add_class("tse-live")
        self._redraw()
        return box

    def _changed(self, name: str):
        def update(change) -> None:
            self.values[name] = change["new"]
            self._redraw()

        return update

    def set(self, **values) -> None:
        """Change controls as a reader would (the figure redraws)."""
        unknown = sorted(set(values) - set(self.values))
        if unknown:
            raise ValueError(
                f"unknown control(s) {unknown}; the controls are "
                f"{list(self.values)}"
            )
        for name, value in values.items():
            if name in self._inputs:
                self._inputs[name].value = value  # redraws through observe
            else:
                self.values[name] = value

    def _redraw(self) -> None:
        from IPython.display import Image, display

        with self._output:
            self._output.clear_output(wait=True)
            try:
                state = self.state()
            except (ValueError, TypeError) as error:
                self.last_state = None
                print(f"Nothing to draw: {error}")
                return
            self.last_state = state
            display(Image(data=_png(render_state(state))))
            print(state.summary)
            if state.details:
                print(state.details)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


_LIVE_ONLY = (Text, Toggle)


# ---------------------------------------------------------------------------
# Chapter 1: the mask playground
# ---------------------------------------------------------------------------

MAX_TOKENS = 16
"""The most tokens a playground takes (its figure stays readable)."""


def _tokens(name: str, text, limit: int = MAX_TOKENS) -> list[str]:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    tokens = text.split()
    if not tokens:
        raise ValueError(f"{name} must hold at least one token, got {text!r}")
    if len(tokens) > limit:
        raise ValueError(
            f"{name} must hold at most {limit} tokens, got {len(tokens)}"
        )
    if "<pad>" in tokens:
        raise ValueError(
            f"{name} must not contain '<pad>': the pads control adds them"
        )
    return tokens


def _word_vectors(words: Sequence[str], d_model: int, seed: int):
    """A seeded random vector per word, the same whatever the other words
    are (the seed mixes in a checksum of the word). (L, D)"""
    rows = []
    for word in words:
        generator = torch.Generator().manual_seed(
            1_000_003 * seed + zlib.crc32(word.encode("utf-8"))
        )
        rows.append(torch.randn(d_model, generator=generator))
    return torch.stack(rows)


def _count(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low} … {high}, got {value}")
    return value


def _matrix_text(values, rows: Sequence[str], cols: Sequence[str]) -> str:
    """A small matrix as aligned text, 3 decimals, blocked (NaN) as ·."""
    width = max(viz.text_width(t) for t in rows)
    lines = []
    for label, row in zip(rows, values.tolist()):
        cells = " ".join(
            "    · " if math.isnan(v) else f"{v:6.3f}" for v in row
        )
        pad = " " * (width - viz.text_width(label))
        lines.append(f"{label}{pad} {cells}")
    return "\n".join(lines)


def _attention_call(attention, q, k, v, mask):
    result = attention(q, k, v, mask)
    if not (
        isinstance(result, tuple)
        and len(result) == 2
        and all(isinstance(t, torch.Tensor) for t in result)
    ):
        raise TypeError(
            "attention must return (output, weights) as two tensors, like "
            "te.scaled_dot_product_attention; got "
            f"{type(result).__name__}"
        )
    out, weights = result
    length = q.shape[-2]
    if tuple(weights.shape[-2:]) != (length, length) or tuple(
        out.shape
    ) != tuple(v.shape):
        raise ValueError(
            f"attention returned output {tuple(out.shape)} and weights "
            f"{tuple(weights.shape)}; expected {tuple(v.shape)} and "
            f"(…, {length}, {length})"
        )
    return out, weights


def mask_state(
    tokens: str,
    pads: int = 2,
    padding: bool = True,
    causal: bool = False,
    polarity: str = "allowed",
    *,
    attention: Callable | None = None,
    d_model: int = 16,
    seed: int = 0,
) -> ix.State:
    """One state of the mask playground of Chapter 1.

    The tokens, followed by ``pads`` ``<pad>`` tokens, get seeded random
    vectors (a word's vector does not depend on the other words) and seeded
    random projections W_Q, W_K, W_V; ``attention`` attends with the padding
    mask (:func:`~transformer_edu.padding_mask`) and the causal mask
    (:func:`~transformer_edu.causal_mask`) as chosen.

    Args:
        tokens: space-separated tokens (1 … :data:`MAX_TOKENS`).
        pads: how many ``<pad>`` tokens follow (0 … 8).
        padding, causal: apply the padding mask, the causal mask.
        polarity: ``"allowed"`` passes the masks as the book writes them
            (``True`` = may attend); ``"blocked"`` passes their negation,
            the mistake of a reader who takes ``True`` for blocked.
        attention: ``attention(query, key, value, mask)`` returning
            ``(output, weights)``, e.g. your own; default
            :func:`~transformer_edu.scaled_dot_product_attention`.
        d_model: width of the vectors.
        seed: seed of the vectors and projections.

    Returns:
        The :class:`~transformer_edu.interactive.State`: the weights (L, L),
        blocked cells empty, and the outputs (L, D); its summary gives the
        largest change of a real token's output caused by the pads, its
        details the weights to 3 decimals.
    """
    words = _tokens("tokens", tokens)
    pads = _count("pads", pads, 0, 8)
    d_model = _count("d_model", d_model, 1, 256)
    if polarity not in ("allowed", "blocked"):
        raise ValueError(
            f"polarity must be 'allowed' or 'blocked', got {polarity!r}"
        )
    attention = (
        scaled_dot_product_attention if attention is None else attention
    )
    if not callable(attention):
        raise TypeError(
            f"attention must be a function, got {type(attention).__name__}"
        )
    generator = torch.Generator().manual_seed(seed)
    w_q, w_k, w_v = (
        torch.randn(d_model, d_model, generator=generator) / math.sqrt(d_model)
        for _ in range(3)
    )
    vectors = _word_vectors(sorted(set(words)) + ["<pad>"], d_model, seed)
    index = {w: i for i, w in enumerate(sorted(set(words)) + ["<pad>"])}

    def run(n_pad: int):
        labels = words + ["<pad>"] * n_pad
        ids = torch.tensor([[index[w] for w in labels]])  # (1, L)
        x = vectors[ids][:, None]  # (B, H, L, D) = (1, 1, L, D)
        length = len(labels)
        allowed = torch.ones(1, 1, length, length, dtype=torch.bool)
        if padding:
            allowed = allowed & padding_mask(ids, index["<pad>"])
        if causal:
            allowed = allowed & causal_mask(length)
        passed = allowed if polarity == "allowed" else ~allowed
        out, weights = _attention_call(
            attention, x @ w_q, x @ w_k, x @ w_v, passed
        )
        # (L, D), (L, L), (L, L)
        return out[0, 0], weights.reshape(length, length), passed[0, 0]

    out, weights, passed = run(pads)
    alone, _, _ = run(0)
    moved = (out[: len(words)] - alone).norm(dim=-1).max().item()
    labels = words + ["<pad>"] * pads
    title = (
        f"padding mask {'on' if padding else 'off'}, causal mask "
        f"{'on' if causal else 'off'}"
        + (", polarity flipped" if polarity == "blocked" else "")
    )
    panels = [
        ix.heatmap_panel(
            weights.detach(),
            labels,
            title=f"weights: {title}",
            blocked=~passed,
            height=360,
        ),
        ix.heatmap_panel(
            out.detach(),
            labels,
            [str(d) for d in range(d_model)],
            title="outputs (one row per token)",
            signed=True,
            zmin=-2.0,
            zmax=2.0,
            value_name="value",
            xlabel="dimension",
            ylabel="token",
            height=360,
        ),
    ]
    flipped = (
        " The mask's polarity is flipped: every query attends to exactly the "
        "keys it should not (a row with none left gets no weight)."
        if polarity == "blocked"
        else ""
    )
    plural = "s" if pads != 1 else ""
    summary = (
        f"{len(words)} tokens and {pads} pad{plural}; {title}. Largest "
        f"change of a real token's output caused by the pads: {moved:.4f}."
        + flipped
    )
    shown = weights.detach().masked_fill(~passed, float("nan"))
    details = "weights (rows: queries, · blocked)\n" + _matrix_text(
        shown, labels, labels
    )
    return ix.State(panels, summary, details)


def mask_playground(
    tokens: str = "the cat sat on the mat",
    *,
    attention: Callable | None = None,
    d_model: int = 16,
    seed: int = 0,
) -> LiveExplorer:
    """Chapter 1's mask playground: your tokens, the masks, your attention.

    A text box for the tokens, a slider for the number of pads, check boxes
    for the padding and causal masks and buttons for the mask's polarity;
    see :func:`mask_state`.

    Args:
        tokens: the tokens shown first.
        attention: your ``attention(query, key, value, mask)`` returning
            ``(output, weights)``; default the package's.
        d_model, seed: as in :func:`mask_state`.

    Returns:
        The :class:`LiveExplorer`.
    """
    return LiveExplorer(
        mask_state,
        title="Mask playground: your tokens, the masks, "
        + ("your attention" if attention is not None else "the attention"),
        description="Type tokens (Enter redraws), add pads, switch the "
        "masks. Left: the attention weights, rows are queries, columns "
        "keys, grey cells blocked. Right: each token's output.",
        controls=[
            Text("tokens", tokens),
            ix.Slider("pads", range(5), start=2, label="pad tokens"),
            Toggle("padding", True, label="padding mask"),
            Toggle("causal", False, label="causal mask"),
            ix.Buttons(
                "polarity",
                ["allowed", "blocked"],
                labels=["True = may attend", "True = blocked (wrong)"],
                label="mask passed as",
            ),
        ],
        fixed={"attention": attention, "d_model": d_model, "seed": seed},
    )


# ---------------------------------------------------------------------------
# Chapter 2: heads on your tokens
# ---------------------------------------------------------------------------


def heads_state(
    tokens: str,
    n_heads: int = 4,
    causal: bool = False,
    *,
    d_model: int = 16,
    seed: int = 0,
) -> ix.State:
    """One state of the heads playground of Chapter 2.

    The tokens get seeded random vectors plus the sinusoidal encoding of
    their positions, and go through a seeded, untrained
    :class:`~transformer_edu.MultiHeadAttention` (self-attention).

    Args:
        tokens: space-separated tokens (1 … :data:`MAX_TOKENS`).
        n_heads: the number of heads H (divides ``d_model``).
        causal: apply the causal mask.
        d_model: the width D.
        seed: seed of the vectors and of the layer's weights.

    Returns:
        The :class:`~transformer_edu.interactive.State`: one heatmap per
        head; its details give each head's strongest key for each query.
    """
    from .positional import sinusoidal_table

    words = _tokens("tokens", tokens)
    n_heads = _count("n_heads", n_heads, 1, 16)
    d_model = _count("d_model", d_model, 2, 256)
    if d_model % n_heads:
        raise ValueError(
            f"n_heads must divide d_model = {d_model}, got {n_heads}"
        )
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    layer = MultiHeadAttention(d_model, n_heads).eval()
    torch.random.set_rng_state(generator_state)  # the caller's draws go on
    length = len(words)
    x = _word_vectors(words, d_model, seed) + sinusoidal_table(
        length, d_model
    )  # (L, D)
    mask = causal_mask(length) if causal else None
    with torch.no_grad():
        _, weights = layer(x[None], x[None], x[None], mask)  # (1, H, L, L)
    weights = weights[0]  # (H, L, L)
    blocked = None if mask is None else ~mask[0, 0]
    panels = [
        ix.heatmap_panel(
            weights[h],
            words,
            title=f"head {h + 1} of {n_heads}",
            blocked=blocked,
            colorbar=False,
            height=260,
        )
        for h in range(n_heads)
    ]
    strongest = weights.argmax(-1)  # (H, L)
    details = "\n".join(
        f"head {h + 1}: "
        + ", ".join(
            f"{q}→{words[k]}" for q, k in zip(words, strongest[h].tolist())
        )
        for h in range(n_heads)
    )
    summary = (
        f"{n_heads} heads of width d_k = {d_model // n_heads} on "
        f"{length} tokens, causal mask {'on' if causal else 'off'}; "
        "each query's strongest key per head is printed below."
    )
    return ix.State(panels, summary, details)


def heads_playground(
    tokens: str = "the cat sat on the mat", *, d_model: int = 16, seed=0
) -> LiveExplorer:
    """Chapter 2's heads playground: every head of an untrained layer on
    your tokens, with 1, 2, 4 or 8 heads and the causal mask switchable.

    Args:
        tokens: the tokens shown first.
        d_model, seed: as in :func:`heads_state`.

    Returns:
        The :class:`LiveExplorer`.
    """
    return LiveExplorer(
        heads_state,
        title="Heads on your tokens",
        description="Each head's attention weights (rows are queries, "
        "columns keys). An untrained layer: the heads differ because their "
        "random projections do.",
        controls=[
            Text("tokens", tokens),
            ix.Buttons(
                "n_heads",
                [1, 2, 4, 8],
                labels=["1 head", "2 heads", "4 heads", "8 heads"],
                start=4,
                label="heads",
            ),
            Toggle("causal", False, label="causal mask"),
        ],
        fixed={"d_model": d_model, "seed": seed},
    )


# ---------------------------------------------------------------------------
# Chapter 3: the positional encoding at any width and length
# ---------------------------------------------------------------------------


def positional_playground() -> LiveExplorer:
    """Chapter 3's explorer, live: any even d_model (2 … 512), any length
    (1 … 512), any position of it and any offset k.

    Returns:
        :meth:`~transformer_edu.interactive.Explorer.live` of
        :func:`~transformer_edu.interactive.positional_explorer` with wider
        controls.
    """
    explorer = ix.positional_explorer(
        d_models=(64,), positions=(0,), offsets=(1,), start_d_model=64
    )
    return explorer.live(
        controls=[
            ix.Slider("d_model", range(2, 514, 2), start=64, label="d_model"),
            ix.Slider("max_len", range(1, 513), start=48, label="length"),
            ix.Slider("position", range(512), start=10, label="position"),
            ix.Slider("offset", range(201), start=5, label="offset k"),
        ]
    )


# ---------------------------------------------------------------------------
# Chapters 6 to 8: the shipped translator under switchable masks
# ---------------------------------------------------------------------------

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
    from .data import grammar_problem

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
    from .attention import record_attention
    from .data import Vocab
    from .decoding import beam_search_nbest, greedy_decode

    _check_translator(translator)
    if not isinstance(korean, str) or not korean.split():
        raise ValueError(
            f"korean must be a non-empty sentence, got {korean!r}"
        )
    pads = _count("pads", pads, 0, 8)
    beam_size = _count("beam_size", beam_size, 1, 16)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError(f"alpha must be a number, got {alpha!r}")
    if not 0 <= alpha <= 5:
        raise ValueError(f"alpha must be in 0 … 5, got {alpha}")
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
    if not isinstance(target, str):
        raise TypeError(f"english must be a str, got {type(target).__name__}")
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
) -> ix.State:
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
        The :class:`~transformer_edu.interactive.State`. Its summary gives
        the translation (and the grammar's message for a sentence outside
        it: the model still translates); its details what each decoder
        position predicts and how much weight the ``<pad>`` keys get.
    """
    _check_translator(translator)
    layers = translator.model.config.n_layers
    heads = translator.model.config.n_heads
    if isinstance(layer, bool) or not isinstance(layer, int):
        raise TypeError(f"layer must be an int, got {layer!r}")
    if not -layers <= layer < layers:
        raise ValueError(
            f"layer must be in {-layers} … {layers - 1}, got {layer}"
        )
    if head != "mean" and (
        isinstance(head, bool)
        or not isinstance(head, int)
        or not 0 <= head < heads
    ):
        raise ValueError(
            f"head must be 'mean' or an int in 0 … {heads - 1}, got {head!r}"
        )
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
        ix.heatmap_panel(
            enc, run["source"], title="encoder self-attention",
            height=340, colorbar=False,
        ),
        ix.heatmap_panel(
            dec, run["target_in"], title="decoder self-attention",
            blocked=future if causal else None, height=340, colorbar=False,
        ),
        ix.heatmap_panel(
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
    return ix.State(panels, summary, details)


def _translator_controls(translator, korean: str, extra=()) -> list:
    config = translator.model.config
    return [
        Text("korean", korean, label="Korean"),
        *extra,
        Toggle("padding", True, label="padding mask"),
        Toggle("causal", True, label="causal mask"),
        ix.Buttons(
            "layer",
            range(config.n_layers),
            labels=[f"layer {n + 1}" for n in range(config.n_layers)],
            start=config.n_layers - 1,
        ),
        ix.Select(
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
) -> ix.State:
    """One state of the translator playground of Chapter 8: beam search's
    finished hypotheses, best first (as in
    :func:`~transformer_edu.interactive.beam_explorer`), and the
    cross-attention of the winner's teacher-forced re-run (mean of heads,
    last layer).

    Args:
        translator, korean, beam_size, alpha, padding, causal: as in
            :func:`translation_run` (with its ``pads``).

    Returns:
        The :class:`~transformer_edu.interactive.State`.
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
        ix.Panel(
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
        ix.heatmap_panel(
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
    return ix.State(panels, summary, details)


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
            ix.Buttons(
                "beam_size",
                [1, 2, 4, 8],
                labels=["K = 1 (greedy)", "K = 2", "K = 4", "K = 8"],
                start=4,
                label="beam size",
            ),
            ix.Slider(
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
