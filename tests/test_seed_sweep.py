"""The seed sweep behind Chapters 7 and 8 (``scripts/seed_sweep.py``).

The chapters' asserts on short training runs claim only what held for every
seed of the sweep, whose results are stored in ``book/_data/seed_sweep.json``.
These tests read that file: a sweep rerun after a change to the recipe, in
which a claim no longer holds for some seed, fails here until the chapter's
claim (and its assert) is changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

SWEEP = bs.REPO_ROOT / "book" / "_data" / "seed_sweep.json"
SCRIPT = bs.REPO_ROOT / "scripts" / "seed_sweep.py"


def load() -> dict:
    return json.loads(SWEEP.read_text(encoding="utf-8"))


def test_the_sweep_covers_at_least_five_seeds_and_every_experiment():
    sweep = load()
    assert len(sweep["seeds"]) >= 5 and 0 in sweep["seeds"]
    assert set(sweep["experiments"]) == {"warmup", "reverse", "ablations", "young"}
    assert set(sweep["runs"]) == {str(seed) for seed in sweep["seeds"]}


def test_every_claim_held_for_every_seed():
    sweep = load()
    seeds = {str(seed) for seed in sweep["seeds"]}
    assert len(sweep["claims"]) >= 20
    failed = {
        name: claim["margins"] for name, claim in sweep["claims"].items()
        if not claim["held_for_all"] or set(claim["held"]) != seeds or not all(claim["held"].values())
    }
    assert not failed, failed


def test_the_training_chapters_take_their_seed_from_the_environment():
    for name in ("07_training.ipynb", "08_beam_search.ipynb"):
        source = "\n".join(
            "".join(cell["source"]) for cell in bs.read_notebook(bs.REPO_ROOT / "notebooks" / name)["cells"]
            if cell["cell_type"] == "code"
        )
        assert 'SEED = int(os.environ.get("TRANSFORMER_EDU_SEED", "0"))' in source, name
        assert "manual_seed(0)" not in source, name  # every seed derived from SEED


def test_the_script_runs():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=300,
        cwd=bs.REPO_ROOT, env={**os.environ, "PYTHONPATH": str(bs.REPO_ROOT)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--seeds" in result.stdout
