"""Tests of the kernel-free positional-encoding explorer of Chapter 3."""

from __future__ import annotations

import json
import math

import pytest
import torch

import transformer_edu as te
from transformer_edu import interactive

D_MODELS = (16, 32, 64, 128)


@pytest.fixture(scope="module")
def explorer():
    return interactive.positional_explorer_figure(
        d_models=D_MODELS, max_len=48, positions=(0, 5, 40), offsets=(1, 7, 50), start_d_model=64
    )


def _traces(fig, kind):
    return [trace for trace in fig.data if trace.type == kind]


def test_explorer_has_one_table_two_curves_and_one_bar_chart_per_width(explorer):
    assert len(_traces(explorer, "heatmap")) == len(D_MODELS)
    assert len(_traces(explorer, "scatter")) == 2 * len(D_MODELS)
    assert len(_traces(explorer, "bar")) == len(D_MODELS)
    visible = [trace.visible for trace in explorer.data]
    assert visible == [d == 64 for _ in range(4) for d in D_MODELS]  # only the start width shows


def test_explorer_tables_are_the_package_tables(explorer):
    for d, heatmap in zip(D_MODELS, _traces(explorer, "heatmap")):
        expected = interactive.rounded(te.sinusoidal_table(48, d))
        assert interactive.rounded(heatmap.z) == expected


def test_width_buttons_show_exactly_one_width(explorer):
    buttons = explorer.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == [f"d_model = {d}" for d in D_MODELS]
    for d, button in zip(D_MODELS, buttons):
        flags = button.args[0]["visible"]
        shown = [trace for trace, flag in zip(explorer.data, flags) if flag]
        assert len(shown) == 4  # table, sines, cosines, turns
        assert {len(trace.x) for trace in shown} == {d, d // 2}


def test_position_slider_moves_the_outline_and_sets_that_row(explorer):
    slider = explorer.layout.sliders[0]
    assert [step.label for step in slider.steps] == ["0", "5", "40"]
    step = slider.steps[2]
    data, layout, indices = step.args
    assert layout["shapes"][0]["y0"] == 39.5 and layout["shapes"][0]["y1"] == 40.5
    sines = data["y"][: len(D_MODELS)]
    cosines = data["y"][len(D_MODELS):]
    for d, sin_row, cos_row in zip(D_MODELS, sines, cosines):
        row = te.sinusoidal_table(48, d)[40]
        assert sin_row == interactive.rounded(row[0::2])
        assert cos_row == interactive.rounded(row[1::2])
    assert all(explorer.data[i].type == "scatter" for i in indices)


def test_offset_slider_sets_the_turn_of_each_pair(explorer):
    step = explorer.layout.sliders[1].steps[1]  # k = 7
    assert step.label == "7"
    turns, indices = step.args
    for d, values in zip(D_MODELS, turns["y"]):
        omega = [10000 ** (-2 * i / d) for i in range(d // 2)]
        expected = [math.degrees(math.fmod(7 * w, 2 * math.pi)) for w in omega]
        assert values == pytest.approx(expected, abs=1e-3)
    assert all(explorer.data[i].type == "bar" for i in indices)


def test_turns_are_the_rotation_that_shifts_the_table():
    # Turning each (sin, cos) pair of PE(pos) by the plotted angle gives PE(pos + k).
    d, k = 32, 7
    fig = interactive.positional_explorer_figure(d_models=(d,), offsets=(k,), start_d_model=d)
    turns = torch.tensor(fig.data[-1].y, dtype=torch.float64).deg2rad()
    table = te.sinusoidal_table(60, d).double()
    sin, cos = table[:-k, 0::2], table[:-k, 1::2]
    shifted_sin = sin * torch.cos(turns) + cos * torch.sin(turns)
    shifted_cos = cos * torch.cos(turns) - sin * torch.sin(turns)
    assert torch.allclose(shifted_sin, table[k:, 0::2], atol=1e-3)
    assert torch.allclose(shifted_cos, table[k:, 1::2], atol=1e-3)


def test_explorer_html_is_deterministic():
    first = interactive.figure_html(interactive.positional_explorer_figure(), "positional-explorer")
    second = interactive.figure_html(interactive.positional_explorer_figure(), "positional-explorer")
    assert first == second
    payload = first.split("var figure = ", 1)[1].split(";\n", 1)[0]
    assert json.loads(payload)["layout"]["sliders"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"d_models": (16, 15)}, "even"),
        ({"d_models": ()}, "at least one"),
        ({"d_models": "64"}, "sequence of ints"),
        ({"max_len": 0}, "max_len"),
        ({"positions": (0, 48)}, "positions"),
        ({"offsets": (1, 1)}, "repeat"),
        ({"start_d_model": 24}, "start_d_model"),
    ],
)
def test_explorer_rejects_bad_arguments_by_name(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        interactive.positional_explorer_figure(**kwargs)
