"""Tests of the kernel-free positional-encoding explorer of Chapter 3."""

from __future__ import annotations

import math

import pytest
import torch

import transformer_edu as te
from transformer_edu import figures

D_MODELS = (16, 32, 64, 128)


@pytest.fixture(scope="module")
def explorer() -> figures.Explorer:
    return figures.positional_explorer(
        d_models=D_MODELS, max_len=48, positions=(0, 5, 40), offsets=(1, 7, 50), start_d_model=64
    )


def test_explorer_has_width_buttons_and_two_sliders(explorer):
    width, position, offset = explorer.controls
    assert isinstance(width, figures.Buttons) and width.values == D_MODELS and width.start == 64
    assert isinstance(position, figures.Slider) and position.values == (0, 5, 40)
    assert isinstance(offset, figures.Slider) and offset.values == (1, 7, 50)
    panels = explorer.start_state.panels
    assert [p.data[0]["type"] for p in panels] == ["heatmap", "scatter", "bar"]
    assert [p.wide for p in panels] == [True, False, False]  # the table spans the row


def test_explorer_tables_are_the_package_tables(explorer):
    for d in D_MODELS:
        (heatmap,) = explorer.state(d_model=d).panels[0].data
        assert figures.rounded(heatmap["z"]) == figures.rounded(te.sinusoidal_table(48, d))


def test_each_width_shows_curves_and_turns_of_that_width(explorer):
    for d in D_MODELS:
        _, row, turns = explorer.state(d_model=d).panels
        assert [len(trace["x"]) for trace in row.data] == [d // 2, d // 2]
        assert len(turns.data[0]["x"]) == d // 2


def test_position_slider_moves_the_outline_and_sets_that_row(explorer):
    table, row, _ = explorer.state(position=40).panels
    (outline,) = table.layout["shapes"]
    assert (outline["y0"], outline["y1"]) == (39.5, 40.5)
    sines, cosines = (trace["y"] for trace in row.data)
    expected = te.sinusoidal_table(48, 64)[40]
    assert figures.rounded(sines) == figures.rounded(expected[0::2])
    assert figures.rounded(cosines) == figures.rounded(expected[1::2])
    assert "position 40" in table.title.lower() or "row 40" in table.title


def test_offset_slider_sets_the_turn_of_each_pair(explorer):
    for d in D_MODELS:
        turns = explorer.state(d_model=d, offset=7).panels[2].data[0]["y"]
        omega = [10000 ** (-2 * i / d) for i in range(d // 2)]
        expected = [math.degrees(math.fmod(7 * w, 2 * math.pi)) for w in omega]
        assert turns == pytest.approx(expected, abs=1e-3)
    assert "k = 7" in explorer.state(offset=7).summary


def test_turns_are_the_rotation_that_shifts_the_table():
    # Turning each (sin, cos) pair of PE(pos) by the plotted angle gives PE(pos + k).
    d, k = 32, 7
    explorer = figures.positional_explorer(d_models=(d,), offsets=(k,), start_d_model=d)
    turns = torch.tensor(explorer.start_state.panels[2].data[0]["y"], dtype=torch.float64).deg2rad()
    table = te.sinusoidal_table(60, d).double()
    sin, cos = table[:-k, 0::2], table[:-k, 1::2]
    shifted_sin = sin * torch.cos(turns) + cos * torch.sin(turns)
    shifted_cos = cos * torch.cos(turns) - sin * torch.sin(turns)
    assert torch.allclose(shifted_sin, table[k:, 0::2], atol=1e-3)
    assert torch.allclose(shifted_cos, table[k:, 1::2], atol=1e-3)


def test_explorer_html_is_deterministic_and_stores_each_table_once(explorer):
    again = figures.positional_explorer(
        d_models=D_MODELS, max_len=48, positions=(0, 5, 40), offsets=(1, 7, 50), start_d_model=64
    )
    assert explorer.html() == again.html()
    parts = explorer._payload["parts"]
    tables = [part for part in parts if "z" in part and len(part["z"]) == 48]
    assert len(tables) == len(D_MODELS)
    assert sum(1 for part in parts if part.get("type") == "heatmap") == 1  # one look


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
        figures.positional_explorer(**kwargs)
