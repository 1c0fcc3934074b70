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
    from transformer_edu import interactive as ix

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

``interactive.show(explorer)`` displays it too (for a cell that goes on).

Building blocks:

- Controls: :class:`Buttons` (a row of toggle buttons), :class:`Slider`
  (an ``<input type=range>`` that shows its value's text) and :class:`Select`
  (a drop-down list). Each takes a ``name`` (the keyword of ``states``),
  the ``values`` it offers, optional ``labels`` (the text of each value),
  ``label`` (the control's visible name) and ``start``.
- :class:`State`: the panels of one combination and a one-sentence
  ``summary`` of what it shows (read out by screen readers when a control
  changes it, and shown under the plots).
- :class:`Panel`: one Plotly figure (a ``go.Figure`` or a ``{"data",
  "layout"}`` dict) with a ``title`` written above it in HTML (so it wraps on
  a phone), a ``height`` in px, ``wide=True`` to span the whole row, and
  ``narrow``: layout changes applied when the panel is under 480 px wide.
  :func:`heatmap_panel` makes the usual labelled attention heatmap.
- :class:`Explorer`: checks that every combination of control values has a
  state (a dict must cover all of them), and renders one deterministic HTML
  fragment: fixed ids, numbers rounded to ``decimals``, each distinct trace
  look, trace data and layout stored once, no random ids, so ``pytest --nbval`` compares it.

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

Panel layouts are drawn in the book's look (:data:`BOOK_LAYOUT`): a Plotly
template set on a figure is dropped. Titles belong in :class:`Panel`, not in
the Plotly layout (Plotly titles do not wrap).

The package's explorers (one per chapter that has one):

- :func:`mask_explorer`: padding and causal masks (Chapter 1).
- :func:`positional_explorer`: the sinusoidal table and its rotations
  (Chapter 3).
- :func:`beam_explorer`: beam search over beam sizes and length penalties
  (Chapter 8).
"""

from __future__ import annotations

import base64
import copy
import html
import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.offline import get_plotlyjs_version

from . import viz
from .attention import scaled_dot_product_attention
from .masks import causal_mask, padding_mask
from .positional import sinusoidal_table

__all__ = [
    "BOOK_LAYOUT",
    "DECIMALS",
    "Buttons",
    "Explorer",
    "Panel",
    "Select",
    "Slider",
    "State",
    "beam_explorer",
    "heatmap_panel",
    "mask_explorer",
    "positional_explorer",
    "rounded",
    "show",
]

DECIMALS = 4
"""Digits kept for every number of a displayed explorer (by default)."""

BOOK_LAYOUT: dict = {
    "font": {
        "family": "system-ui, -apple-system, 'Segoe UI', Roboto, "
        "'DejaVu Sans', NanumGothic, 'Noto Sans KR', sans-serif",
        "size": 13,
        "color": "#1f2328",
    },
    "paper_bgcolor": "white",
    "plot_bgcolor": "white",
    "margin": {"l": 56, "r": 16, "t": 16, "b": 48},
    "hoverlabel": {"font": {"size": 13}},
    # No zooming or panning: a drag on a phone scrolls the page.
    "dragmode": False,
}
"""The book's look for every panel; a panel's own layout overrides it."""

_AXIS_DEFAULTS = {"automargin": True, "fixedrange": True}
_AXIS_KEY = re.compile(r"^[xy]axis\d*$")
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ASSETS = Path(__file__).parent / "assets" / "explorer"
RUNTIME_JS = (_ASSETS / "explorer.js").read_text(encoding="utf-8")
"""The explorers' browser code (the book serves it as ``explorers.js``)."""
RUNTIME_CSS = (_ASSETS / "explorer.css").read_text(encoding="utf-8")
"""The explorers' styles (the book serves them as ``explorers.css``)."""
if "</" in RUNTIME_JS or "</" in RUNTIME_CSS:  # pragma: no cover - a guard
    raise RuntimeError("explorer.js/.css must not contain '</' (inlined)")


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------


def _decode_typed_array(value: dict) -> np.ndarray:
    """Plotly 6+ stores NumPy arrays as ``{"dtype", "bdata", "shape"}``."""
    dtype = np.dtype(value["dtype"]).newbyteorder("<")
    array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=dtype)
    shape = value.get("shape")
    if shape:
        dims = shape if isinstance(shape, list) else str(shape).split(",")
        array = array.reshape([int(d) for d in dims])
    return array


def rounded(value, decimals: int = DECIMALS):
    """A JSON-ready copy of ``value``, every float rounded to ``decimals``.

    Walks dicts, lists, tuples, NumPy arrays (also Plotly's base64 typed
    arrays) and tensors; ``-0.0`` becomes ``0.0`` and NaN or infinity
    ``None``, so CPU and GPU runs produce the same text.
    """
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            return rounded(_decode_typed_array(value), decimals)
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


def _merge(base: dict, changes: Mapping) -> dict:
    """``base`` updated in place by ``changes``, nested dicts merged."""
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


# ---------------------------------------------------------------------------
# Controls, panels, states
# ---------------------------------------------------------------------------


def _value_label(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class _Control:
    """A control offering ``values``; see :class:`Buttons`."""

    kind = ""

    def __init__(
        self,
        name: str,
        values: Iterable,
        *,
        labels: Sequence[str] | None = None,
        label: str | None = None,
        start=None,
    ) -> None:
        kind = type(self).__name__
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(
                f"{kind} name must be a Python identifier (it is the keyword "
                f"of the states function), got {name!r}"
            )
        if isinstance(values, (str, bytes)) or not isinstance(
            values, Iterable
        ):
            raise TypeError(
                f"{kind} {name!r}: values must be a sequence of values, "
                f"got {type(values).__name__} ({values!r})"
            )
        values = tuple(values)
        if not values:
            raise ValueError(f"{kind} {name!r}: values must not be empty")
        for value in values:
            if isinstance(value, np.generic):
                raise TypeError(
                    f"{kind} {name!r}: values must be plain int, float, str "
                    f"or bool, got {type(value).__name__} {value!r}; use "
                    ".item()"
                )
            if not isinstance(value, (int, float, str, bool)):
                raise TypeError(
                    f"{kind} {name!r}: values must be int, float, str or "
                    f"bool, got {type(value).__name__} {value!r}"
                )
        if len(set(values)) != len(values):
            raise ValueError(
                f"{kind} {name!r}: values must not repeat, got {values}"
            )
        if labels is None:
            labels = [_value_label(value) for value in values]
        elif isinstance(labels, str):
            raise TypeError(
                f"{kind} {name!r}: labels must be a sequence of strings, "
                f"got the string {labels!r}"
            )
        labels = list(labels)
        if len(labels) != len(values):
            raise ValueError(
                f"{kind} {name!r}: {len(labels)} labels for {len(values)} "
                "values; give one label per value"
            )
        for text in labels:
            if not isinstance(text, str) or not text.strip():
                raise ValueError(
                    f"{kind} {name!r}: every label must be a non-empty "
                    f"string, got {text!r}"
                )
        if label is None:
            label = name.replace("_", " ")
        if not isinstance(label, str) or not label.strip():
            raise ValueError(
                f"{kind} {name!r}: label must be a non-empty string, "
                f"got {label!r}"
            )
        if start is None:
            start = values[0]
        if start not in values:
            raise ValueError(
                f"{kind} {name!r}: start must be one of values {values}, "
                f"got {start!r}"
            )
        self.name = name
        self.values = values
        self.labels = labels
        self.label = label
        self.start = start
        self.start_index = values.index(start)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.name!r}, {list(self.values)!r}, "
            f"start={self.start!r})"
        )


class Buttons(_Control):
    """A row of toggle buttons, one per value (``aria-pressed`` marks the
    chosen one); Tab reaches each, Enter or Space chooses it.

    Args:
        name: the keyword under which ``states`` receives the value.
        values: the values offered (int, float, str or bool; distinct).
        labels: the text of each value's button (default: the value).
        label: the control's visible name (default: ``name``).
        start: the value chosen first (default: the first).
    """

    kind = "buttons"


class Slider(_Control):
    """A range slider over ``values`` (in order), showing the chosen value's
    label beside it; arrow keys move it. Arguments as :class:`Buttons`."""

    kind = "slider"


class Select(_Control):
    """A drop-down list of ``values``; arrow keys move through it.
    Arguments as :class:`Buttons`."""

    kind = "select"


class Panel:
    """One plot of an explorer's state.

    Args:
        figure: a ``plotly.graph_objects.Figure`` or a dict with ``data``
            (a list of traces) and optionally ``layout``.
        title: text written above the plot (it wraps on a phone); it may
            change from state to state.
        height: the plot's height in px (default: the layout's height, else
            360); the same in every state.
        wide: span the whole row instead of sharing it with other panels;
            the same in every state.
        narrow: layout changes applied when the plot is under 480 px wide
            (e.g. ``{"margin": {"l": 40}, "xaxis": {"tickangle": -90}}``).
    """

    def __init__(
        self,
        figure,
        title: str = "",
        *,
        height: int | None = None,
        wide: bool = False,
        narrow: Mapping | None = None,
    ) -> None:
        if isinstance(figure, go.Figure):
            spec = figure.to_plotly_json()
        elif isinstance(figure, Mapping) and "data" in figure:
            spec = {
                "data": list(figure["data"]),
                "layout": dict(figure.get("layout") or {}),
            }
        else:
            raise TypeError(
                "figure must be a plotly.graph_objects.Figure or a dict with "
                f"'data' (and 'layout'), got {type(figure).__name__}"
            )
        if not isinstance(title, str):
            raise TypeError(
                f"title must be a str, got {type(title).__name__}"
            )
        if narrow is not None and not isinstance(narrow, Mapping):
            raise TypeError(
                "narrow must be a dict of layout changes or None, got "
                f"{type(narrow).__name__}"
            )
        data = rounded(spec.get("data") or [], decimals=12)
        for trace in data:
            if not isinstance(trace, dict):
                raise TypeError(
                    f"every trace must be a dict, got {type(trace).__name__}"
                )
        user = rounded(dict(spec.get("layout") or {}), decimals=12)
        user.pop("template", None)
        layout = _merge(copy.deepcopy(BOOK_LAYOUT), user)
        axes = {key for key in layout if _AXIS_KEY.match(key)}
        for key in axes | {"xaxis", "yaxis"}:
            layout[key] = _merge(dict(_AXIS_DEFAULTS), layout.get(key) or {})
        if height is None:
            height = layout.get("height") or 360
        if isinstance(height, bool) or not isinstance(height, (int, float)):
            raise TypeError(f"height must be a number of px, got {height!r}")
        if not 80 <= height <= 2000:
            raise ValueError(f"height must be 80 … 2000 px, got {height!r}")
        layout.pop("height", None)
        layout.pop("width", None)  # the plot takes the panel's width
        self.data: list[dict] = data
        self.layout: dict = layout
        self.title = title
        self.height = int(height)
        self.wide = bool(wide)
        self.narrow: dict | None = (
            None if narrow is None else rounded(dict(narrow), decimals=12)
        )


class State:
    """What an explorer shows for one combination of its controls.

    Args:
        panels: a :class:`Panel`, a figure, or a sequence of them (a figure
            becomes a panel without a title).
        summary: one or two sentences saying what this state shows, with
            its numbers; read out when a control changes the state.
        details: optional lines of numbers printed under the figure by the
            live mode (:mod:`~transformer_edu.playgrounds`); the kernel-free
            explorer does not store them.
    """

    def __init__(self, panels, summary: str, details: str = "") -> None:
        if isinstance(panels, (Panel, go.Figure, Mapping)):
            panels = [panels]
        if isinstance(panels, (str, bytes)) or not isinstance(
            panels, Iterable
        ):
            raise TypeError(
                "panels must be a Panel, a figure or a sequence of them, got "
                f"{type(panels).__name__}"
            )
        panels = [p if isinstance(p, Panel) else Panel(p) for p in panels]
        if not panels:
            raise ValueError("panels must hold at least one panel")
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError(
                f"summary must be a non-empty string, got {summary!r}"
            )
        if not isinstance(details, str):
            raise TypeError(
                f"details must be a str, got {type(details).__name__}"
            )
        self.panels: list[Panel] = panels
        self.summary = " ".join(summary.split())
        self.details = details


# ---------------------------------------------------------------------------
# The explorer
# ---------------------------------------------------------------------------


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


def check_controls(controls, kinds: tuple[type, ...], kind_names: str) -> list[str]:
    """Check that ``controls`` is a list of controls of ``kinds`` with distinct names.

    Shared by :class:`Explorer` and the live explorers of
    :mod:`transformer_edu.playgrounds`.

    Args:
        controls: what the caller passed.
        kinds: the control classes allowed.
        kind_names: how the error messages name them, e.g.
            ``"Buttons, Slider or Select"``.

    Returns:
        The controls' names, in order.

    Raises:
        TypeError: ``controls`` is not a list (a single control or a string
            included), or holds something else than ``kinds``.
        ValueError: two controls share a name.
    """
    if isinstance(controls, (str, bytes, *kinds)) or not isinstance(controls, Sequence):
        raise TypeError(f"controls must be a list of {kind_names}, got {type(controls).__name__}")
    for control in controls:
        if not isinstance(control, kinds):
            raise TypeError(f"controls must hold {kind_names}, got {type(control).__name__}")
    names = [control.name for control in controls]
    if len(set(names)) != len(names):
        raise ValueError(f"controls must have distinct names, got {names}")
    return names


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
        names = check_controls(controls, (_Control,), "Buttons, Slider or Select")
        if isinstance(decimals, bool) or not isinstance(decimals, int):
            raise TypeError(f"decimals must be an int, got {decimals!r}")
        if not 0 <= decimals <= 10:
            raise ValueError(f"decimals must be in 0 … 10, got {decimals}")
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
        :class:`~transformer_edu.playgrounds.LiveExplorer`); the HTML book
        keeps showing this precomputed explorer.

        Args:
            controls: controls to add, or to put in place of the controls of
                the same name: e.g. a :class:`Slider` offering more values,
                or a :class:`~transformer_edu.playgrounds.Text` box for an
                argument of ``states`` that this explorer kept fixed.
            fixed: more keyword arguments for ``states``, kept fixed.

        Returns:
            The :class:`~transformer_edu.playgrounds.LiveExplorer`; display it
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
        from .playgrounds import LiveExplorer

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
            "show() takes an interactive.Explorer, got "
            f"{type(explorer).__name__}; wrap a Plotly figure as "
            "Explorer(id, title=..., description=..., controls=[], "
            "states={(): State(Panel(fig), summary)})"
        )
    from IPython.display import display

    display(explorer._repr_mimebundle_(), raw=True)


# ---------------------------------------------------------------------------
# A labelled heatmap panel
# ---------------------------------------------------------------------------


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
    """Attention weights and output changes for every pad count and mask."""
    generator = torch.Generator().manual_seed(seed)
    vocab = sorted(set(tokens)) + ["<pad>"]
    # one vector per word
    embedding = torch.randn(len(vocab), d_model, generator=generator)
    w_q, w_k, w_v = (
        torch.randn(d_model, d_model, generator=generator)
        / math.sqrt(d_model)
        for _ in range(3)
    )
    pad_id = len(vocab) - 1

    def attend(n_pad: int, use_padding: bool, use_causal: bool):
        ids = torch.tensor(
            [[vocab.index(t) for t in tokens] + [pad_id] * n_pad]
        )  # (1, L)
        # (1, 1, L, D): batch and one head, as the masks expect
        x = embedding[ids][:, None]
        length = ids.shape[1]
        allowed = torch.ones(1, 1, length, length, dtype=torch.bool)
        if use_padding:
            allowed = allowed & padding_mask(ids, pad_id)  # (1, 1, 1, L)
        if use_causal:
            allowed = allowed & causal_mask(length)  # (1, 1, L, L)
        out, weights = scaled_dot_product_attention(
            x @ w_q, x @ w_k, x @ w_v, allowed
        )
        # (L, D), (L, L), (L, L)
        return out[0, 0], weights[0, 0], allowed[0, 0].expand_as(weights[0, 0])

    states = []
    for n_pad in range(max_pad + 1):
        panels = []
        for name, use_padding, use_causal in _MASK_MODES:
            out, weights, allowed = attend(n_pad, use_padding, use_causal)
            # the same sentence without padding
            reference, _, _ = attend(0, use_padding, use_causal)
            moved = (out[: len(tokens)] - reference).norm(dim=-1).max().item()
            panels.append(
                {
                    "name": name,
                    "weights": weights,
                    "allowed": allowed,
                    "moved": moved,
                }
            )
        states.append(
            {
                "n_pad": n_pad,
                "labels": tokens + ["<pad>"] * n_pad,
                "panels": panels,
            }
        )
    return states


def mask_explorer(
    sentence: str = "the cat sat on the mat",
    max_pad: int = 3,
    start_pad: int = 2,
    d_model: int = 16,
    seed: int = 0,
    explorer_id: str = "ch01-mask-explorer",
) -> Explorer:
    """The attention-mask explorer of Chapter 1, precomputed for the book.

    A real sentence, embedded with a seeded random table and projected by
    seeded random W_Q, W_K, W_V, goes through
    :func:`~transformer_edu.scaled_dot_product_attention` with four masks:
    none, padding (:func:`~transformer_edu.padding_mask`), causal
    (:func:`~transformer_edu.causal_mask`) and both; one heatmap panel each.
    Two rows of buttons: how many ``<pad>`` tokens follow the sentence
    (0 … ``max_pad``), and which query token's row to outline.

    Each panel's title gives how far the real tokens' outputs moved compared
    with the unpadded sentence (the largest norm of the change): 0 exactly
    when the mask keeps the pads out. Blocked cells are empty (grey).

    Args:
        sentence: space-separated tokens.
        max_pad: the largest number of pad tokens offered (0 … 8).
        start_pad: the number of pads shown first.
        d_model: width of the random embeddings.
        seed: seed of the embeddings and projections.
        explorer_id: the explorer's HTML id.

    Returns:
        The :class:`Explorer`; controls ``pads`` and ``query`` (-1: none).
    """
    if not isinstance(sentence, str) or not sentence.split():
        raise ValueError(
            "sentence must be a non-empty string of space-separated tokens, "
            f"got {sentence!r}"
        )
    tokens = sentence.split()
    if "<pad>" in tokens:
        raise ValueError(
            "sentence must not contain '<pad>': the figure adds the pads"
        )
    if (
        isinstance(max_pad, bool)
        or not isinstance(max_pad, int)
        or not 0 <= max_pad <= 8
    ):
        raise ValueError(f"max_pad must be an int in 0 … 8, got {max_pad!r}")
    if (
        isinstance(start_pad, bool)
        or not isinstance(start_pad, int)
        or not 0 <= start_pad <= max_pad
    ):
        raise ValueError(
            f"start_pad must be an int in 0 … max_pad = {max_pad}, "
            f"got {start_pad!r}"
        )
    if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model < 1:
        raise ValueError(f"d_model must be a positive int, got {d_model!r}")
    computed = _mask_explorer_states(tokens, max_pad, d_model, seed)

    def draw(pads: int, query: int) -> State:
        state = computed[pads]
        panels = [
            heatmap_panel(
                panel["weights"],
                state["labels"],
                title=f"{panel['name']}: moved {panel['moved']:.4f}",
                blocked=~panel["allowed"],
                highlight_row=None if query < 0 else query,
                height=380,
            )
            for panel in state["panels"]
        ]
        moved = ", ".join(
            f"{panel['name']} {panel['moved']:.4f}"
            for panel in state["panels"]
        )
        plural = "s" if pads != 1 else ""
        summary = (
            f"{pads} pad token{plural} after the sentence. Largest change of "
            f"a real token's output: {moved}."
        )
        if query >= 0:
            summary += f" Outlined: the row of query {tokens[query]!r}."
        return State(panels, summary)

    return Explorer(
        explorer_id,
        title="Attention weights under four masks",
        description=(
            f"Attention of the sentence “{sentence}” followed by pad tokens, "
            "under no mask, the padding mask, the causal mask and both. Rows "
            "are queries, columns keys; white is weight 0, dark blue 1, grey "
            "a blocked cell. Each title says how far the real tokens' "
            "outputs moved (the largest norm of the change) compared with "
            "the unpadded sentence: 0 when the mask keeps the pads out."
        ),
        controls=[
            Buttons(
                "pads",
                range(max_pad + 1),
                labels=[
                    f"{n} pad{'s' if n != 1 else ''}"
                    for n in range(max_pad + 1)
                ],
                label="pad tokens",
                start=start_pad,
            ),
            Buttons(
                "query",
                range(-1, len(tokens)),
                labels=["none"] + tokens,
                label="outline query",
                start=-1,
            ),
        ],
        states=draw,
    )


# ---------------------------------------------------------------------------
# Chapter 3: the positional-encoding explorer
# ---------------------------------------------------------------------------


def _int_choices(name: str, values, low: int, high: int) -> tuple[int, ...]:
    """``values`` as a tuple of distinct ints in ``low … high``, else raise."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(
            f"{name} must be a sequence of ints, got "
            f"{type(values).__name__} ({values!r})"
        )
    values = tuple(values)
    if not values:
        raise ValueError(
            f"{name} must hold at least one value, got an empty sequence"
        )
    for value in values:
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not low <= value <= high
        ):
            raise ValueError(
                f"{name} must hold ints in {low} … {high}, got {value!r}"
            )
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a value, got {values}")
    return values


def _pair_turns(k: int, d_model: int) -> torch.Tensor:
    """The angle k · ω_i in degrees (0 … 360) by which M_k turns pair i.
    (d_model / 2,)"""
    omega = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64)
        * (-math.log(10000.0) / d_model)
    )
    return torch.remainder(k * omega, 2 * math.pi) * (180.0 / math.pi)


def positional_explorer(
    d_models: tuple[int, ...] = (16, 32, 64, 128),
    max_len: int = 48,
    positions: tuple[int, ...] = (0, 1, 5, 10, 20, 40),
    offsets: tuple[int, ...] = (1, 2, 5, 10, 20, 50),
    start_d_model: int = 64,
    explorer_id: str = "ch03-positional-explorer",
) -> Explorer:
    """The sinusoidal-encoding explorer of Chapter 3, precomputed.

    Three panels computed with :func:`~transformer_edu.sinusoidal_table`:

    - the table, positions down and dimensions across, with one position's
      row outlined (a wide panel);
    - that position's encoding, sines in the even dimensions and cosines in
      the odd ones;
    - the rotation M_k with PE(pos + k) = M_k PE(pos), as the angle
      k · ω_i (degrees, modulo 360) by which it turns each pair i.

    Buttons choose d_model; one slider the outlined position, another the
    offset k.

    Args:
        d_models: the widths offered, one button each (even, 2 … 512).
        max_len: the number of positions in the table (1 … 512).
        positions: the positions offered by the first slider
            (0 … max_len − 1).
        offsets: the offsets k offered by the second slider (0 … 10000).
        start_d_model: the width shown first; one of ``d_models``.
        explorer_id: the explorer's HTML id.

    Returns:
        The :class:`Explorer`; controls ``d_model``, ``position`` and
        ``offset``.
    """
    d_models = _int_choices("d_models", d_models, 2, 512)
    odd = [d for d in d_models if d % 2]
    if odd:
        raise ValueError(
            f"d_models must be even (sines and cosines come in pairs), "
            f"got {odd}"
        )
    if (
        isinstance(max_len, bool)
        or not isinstance(max_len, int)
        or not 1 <= max_len <= 512
    ):
        raise ValueError(f"max_len must be an int in 1 … 512, got {max_len!r}")
    positions = _int_choices("positions", positions, 0, max_len - 1)
    offsets = _int_choices("offsets", offsets, 0, 10_000)
    if start_d_model not in d_models:
        raise ValueError(
            f"start_d_model must be one of d_models {d_models}, "
            f"got {start_d_model!r}"
        )

    tables: dict[tuple[int, int], torch.Tensor] = {}
    diverging = viz.plotly_colorscale(viz.DIVERGING_CMAP)

    def table(d: int, length: int) -> torch.Tensor:  # (L, d), computed once
        if (d, length) not in tables:
            tables[d, length] = sinusoidal_table(length, d)
        return tables[d, length]

    def table_panel(d: int, position: int, length: int) -> Panel:
        trace = {
            "type": "heatmap",
            "z": table(d, length),
            "x": list(range(d)),
            "y": list(range(length)),
            "colorscale": diverging,
            "zmin": -1.0,
            "zmax": 1.0,
            "colorbar": {"title": {"text": "value"}, "thickness": 10},
            "hovertemplate": "position %{y}, dimension %{x}: %{z:.4f}"
            "<extra></extra>",
        }
        outline = {
            "type": "rect",
            "xref": "x domain",
            "yref": "y",
            "x0": 0,
            "x1": 1,
            "y0": position - 0.5,
            "y1": position + 0.5,
            "line": {"color": "black", "width": 2},
        }
        layout = {
            "xaxis": {"title": {"text": "dimension"}, "showgrid": False},
            "yaxis": {
                "title": {"text": "position"},
                "autorange": "reversed",
                "showgrid": False,
            },
            "shapes": [outline],
        }
        return Panel(
            {"data": [trace], "layout": layout},
            f"The table for d_model = {d}: one row per position "
            f"(row {position} outlined)",
            height=320,
            wide=True,
        )

    def row_panel(d: int, position: int, length: int) -> Panel:
        row = table(d, length)[position]
        traces = []
        curves = (
            ("sin (even dimensions)", "circle", "#1f77b4"),
            ("cos (odd dimensions)", "square", "#d95f02"),
        )
        for column, (name, symbol, color) in enumerate(curves):
            traces.append(
                {
                    "type": "scatter",
                    "x": list(range(column, d, 2)),
                    "y": row[column::2],
                    "mode": "lines+markers",
                    "name": name,
                    "marker": {"symbol": symbol, "size": 6, "color": color},
                    "line": {"width": 1, "color": color},
                    "hovertemplate": "dimension %{x}: %{y:.4f}<extra></extra>",
                }
            )
        layout = {
            "xaxis": {"title": {"text": "dimension"}},
            "yaxis": {"title": {"text": "value"}, "range": [-1.1, 1.1]},
            "showlegend": False,
        }
        return Panel(
            {"data": traces, "layout": layout},
            f"Position {position}: sines in even dimensions (●), cosines "
            "in odd ones (■)",
            height=300,
        )

    def turn_panel(d: int, k: int) -> Panel:
        trace = {
            "type": "bar",
            "x": list(range(d // 2)),
            "y": _pair_turns(k, d),
            "marker": {"color": "#2ca02c"},
            "hovertemplate": "pair %{x}: turns by %{y:.1f}°<extra></extra>",
        }
        layout = {
            "xaxis": {"title": {"text": "pair i"}},
            "yaxis": {
                "title": {"text": "degrees"},
                "range": [0, 360],
                "tickvals": [0, 90, 180, 270, 360],
            },
        }
        return Panel(
            {"data": [trace], "layout": layout},
            f"M_k for k = {k} turns pair i by k·ω_i (degrees, modulo 360)",
            height=300,
        )

    def draw(
        d_model: int, position: int, offset: int, max_len: int = max_len
    ) -> State:
        # the live mode (Explorer.live) may offer any values: check them
        _int_choices("d_model", [d_model], 2, 512)
        if d_model % 2:
            raise ValueError(
                f"d_model must be even (sines and cosines come in pairs), "
                f"got {d_model}"
            )
        _int_choices("max_len", [max_len], 1, 512)
        _int_choices("position", [position], 0, max_len - 1)
        _int_choices("offset", [offset], 0, 10_000)
        turns = _pair_turns(offset, d_model)
        summary = (
            f"d_model = {d_model}, position {position}, offset k = {offset}: "
            f"the first pair turns by {turns[0].item():.1f}°, the last by "
            f"{turns[-1].item():.1f}°."
        )
        return State(
            [
                table_panel(d_model, position, max_len),
                row_panel(d_model, position, max_len),
                turn_panel(d_model, offset),
            ],
            summary,
        )

    return Explorer(
        explorer_id,
        title="Sinusoidal encoding: pick d_model, a position, an offset k",
        description=(
            "Top: the sinusoidal table, one row per position (blue −1, "
            "white 0, red +1). Below: the outlined row as sines and cosines, "
            "and the angle by which the rotation M_k, with PE(pos + k) = "
            "M_k PE(pos), turns each (sin, cos) pair."
        ),
        controls=[
            Buttons(
                "d_model",
                d_models,
                labels=[f"d_model = {d}" for d in d_models],
                label="width",
                start=start_d_model,
            ),
            Slider("position", positions, label="position"),
            Slider("offset", offsets, label="offset k"),
        ],
        states=draw,
    )


# ---------------------------------------------------------------------------
# Chapter 8: the beam-search explorer
# ---------------------------------------------------------------------------


def _beam_explorer_states(
    translator, sentence: str, beam_sizes, alphas, max_len: int
) -> dict:
    """The finished hypotheses of every (beam size, α), best first."""
    # imported here: the earlier figures need no decoding
    from .data import Vocab, pad_batch
    from .decoding import beam_search_nbest, gnmt_length_penalty

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
    beam_sizes = _int_choices("beam_sizes", beam_sizes, 1, 16)
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
        if (
            isinstance(alpha, bool)
            or not isinstance(alpha, (int, float))
            or not 0 <= alpha <= 5
        ):
            raise ValueError(f"alphas must hold numbers in 0 … 5, got {alpha!r}")
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
    elif (
        isinstance(max_len, bool)
        or not isinstance(max_len, int)
        or not 1 <= max_len <= limit
    ):
        raise ValueError(
            f"max_len must be an int in 1 … {limit} (the model's max_len), "
            f"got {max_len!r}"
        )

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
