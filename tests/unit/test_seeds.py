"""transformer_edu.seeds: record and check, outside a seed sweep and inside one."""

from __future__ import annotations

import json

import pytest
import torch

from transformer_edu import seeds


@pytest.fixture
def outside(monkeypatch):
    monkeypatch.delenv(seeds.RECORD_VARIABLE, raising=False)


@pytest.fixture
def sweep(monkeypatch, tmp_path):
    """A seed sweep's records file; yields a function that reads it back."""
    path = tmp_path / "records.jsonl"
    monkeypatch.setenv(seeds.RECORD_VARIABLE, str(path))
    yield lambda: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_record_returns_its_value_and_writes_nothing_outside_a_sweep(outside, tmp_path):
    assert seeds.record("ch7.x", 0.25) == 0.25
    tensor = torch.tensor(3.5)
    assert seeds.record("ch7.y", tensor) is tensor
    assert list(tmp_path.iterdir()) == []


def test_check_returns_the_margin_or_raises_naming_the_claim(outside):
    assert seeds.check("a holds", 0.5) == 0.5
    assert seeds.check("a count reaches its bound", 0, inclusive=True) == 0.0
    assert seeds.check("a tensor margin", torch.tensor(0.25)) == 0.25
    with pytest.raises(AssertionError, match=r"claim does not hold: b fails \(margin 0, needs > 0\)"):
        seeds.check("b fails", 0)
    with pytest.raises(AssertionError, match=r"needs >= 0"):
        seeds.check("c fails", -1, inclusive=True)
    with pytest.raises(AssertionError):
        seeds.check("nan never holds", float("nan"))


def test_in_a_sweep_numbers_and_claims_are_written_and_a_failing_claim_does_not_stop(sweep):
    assert seeds.record("ch8.k", 2) == 2
    assert seeds.check("fails here", -0.5) == -0.5  # recorded, not raised
    seeds.check("holds", 1, inclusive=True)
    assert sweep() == [
        {"key": "ch8.k", "value": 2.0},
        {"claim": "fails here", "margin": -0.5, "inclusive": False},
        {"claim": "holds", "margin": 1.0, "inclusive": True},
    ]


def test_bad_arguments_are_named(outside):
    with pytest.raises(TypeError, match="key must be a str, got int"):
        seeds.record(3, 1.0)
    with pytest.raises(ValueError, match="key must not be empty"):
        seeds.record(" ", 1.0)
    with pytest.raises(TypeError, match="value must be a real number, got str"):
        seeds.record("k", "1.0")
    with pytest.raises(TypeError, match="value must be a real number, got bool"):
        seeds.record("k", True)
    with pytest.raises(TypeError, match="margin must be a real number, got list"):
        seeds.check("c", [1])
    with pytest.raises(TypeError, match="claim must be a str, got float"):
        seeds.check(1.0, 1.0)


def test_an_unknown_key_in_a_sweep_prints_a_note_instead_of_raising(sweep):
    line = seeds.spread("ch99.not.yet")
    assert line == "ch99.not.yet: not in the shipped summary yet (the seed sweep is running)"


def test_spread_never_prints_a_negative_zero(outside, monkeypatch):
    summary = {"runs": 10, "summary": {"k": {"mean": -0.0004, "min": -0.001, "max": 0.002, "runs": 10}}}
    monkeypatch.setattr(seeds, "summary", lambda: summary)
    assert seeds.spread("k", fmt=".2f") == "10 runs: mean 0.00, from 0.00 to 0.00"
    assert seeds.spread("k", fmt=".1f", scale=1000) == "10 runs: mean -0.4, from -1.0 to 2.0"
