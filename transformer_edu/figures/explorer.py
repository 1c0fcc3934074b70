"""Interactive figures that work without a kernel: explorers (all chapters).

ipywidgets need a running Python kernel, so in the published book they are
dead. An *explorer* is the kernel-free version: Python precomputes one state
of the figure for every combination of its controls, and the page switches
between them with real HTML controls (``<button>``, ``<input type=range>``,
``<select>``): keyboard-operable, screen-reader labelled, wrapping on a phone.
The plots are drawn with Plotly; each state may hold several panels, laid out
side by side where they fit and stacked on a phone.

Example (a notebook cell; the explorer is the cell's last expression)::

    import plotly.graph_objects as go
    from transformer_edu import figures as ix

    def draw(layer, head):  # called once per combination of the controls
        weights = maps[layer][head]  # (L, L) tensor
        panel = ix.heatmap_panel(
            weights, tokens, title=f"layer {layer + 1}, head {head}"
        )
        return ix.State(
            panel, summary=f"Layer {layer + 1}, head {head}: {names[layer][head]}."
        )

    ix.Explorer(
        "ch02-heads",  # an id, unique on its page
        title="What each head attends to",
        description="Attention weights of one head: rows are queries, "
        "columns keys; darker is more weight.",
        controls=[
            ix.Buttons("layer", [0, 1], labels=["layer 1", "layer 2"]),
            ix.Select("head", range(4), label="head"),
        ],
        states=draw,  # or a dict {(layer, head): State, ...}
    )

``figures.show(explorer)`` displays it too (for a cell that goes on).

Building blocks:

- Controls (:mod:`~transformer_edu.figures.controls`): ``Buttons`` (a row of
  toggle buttons), ``Slider`` (an ``<input type=range>`` that shows its
  value's text) and ``Select`` (a drop-down list). Each takes a ``name`` (the
  keyword of ``states``), the ``values`` it offers, optional ``labels`` (the
  text of each value), ``label`` (the control's visible name) and ``start``.
- ``State``: the panels of one combination and a one-sentence ``summary`` of
  what it shows (read out by screen readers when a control changes it, and
  shown under the plots).
- ``Panel``: one Plotly figure (a ``go.Figure`` or a ``{"data", "layout"}``
  dict) with a ``title`` written above it in HTML (so it wraps on a phone), a
  ``height`` in px, ``wide=True`` to span the whole row, and ``narrow``:
  layout changes applied when the panel is under 480 px wide.
  :func:`heatmap_panel` makes the usual labelled attention heatmap.
- :class:`Explorer`: checks that every combination of control values has a
  state (a dict must cover all of them), and renders one deterministic HTML
  fragment: fixed ids, numbers rounded to ``decimals``, each distinct trace
  look, trace data and layout stored once, no random ids, so ``pytest
  --nbval`` compares it.

Where it runs:

- The book: the fragment's markup and data are static; the book's Sphinx
  extension (``book/_ext/book_assets.py``) adds ``_static/explorers.js`` and
  ``explorers.css`` to the pages that hold an explorer, and the script loads
  the site's own ``plotly-cartesian.min.js`` after the first paint. No CDN.
- Jupyter and Colab (trusted outputs): the fragment carries the same script
  inline, which loads Plotly from Plotly's CDN (or uses the page's
  ``window.Plotly``) and draws.
- Where scripts do not run (an untrusted notebook, GitHub's preview), the
  fragment shows a fallback text naming the figure and its first state.

Panel layouts are drawn in the book's look (:data:`~transformer_edu.figures.controls.BOOK_LAYOUT`): a Plotly
template set on a figure is dropped. Titles belong in :class:`~transformer_edu.figures.controls.Panel`, not in
the Plotly layout (Plotly titles do not wrap).

The package's explorers (one per chapter that has one):
:func:`~transformer_edu.figures.attention_figures.mask_explorer` (Chapter 1),
:func:`~transformer_edu.figures.position_figures.positional_explorer`
(Chapter 3) and :func:`~transformer_edu.figures.beam_figures.beam_explorer`
(Chapter 8).
"""

from __future__ import annotations

import html
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs_version

from .. import _validate
from . import viz
from .controls import (
    _ID,
    DECIMALS,
    Buttons,
    Panel,
    Slider,
    State,
    _Control,
    check_controls,
    rounded,
)
from .live import LiveExplorer, Text, Toggle

__all__ = ["RUNTIME_CSS", "RUNTIME_JS", "TRACE_DATA_KEYS", "Explorer", "heatmap_panel", "show"]


_ASSETS = Path(__file__).resolve().parents[1] / "assets" / "explorer"


RUNTIME_JS = (_ASSETS / "explorer.js").read_text(encoding="utf-8")
"""The explorers' browser code (the book serves it as ``explorers.js``)."""


RUNTIME_CSS = (_ASSETS / "explorer.css").read_text(encoding="utf-8")
"""The explorers' styles (the book serves them as ``explorers.css``)."""


if "</" in RUNTIME_JS or "</" in RUNTIME_CSS:  # pragma: no cover - a guard
    raise RuntimeError("explorer.js/.css must not contain '</' (inlined)")


#: The keys of a trace that hold its numbers. The explorer stores them apart
#: from the trace's look (type, colour scale, hover template …), so that a
#: look shared by many states is stored once.
TRACE_DATA_KEYS = ("x", "y", "z", "text", "customdata", "hovertext")


def _split_trace(trace: dict) -> tuple[dict, dict]:
    """A trace as ``(style, values)``: its data keys apart from the rest."""
    style = {k: v for k, v in trace.items() if k not in TRACE_DATA_KEYS}
    values = {k: v for k, v in trace.items() if k in TRACE_DATA_KEYS}
    return style, values


def _json(value) -> str:
    """Compact, sorted JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return text.replace("<", "\\u003c")


def _wrap(text: str, width: int = 79) -> list[str]:
    """Words of ``text`` in lines of at most ``width`` display columns."""
    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if line and viz.text_width(candidate) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return lines


class Explorer:
    """A kernel-free interactive figure: precomputed states, HTML controls.

    Args:
        explorer_id: the HTML id of the explorer, unique on its page
            (letters, digits, ``-``, ``_``; start with a letter); its
            controls and plots get ids that start with it.
        title: a short name of the figure (its accessible name).
        description: what the figure shows and how to read it (its
            accessible description).
        controls: the :class:`Buttons`, :class:`Slider` and :class:`Select`
            controls, in the order they are shown (distinct names; may be
            empty for a figure with one state).
        states: a function called once per combination of control values,
            with the values as keyword arguments, returning a :class:`State`;
            or a mapping from each combination (a tuple of values in the
            order of ``controls``; a bare value for one control) to a
            :class:`State`, which must cover every combination.
        decimals: digits kept for the numbers of the figure.

    Raises:
        ValueError: a missing or unknown combination of control values,
            panels that differ in number, height or width between states,
            or an invalid argument (named in the message).
        TypeError: an argument of the wrong type.

    Display it as a cell's last expression, or with :func:`show`. It has a
    ``text/html`` representation (:meth:`html`) and a ``text/plain`` one
    (:meth:`text`), both deterministic.
    """

    def __init__(
        self,
        explorer_id: str,
        *,
        title: str,
        description: str,
        controls: Sequence[_Control],
        states: Mapping | Callable[..., State],
        decimals: int = DECIMALS,
    ) -> None:
        if not isinstance(explorer_id, str) or not _ID.match(explorer_id):
            raise ValueError(
                "explorer_id must start with a letter and hold only letters, "
                f"digits, '-' and '_', got {explorer_id!r}"
            )
        for name, text in (("title", title), ("description", description)):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(
                    f"{name} must be a non-empty string, got {text!r}"
                )
        check_controls(controls, (_Control,), "Buttons, Slider or Select")
        _validate.int_in_range("decimals", decimals, 0, 10)
        self.id = explorer_id
        self.title = " ".join(title.split())
        self.description = " ".join(description.split())
        self.controls: list[_Control] = list(controls)
        self.decimals = decimals
        self._function = None if isinstance(states, Mapping) else states
        self._states = self._collect(states)
        self._payload = self._build_payload()

    # -- states ------------------------------------------------------------

    def _describe(self, values: tuple) -> str:
        return ", ".join(
            f"{c.name}={v!r}" for c, v in zip(self.controls, values)
        ) or "(no controls)"

    def _collect(self, states) -> dict[tuple, State]:
        combos = list(
            itertools.product(*(control.values for control in self.controls))
        )
        collected: dict[tuple, State] = {}
        if callable(states) and not isinstance(states, Mapping):
            for values in combos:
                kwargs = {c.name: v for c, v in zip(self.controls, values)}
                state = states(**kwargs)
                collected[values] = self._check_state(state, values)
        elif isinstance(states, Mapping):
            given = {}
            for key, state in states.items():
                given[key if isinstance(key, tuple) else (key,)] = state
            unknown = [key for key in given if key not in set(combos)]
            if unknown:
                raise ValueError(
                    f"states has {len(unknown)} key(s) that are no "
                    "combination of the controls' values, e.g. "
                    f"{unknown[0]!r}; keys are tuples of values in the order "
                    f"of controls {[c.name for c in self.controls]}"
                )
            missing = [values for values in combos if values not in given]
            if missing:
                raise ValueError(
                    f"states misses {len(missing)} of {len(combos)} "
                    f"combinations of the controls, e.g. "
                    f"{self._describe(missing[0])}: every combination needs "
                    "a State"
                )
            for values in combos:
                collected[values] = self._check_state(given[values], values)
        else:
            raise TypeError(
                "states must be a function of the control values or a "
                f"mapping of them to States, got {type(states).__name__}"
            )
        first = collected[combos[0]]
        shape = [(p.height, p.wide) for p in first.panels]
        for values, state in collected.items():
            other = [(p.height, p.wide) for p in state.panels]
            if other != shape:
                raise ValueError(
                    f"the state for {self._describe(values)} has panels "
                    f"(height, wide) {other}, but the first state has "
                    f"{shape}: every state needs the same panels"
                )
        return collected

    def _check_state(self, state, values: tuple) -> State:
        if isinstance(state, State):
            return state
        if isinstance(state, (Panel, go.Figure, list, tuple)):
            summary = "; ".join(
                f"{c.label}: {c.labels[c.values.index(v)]}"
                for c, v in zip(self.controls, values)
            )
            return State(state, summary or self.title)
        raise TypeError(
            f"the state for {self._describe(values)} must be a State (or a "
            f"Panel, a figure or a list of them), got {type(state).__name__}"
        )

    def state(self, **values) -> State:
        """The :class:`State` shown for the given control values (defaults:
        each control's start), e.g. ``explorer.state(pads=2, query=0)``."""
        unknown = set(values) - {c.name for c in self.controls}
        if unknown:
            raise ValueError(
                f"unknown control(s) {sorted(unknown)}; the controls are "
                f"{[c.name for c in self.controls]}"
            )
        key = []
        for control in self.controls:
            value = values.get(control.name, control.start)
            if value not in control.values:
                raise ValueError(
                    f"{control.name} must be one of {control.values}, "
                    f"got {value!r}"
                )
            key.append(value)
        return self._states[tuple(key)]

    def live(self, controls: Sequence = (), **fixed):
        """The same explorer, recomputed live in a running kernel.

        The live explorer calls this explorer's ``states`` function with the
        values of ipywidgets controls and redraws (see
        :class:`~transformer_edu.figures.live.LiveExplorer`); the HTML book
        keeps showing this precomputed explorer.

        Args:
            controls: controls to add, or to put in place of the controls of
                the same name: e.g. a :class:`Slider` offering more values,
                or a :class:`~transformer_edu.figures.live.Text` box for an
                argument of ``states`` that this explorer kept fixed.
            fixed: more keyword arguments for ``states``, kept fixed.

        Returns:
            The :class:`~transformer_edu.figures.live.LiveExplorer`; display it
            as a cell's last expression.

        Raises:
            TypeError: the explorer was built from a mapping of states, not
                from a function, so there is nothing to recompute.
        """
        if self._function is None:
            raise TypeError(
                f"explorer {self.id!r} was built from a mapping of states; "
                "only an explorer built from a states function can go live"
            )
        mine = {control.name: control for control in self.controls}
        for control in controls:
            mine[getattr(control, "name", None)] = control
        return LiveExplorer(
            self._function,
            title=self.title,
            description=self.description,
            controls=list(mine.values()),
            fixed=fixed,
        )

    @classmethod
    def from_live(cls, live: LiveExplorer, explorer_id: str) -> Explorer:
        """The kernel-free explorer of a live explorer: the book's mode of it.

        It calls the live explorer's states function over the offered values
        of its Buttons, Slider and Select controls, each starting where the
        live explorer is; the values of its Text and Toggle controls are kept
        at their current value.

        Args:
            live: the :class:`~transformer_edu.figures.live.LiveExplorer`.
            explorer_id: the new explorer's id, unique on its page.
        """
        kernel_only = (Text, Toggle)  # no precomputed explorer can offer every text
        gridded = [c for c in live.controls if not isinstance(c, kernel_only)]
        kept = {c.name: live.values[c.name] for c in live.controls if isinstance(c, kernel_only)}
        for control in gridded:  # start where the live explorer is
            if live.values[control.name] not in control.values:
                raise ValueError(
                    f"{control.name} = {live.values[control.name]!r} is not "
                    f"one of the values {control.values} to precompute"
                )

        def draw(**values):
            return live.states(**live.fixed, **kept, **values)

        controls = [type(c)(c.name, c.values, labels=c.labels, label=c.label, start=live.values[c.name])
                    for c in gridded]
        return cls(explorer_id, title=live.title, description=live.description, controls=controls, states=draw)

    @property
    def start_state(self) -> State:
        """The state shown first (every control at its start)."""
        return self.state()

    # -- rendering ---------------------------------------------------------

    def _build_payload(self) -> dict:
        parts: list = []
        seen: dict[str, int] = {}

        def part(value) -> int:
            value = rounded(value, self.decimals)
            key = _json(value)
            if key not in seen:
                seen[key] = len(parts)
                parts.append(value)
            return seen[key]

        states = {}
        for values, state in self._states.items():
            key = ".".join(
                str(c.values.index(v)) for c, v in zip(self.controls, values)
            )
            states[key] = {
                "s": state.summary,
                "p": [
                    {
                        "t": panel.title,
                        "d": [
                            [part(style), part(values)]
                            for style, values in map(_split_trace, panel.data)
                        ],
                        "l": part(panel.layout),
                        "n": None if panel.narrow is None else part(panel.narrow),
                    }
                    for panel in state.panels
                ],
            }
        return {
            "controls": [
                {"name": c.name, "start": c.start_index} for c in self.controls
            ],
            "panels": [{"h": p.height} for p in self.start_state.panels],
            "parts": parts,
            "states": states,
        }

    def _control_html(self, k: int, control: _Control) -> str:
        ident = f"{self.id}-c{k}"
        label = html.escape(control.label)
        if isinstance(control, Buttons):
            buttons = "".join(
                f'<button type="button" class="tse-option" '
                f'data-tse-control="{k}" data-tse-index="{i}" '
                f'aria-pressed="{"true" if i == control.start_index else "false"}">'
                f"{html.escape(text)}</button>"
                for i, text in enumerate(control.labels)
            )
            return (
                f'<div class="tse-control" role="group" '
                f'aria-labelledby="{ident}-label">'
                f'<span class="tse-control-label" id="{ident}-label">{label}'
                f'</span><span class="tse-buttons">{buttons}</span></div>'
            )
        if isinstance(control, Slider):
            start = control.labels[control.start_index]
            width = max(viz.text_width(text) for text in control.labels)
            labels = html.escape(_json(control.labels), quote=True)
            return (
                f'<div class="tse-control"><label class="tse-control-label" '
                f'for="{ident}">{label}</label>'
                f'<input type="range" id="{ident}" min="0" '
                f'max="{len(control.values) - 1}" step="1" '
                f'value="{control.start_index}" data-tse-control="{k}" '
                f'data-tse-labels="{labels}" '
                f'aria-valuetext="{html.escape(start, quote=True)}">'
                f'<span class="tse-value" aria-hidden="true" '
                f'style="min-width:{width}ch">{html.escape(start)}</span></div>'
            )
        options = "".join(
            f'<option value="{i}"{" selected" if i == control.start_index else ""}>'
            f"{html.escape(text)}</option>"
            for i, text in enumerate(control.labels)
        )
        return (
            f'<div class="tse-control"><label class="tse-control-label" '
            f'for="{ident}">{label}</label><select id="{ident}" '
            f'data-tse-control="{k}">{options}</select></div>'
        )

    def html(self) -> str:
        """The explorer's HTML fragment (deterministic)."""
        start = self.start_state
        ident = self.id
        panels = []
        for i, panel in enumerate(start.panels):
            wide = " tse-wide" if panel.wide else ""
            labelled = f"{ident}-p{i}-title" if panel.title else f"{ident}-title"
            panels.append(
                f'<div class="tse-panel{wide}">'
                f'<p class="tse-panel-title" id="{ident}-p{i}-title">'
                f"{html.escape(panel.title)}</p>"
                f'<div class="tse-plot" id="{ident}-p{i}" role="img" '
                f'aria-labelledby="{labelled}" '
                f'style="height:{panel.height}px"></div></div>'
            )
        controls = "".join(
            self._control_html(k, control)
            for k, control in enumerate(self.controls)
        )
        summary = html.escape(start.summary)
        boot = (
            "(function(){"
            'if(document.querySelector("script[data-tse-explorers]")){return;}'
            f"\n{RUNTIME_JS}\n"
            f"window.TSEExplorers.inline({_json(ident)},{_json(RUNTIME_CSS)},"
            f"{_json(_plotly_cdn())});}})();"
        )
        return (
            f'<figure class="tse-explorer" id="{ident}" '
            f'aria-labelledby="{ident}-title" aria-describedby="{ident}-desc">\n'
            f'<p class="tse-title" id="{ident}-title">'
            f"{html.escape(self.title)}</p>\n"
            f'<p class="tse-desc" id="{ident}-desc">'
            f"{html.escape(self.description)}</p>\n"
            f'<p class="tse-fallback">This interactive figure needs '
            f"JavaScript, which has not run here: it works in the book's web "
            f"page and in a trusted, running notebook. It first shows: "
            f"{summary}</p>\n"
            f'<div class="tse-controls" hidden>{controls}</div>\n'
            f'<div class="tse-panels" hidden>{"".join(panels)}</div>\n'
            f'<p class="tse-summary" id="{ident}-summary" aria-live="polite" '
            f"hidden>{summary}</p>\n"
            f'<script type="application/json" class="tse-data">'
            f"{_json(self._payload)}</script>\n"
            f'<script data-tse-inline="1">{boot}</script>\n'
            "</figure>"
        )

    def text(self) -> str:
        """A plain-text description (lines of at most 79 display columns)."""
        lines = _wrap(f"Interactive figure: {self.title}.")
        lines += _wrap(self.description)
        for control in self.controls:
            lines += _wrap(
                f"- {control.label}: {', '.join(control.labels)}", 79
            )
        lines += _wrap(f"Shown first: {self.start_state.summary}")
        return "\n".join(lines)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


def _plotly_cdn() -> str:
    return f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"


def show(explorer: Explorer) -> None:
    """Display an :class:`Explorer` (its HTML and its plain text)."""
    if not isinstance(explorer, Explorer):
        raise TypeError(
            "show() takes a figures.Explorer, got "
            f"{type(explorer).__name__}; wrap a Plotly figure as "
            "Explorer(id, title=..., description=..., controls=[], "
            "states={(): State(Panel(fig), summary)})"
        )
    from IPython.display import display

    display(explorer._repr_mimebundle_(), raw=True)


def heatmap_panel(
    values,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | None = None,
    *,
    title: str = "",
    blocked=None,
    zmin: float = 0.0,
    zmax: float = 1.0,
    signed: bool = False,
    value_name: str = "weight",
    xlabel: str = "key",
    ylabel: str = "query",
    highlight_row: int | None = None,
    height: int | None = None,
    colorbar: bool = True,
) -> Panel:
    """A heatmap with tokens on its axes, e.g. attention weights.

    Rows run down (row 0 at the top), columns across; hovering a cell shows
    its value (the axes name its row and column). Tokens may repeat (the axes
    use positions, labelled with the tokens).

    Args:
        values: a 2-D tensor or array (R, C); leading size-1 dims dropped.
        row_labels: R labels (e.g. the query tokens).
        col_labels: C labels (default: ``row_labels``).
        title: the panel's title.
        blocked: optional boolean (R, C), ``True`` where a cell is blocked:
            drawn as an empty grey cell, with no hover.
        zmin, zmax: the colour range (attention weights: 0 … 1).
        signed: use the diverging map for values of both signs.
        value_name: the colour bar's title and the hover label's name.
        xlabel, ylabel: axis titles.
        highlight_row: outline this row (``None``: none).
        height: px (default: grows with R, 220 … 520).
        colorbar: draw the colour bar.

    Returns:
        The :class:`Panel`.
    """
    array = viz.to_numpy(values)
    while array.ndim > 2 and array.shape[0] == 1:
        array = array[0]
    if array.ndim != 2:
        raise ValueError(
            f"values must be 2-D (R, C), got shape {tuple(array.shape)}"
        )
    rows = [str(t) for t in row_labels]
    cols = rows if col_labels is None else [str(t) for t in col_labels]
    if (len(rows), len(cols)) != array.shape:
        raise ValueError(
            f"values has shape {array.shape} but there are {len(rows)} "
            f"row_labels and {len(cols)} col_labels"
        )
    hidden = np.zeros(array.shape, dtype=bool)
    if blocked is not None:
        mask = viz.to_numpy(blocked).astype(bool)
        while mask.ndim > 2 and mask.shape[0] == 1:  # (1, 1, R, C) → (R, C)
            mask = mask[0]
        try:
            hidden = np.broadcast_to(mask, array.shape)
        except ValueError:
            raise ValueError(
                f"blocked has shape {mask.shape}, which does not broadcast "
                f"to the values' shape {array.shape}"
            ) from None
    if highlight_row is not None and not 0 <= highlight_row < len(rows):
        raise ValueError(
            f"highlight_row must be in 0 … {len(rows) - 1} or None, "
            f"got {highlight_row!r}"
        )
    z = np.where(hidden, np.nan, array)
    cmap = viz.DIVERGING_CMAP if signed else viz.ATTENTION_CMAP
    trace = {
        "type": "heatmap",
        "z": z,
        "x": list(range(len(cols))),
        "y": list(range(len(rows))),
        "zmin": zmin,
        "zmax": zmax,
        "colorscale": viz.plotly_colorscale(cmap),
        "showscale": colorbar,
        "colorbar": {
            "title": {"text": value_name},
            "thickness": 10,
            "len": 1.0,
        },
        "xgap": 1,
        "ygap": 1,
        # The value only: a text per cell (row, column and value) made the
        # larger explorers several times heavier (Chapter 7's by 0.6 MB),
        # and the cell's row and column are labelled on the axes beside it.
        # Blocked cells are gaps: no hover, drawn grey.
        "hovertemplate": f"{value_name} %{{z:.4f}}<extra></extra>",
        "hoverongaps": False,
    }
    shapes = []
    if highlight_row is not None:
        shapes.append(
            {
                "type": "rect",
                "xref": "x domain",
                "yref": "y",
                "x0": 0,
                "x1": 1,
                "y0": highlight_row - 0.5,
                "y1": highlight_row + 0.5,
                "line": {"color": "#d62728", "width": 3},
            }
        )
    layout = {
        "xaxis": {
            "tickvals": list(range(len(cols))),
            "ticktext": cols,
            "tickangle": -45,
            "title": {"text": xlabel},
            "range": [-0.5, len(cols) - 0.5],
            "showgrid": False,
            "zeroline": False,
        },
        "yaxis": {
            "tickvals": list(range(len(rows))),
            "ticktext": rows,
            "title": {"text": ylabel},
            "range": [len(rows) - 0.5, -0.5],  # row 0 at the top
            "showgrid": False,
            "zeroline": False,
        },
        "shapes": shapes,
        "plot_bgcolor": viz.BLOCKED_COLOR if hidden.any() else "white",
    }
    if height is None:
        height = int(min(520, max(220, 110 + 26 * len(rows))))
    return Panel({"data": [trace], "layout": layout}, title, height=height)
