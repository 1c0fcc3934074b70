"""Seeds: every chapter reads its own, and the sweep behind Chapters 7 and 8.

Every chapter notebook reads ``TRANSFORMER_EDU_SEED`` into ``SEED`` in its
first code cell after the Colab setup cell, and derives every seed it uses
from it (no literal seed in ``manual_seed``, ``random.seed``,
``random.Random``, ``default_rng`` or a ``seed=`` argument): unset, the
variable gives the stored run; ``bash .ci/seeds`` runs every chapter under
other seeds with ``--nbval-lax``, so every assert must hold for them too.

The asserts of Chapters 7 and 8 on short training runs claim only what held
for every seed of ``scripts/seed_sweep.py``, whose results are stored in
``book/_data/seed_sweep.json``. These tests read that file: a sweep rerun
after a change to the recipe, in which a claim no longer holds for some seed,
fails here until the chapter's claim (and its assert) is changed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

SWEEP = bs.REPO_ROOT / "book" / "_data" / "seed_sweep.json"
AVX2_SWEEP = bs.REPO_ROOT / "book" / "_data" / "seed_sweep_avx2.json"  # the same, on AVX2 kernels
SCRIPT = bs.REPO_ROOT / "scripts" / "seed_sweep.py"
SWEEPS = pytest.mark.parametrize("path", [SWEEP, AVX2_SWEEP], ids=["default-kernels", "avx2-kernels"])


def load(path=SWEEP) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@SWEEPS
def test_the_sweep_covers_at_least_five_seeds_and_every_experiment(path):
    sweep = load(path)
    assert len(sweep["seeds"]) >= 5 and 0 in sweep["seeds"]
    assert set(sweep["experiments"]) == {"warmup", "reverse", "ablations", "young"}
    assert set(sweep["runs"]) == {str(seed) for seed in sweep["seeds"]}


def test_the_avx2_sweep_ran_on_other_kernels_and_differs():
    default, avx2 = load(SWEEP), load(AVX2_SWEEP)
    assert "ATEN_CPU_CAPABILITY=avx2" in avx2["made_with"] and set(avx2["claims"]) == set(default["claims"])
    differ = [key for key, entry in avx2["summary"].items() if entry["mean"] != default["summary"][key]["mean"]]
    assert len(differ) > 20  # another CPU's arithmetic: the short runs come out otherwise


@SWEEPS
def test_every_claim_held_for_every_seed(path):
    sweep = load(path)
    # the stored claims are the ones the script states now (none left over, none missing)
    assert set(sweep["claims"]) == set(_script().CLAIMS)
    seeds = {str(seed) for seed in sweep["seeds"]}
    assert len(sweep["claims"]) >= 20
    failed = {
        name: claim["margins"] for name, claim in sweep["claims"].items()
        if not claim["held_for_all"] or set(claim["held"]) != seeds or not all(claim["held"].values())
    }
    assert not failed, failed


SEED_LINE = 'SEED = int(os.environ.get("TRANSFORMER_EDU_SEED", "0"))'
# A seed written as a number: manual_seed(0), random.seed(1), Random(2),
# default_rng(3), seed=4 (an argument or a default).
LITERAL_SEED = re.compile(r"(manual_seed\(|\.seed\(|\bRandom\(|default_rng\(|\bseed\s*=)\s*[\d_]+\s*([,)]|$)")
NOTEBOOKS = bs.chapter_notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_every_chapter_takes_its_seeds_from_the_environment(path):
    cells = [cell["source"] for cell in bs.read_notebook(path)["cells"] if cell["cell_type"] == "code"]
    first = next(source for source in cells if not source.lstrip().startswith(bs.SETUP_COMMENT))
    assert SEED_LINE in first, f"{path.name}: its first code cell does not read TRANSFORMER_EDU_SEED"
    literal = [line.strip() for source in cells for line in source.splitlines() if LITERAL_SEED.search(line)]
    assert not literal, f"{path.name}: seeds not derived from SEED: {literal}"


def test_the_literal_seed_pattern():
    for line in ("torch.manual_seed(0)", "g = torch.Generator().manual_seed(12)", "random.seed(3)",
                 "rng = random.Random(7)", "np.random.default_rng(1)", "build(seed=1)",
                 "def f(n, seed=0):", "make_batches(pairs, seed = 2)"):
        assert LITERAL_SEED.search(line), line
    for line in ("torch.manual_seed(SEED)", "torch.manual_seed(1000 * SEED + 1)", "random.seed(SEED)",
                 "rng = random.Random(SEED)", "def f(n, seed=SEED):", "seed=1000 * SEED + epoch",
                 "data.toy_translation_splits(0)", "data_seed=0"):
        assert not LITERAL_SEED.search(line), line


def test_the_script_runs():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=300,
        cwd=bs.REPO_ROOT, env={**os.environ, "PYTHONPATH": str(bs.REPO_ROOT)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--seeds" in result.stdout


def test_the_package_ships_the_sweeps_summary_as_stored_in_the_book():
    from transformer_edu import seeds

    sweep, shipped = load(), seeds.summary()
    assert shipped["seeds"] == [int(seed) for seed in sweep["seeds"]]
    assert shipped["summary"] == sweep["summary"], "rerun scripts/seed_sweep.py: it writes both files"


def test_spread_prints_the_mean_and_range_and_names_an_unknown_key():
    from transformer_edu import seeds

    key = "ch7.warmup.post_ln"
    entry = load()["summary"][key]
    line = seeds.spread(key, fmt=".3f")
    assert line == f"seeds 0-4: mean {entry['mean']:.3f}, from {entry['min']:.3f} to {entry['max']:.3f}"
    assert seeds.spread("ch8.beam4.exact", scale=100, fmt=".0f").startswith("seeds 0-4: mean ")
    with pytest.raises(ValueError, match=r"'ch7.warmup.post_lnn' is not a number of the seed sweep; did you mean"):
        seeds.spread("ch7.warmup.post_lnn")
    with pytest.raises(TypeError, match="key must be a str"):
        seeds.spread(3)


def test_spread_has_a_short_form_for_tables():
    from transformer_edu import seeds

    entry = load()["summary"]["ch8.curse.K4.bleu"]
    expected = f"{entry['mean']:.1f} ({entry['min']:.1f} to {entry['max']:.1f})"
    assert seeds.spread("ch8.curse.K4.bleu", fmt=".1f", short=True) == expected


def _script():
    """scripts/seed_sweep.py as a module (it is not part of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("seed_sweep", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
