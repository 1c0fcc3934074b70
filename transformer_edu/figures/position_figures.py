"""The figures of Chapter 3: the positional-encoding explorer and its playground."""

from __future__ import annotations

import math

import torch

from ..positional import sinusoidal_table
from . import viz
from .. import _validate
from .controls import Buttons, Panel, Slider, State
from .explorer import Explorer
from .live import LiveExplorer

__all__ = ["positional_explorer", "positional_playground"]


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
    d_models = _validate.int_choices("d_models", d_models, 2, 512)
    odd = [d for d in d_models if d % 2]
    if odd:
        raise ValueError(
            f"d_models must be even (sines and cosines come in pairs), "
            f"got {odd}"
        )
    _validate.int_in_range("max_len", max_len, 1, 512)
    positions = _validate.int_choices("positions", positions, 0, max_len - 1)
    offsets = _validate.int_choices("offsets", offsets, 0, 10_000)
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
        _validate.int_in_range("d_model", d_model, 2, 512)
        _validate.even("d_model", d_model, "(sines and cosines come in pairs)")
        _validate.int_in_range("max_len", max_len, 1, 512)
        _validate.int_in_range("position", position, 0, max_len - 1)
        _validate.int_in_range("offset", offset, 0, 10_000)
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


def positional_playground() -> LiveExplorer:
    """Chapter 3's explorer, live: any even d_model (2 … 512), any length
    (1 … 512), any position of it and any offset k.

    Returns:
        :meth:`~transformer_edu.figures.explorer.Explorer.live` of
        :func:`~transformer_edu.figures.position_figures.positional_explorer` with wider
        controls.
    """
    explorer = positional_explorer(
        d_models=(64,), positions=(0,), offsets=(1,), start_d_model=64
    )
    return explorer.live(
        controls=[
            Slider("d_model", range(2, 514, 2), start=64, label="d_model"),
            Slider("max_len", range(1, 513), start=48, label="length"),
            Slider("position", range(512), start=10, label="position"),
            Slider("offset", range(201), start=5, label="offset k"),
        ]
    )
