"""benchmarks/decoding.py: it runs under measure_costs' contract, its sides agree, and the
CONTRIBUTING.md quotes the decoding numbers of the costs page (one source: the benchmark's output)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_runs_at_a_tiny_setting_and_its_sides_agree():
    command = [sys.executable, "benchmarks/decoding.py", "--json", "--d-model", "16", "--heads", "2",
               "--layers", "1", "--vocab", "40", "--batch", "3", "--source-length", "6", "--steps", "3,5",
               "--beam-size", "2", "--beam-steps", "4", "--profile-d-model", "16", "--repeats", "1"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    payload = json.loads([line for line in result.stdout.splitlines() if line.strip()][-1])
    details = payload["details"]
    assert all(details["outputs_identical"].values()) and len(details["outputs_identical"]) == 4
    assert "d_model 16" in payload["description"] and "batch 3" in payload["description"]
    assert set(payload["ratios"]) == {
        "greedy, 3 new tokens: recompute / cache",
        "greedy, 5 new tokens: recompute / cache",
        "beam K = 2, 4 tokens: plain loop, no cache / batched, cache",
        "beam K = 2: one source at a time / all sources in one batch",
        "cached greedy step at d_model 16: inside / outside PyTorch operators",
    }
    assert all(value > 0 for value in payload["ratios"].values())


def _costs_ratios() -> dict[str, float]:
    data = json.loads((ROOT / "book" / "_data" / "costs.json").read_text(encoding="utf-8"))
    (cpu,) = [run for run in data["runs"] if run["device"] == "cpu"]
    (record,) = [b for b in cpu["benchmarks"] if b["script"] == "benchmarks/decoding.py"]
    return record["ratios"]


def test_the_readme_quotes_the_decoding_numbers_of_the_costs_page():
    readme = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("|") and "decoding.py" in line]
    assert rows, "CONTRIBUTING.md's Measured table has no row for benchmarks/decoding.py"
    quoted = [float(x) for row in rows for x in re.findall(r"(\d+(?:\.\d+)?)×", row.split("|")[3])]
    expected = [float(f"{value:.3g}") for value in _costs_ratios().values()]
    assert quoted == expected, (
        "CONTRIBUTING.md's decoding numbers differ from book/_data/costs.json: copy them from "
        "book/costs.md after `python scripts/measure_costs.py --device cpu --benchmark benchmarks/decoding.py`"
    )


def test_the_readme_quotes_the_chapters_total_of_the_costs_page():
    # One number: CONTRIBUTING.md's row copies the costs page's total, which
    # scripts/measure_costs.py computes from book/_data/costs.json.
    costs = (ROOT / "book" / "costs.md").read_text(encoding="utf-8")
    (total,) = re.findall(r"\| \*\*All chapters\*\* \| \*\*(\d+ min \d+ s)\*\*", costs)
    readme = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| all ten chapters")]
    assert row.split("|")[3].strip().startswith(total), (row, total)
