"""The controls, panels and states of the book's explorers (all chapters).

An explorer (:class:`~transformer_edu.figures.explorer.Explorer`) offers
controls (:class:`Buttons`, :class:`Slider`, :class:`Select`) and shows one
:class:`State` per combination of their values; a state holds
:class:`Panel` s, each one Plotly figure. Numbers are rounded with
:func:`rounded` so that a stored explorer reproduces exactly.
"""

from __future__ import annotations

import base64
import copy
import math
import re
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch

from .. import _validate

__all__ = [
    "BOOK_LAYOUT",
    "DECIMALS",
    "Buttons",
    "Panel",
    "Select",
    "Slider",
    "State",
    "check_controls",
    "rounded",
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
        _validate.number_in_range("height", height, 80, 2000)  # px
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
            live mode (:mod:`~transformer_edu.figures.live`); the kernel-free
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


def check_controls(controls, kinds: tuple[type, ...], kind_names: str) -> list[str]:
    """Check that ``controls`` is a list of controls of ``kinds`` with distinct names.

    Shared by :class:`Explorer` and the live explorers of
    :mod:`transformer_edu.figures.live`.

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
