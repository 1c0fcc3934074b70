"""Seeds: every chapter reads its own; the sweep runs the chapters themselves.

Every chapter notebook reads ``TRANSFORMER_EDU_SEED`` into ``SEED`` in its
first code cell after the Colab setup cell, and derives every seed it uses
from it (no literal seed in ``manual_seed``, ``random.seed``,
``random.Random``, ``default_rng`` or a ``seed=`` argument): unset, the
variable gives the stored run; ``bash .ci/seeds`` runs every chapter under
other seeds with ``--nbval-lax``, so every assert must hold for them too.

The chapters whose lessons rest on short training runs are swept:
``scripts/seed_sweep.py`` executes them for seeds 0-4 on two sets of CPU
kernels; their cells record numbers (``seeds.record``) and claims
(``seeds.check``) into ``book/_data/seed_sweep*.json``. These tests read the
committed files only, and fail when

* a run of the sweep raised, or a claim failed in one of the ten runs, or has
  no room (its margin over the runs is within two of their standard
  deviations of zero);
* the claims in the sweep are not the ones the notebooks check, or a swept
  chapter's code changed since the sweep;
* a recording cell's stored output is not what it printed in the sweep's
  seed-0 run (the stored run is the sweep's seed 0);
* a cell that prints spreads from the package's summary is not compared by
  nbval, or prints what the summary no longer gives (the data changed and the
  notebook was not re-executed);
* the package's summary is not the summary of the book's two files.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import json
import math
import os
import re
import statistics
import subprocess
import sys

import pytest

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

DATA = bs.REPO_ROOT / "book" / "_data"
FILES = {"default": DATA / "seed_sweep.json", "avx2": DATA / "seed_sweep_avx2.json"}
SCRIPT = bs.REPO_ROOT / "scripts" / "seed_sweep.py"
KERNELS = pytest.mark.parametrize("kernels", list(FILES))
NOTEBOOKS = bs.chapter_notebooks()
IGNORE = "# NBVAL_IGNORE_OUTPUT"
#: How far, in standard deviations over the runs, a claim's mean margin must be from 0.
ROOM = 2.0


def load(kernels: str = "default") -> dict:
    return json.loads(FILES[kernels].read_text(encoding="utf-8"))


def code_cells(path) -> list[tuple[int, dict]]:
    return [(i, c) for i, c in enumerate(bs.read_notebook(path)["cells"]) if c["cell_type"] == "code"]


def calls(source: str, name: str) -> list[ast.Call]:
    """The ``seeds.<name>(...)`` calls of a cell's source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        func = getattr(node, "func", None)
        if isinstance(node, ast.Call) and isinstance(func, ast.Attribute) and func.attr == name:
            if isinstance(func.value, ast.Name) and func.value.id == "seeds":
                found.append(node)
    return found


def printed(cell: dict) -> str:
    """What a cell printed (its stdout streams, in order)."""
    return "".join("".join(o["text"]) if isinstance(o["text"], list) else o["text"] for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")  # fmt: skip


def ignored(cell: dict) -> bool:
    """Whether nbval leaves the cell's output uncompared (its marker comment on any line, or the tag)."""
    marked = any(line.strip().lstrip("#").strip() == IGNORE.lstrip("# ") for line in cell["source"].splitlines()
                 if line.strip().startswith("#"))  # fmt: skip
    return marked or "nbval-ignore-output" in cell.get("metadata", {}).get("tags", [])


def test_the_sweep_covers_five_seeds_on_two_sets_of_kernels():
    default, avx2 = load("default"), load("avx2")
    assert len(default["seeds"]) >= 5 and default["seeds"][0] == 0 and default["seeds"] == avx2["seeds"]
    assert (default["kernels"], avx2["kernels"]) == ("default", "avx2")
    assert "ATEN_CPU_CAPABILITY=avx2" in avx2["made_with"] and "ATEN" not in default["made_with"]
    assert set(default["chapters"]) == set(avx2["chapters"]) >= {"07_training", "08_beam_search"}
    for sweep in (default, avx2):
        assert set(sweep["runs"]) == {str(seed) for seed in sweep["seeds"]}


def test_the_avx2_runs_come_out_otherwise():
    default, avx2 = load("default"), load("avx2")
    differ = [key for key, entry in avx2["summary"].items() if entry["mean"] != default["summary"][key]["mean"]]
    assert len(differ) > 20  # another CPU's arithmetic: the short runs come out otherwise


@KERNELS
def test_every_run_ran_every_cell_and_recorded_every_number(kernels):
    sweep = load(kernels)
    errors = {seed: run["errors"] for seed, run in sweep["runs"].items() if run["errors"]}
    assert not errors, f"cells that raised in the sweep: {errors}"
    keys = {key for book in sweep["chapters"].values() for key in book["keys"]}
    claims = {name for book in sweep["chapters"].values() for name in book["claims"]}
    assert len(keys) >= 80 and len(claims) >= 30
    for seed, run in sweep["runs"].items():
        assert set(run["numbers"]) == keys, f"seed {seed}: {set(run['numbers']) ^ keys}"
        assert set(run["claims"]) == claims, f"seed {seed}: {set(run['claims']) ^ claims}"


@KERNELS
def test_every_claim_held_in_every_run(kernels):
    sweep = load(kernels)
    failed = {name: claim["margins"] for name, claim in sweep["claims"].items() if not claim["held_for_all"]}
    assert not failed, failed
    for name, claim in sweep["claims"].items():
        bound = 0 if claim["inclusive"] else math.nextafter(0, 1)
        assert all(margin >= bound for margin in claim["margins"].values()), name


def test_every_claim_has_room():
    default, avx2 = load("default"), load("avx2")
    tight = {}
    for name, claim in default["claims"].items():
        margins = [*claim["margins"].values(), *avx2["claims"][name]["margins"].values()]
        mean, sd = statistics.fmean(margins), statistics.stdev(margins)
        if sd > 0 and mean < ROOM * sd:
            tight[name] = f"margins {min(margins):.3g} to {max(margins):.3g}, mean {mean:.3g}, sd {sd:.3g}"
    assert not tight, (
        f"claims whose mean margin over the {len(default['seeds']) * 2} runs is within {ROOM} standard "
        f"deviations of 0: another CPU or seed may break them; restate them with room: {tight}"
    )


def test_the_claims_are_the_notebooks_own():
    sweep = load()
    checked, recorded = {}, set()
    for path in NOTEBOOKS:
        for index, cell in code_cells(path):
            for call in calls(cell["source"], "check"):
                name = call.args[0]
                assert isinstance(name, ast.Constant), f"{path.name} cell {index}: a claim is named by a literal"
                checked[name.value] = (path.stem, index)
            if calls(cell["source"], "record") or calls(cell["source"], "check"):
                recorded.add(path.stem)
    assert recorded <= set(sweep["chapters"]), f"chapters that record but are not swept: {recorded - set(sweep['chapters'])}"
    swept = {name: (stem, where["cell"]) for stem, book in sweep["chapters"].items()
             for name, where in book["claims"].items()}  # fmt: skip
    assert swept == checked, {"only in the sweep": set(swept) - set(checked), "only in the notebooks": set(checked) - set(swept)}


def test_the_swept_chapters_have_not_changed_since_the_sweep():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import seed_sweep
    finally:
        sys.path.remove(str(SCRIPT.parent))
    for stem, book in load()["chapters"].items():
        digest = seed_sweep.code_digest(bs.REPO_ROOT / "notebooks" / f"{stem}.ipynb")
        assert digest == book["code_sha256"], (
            f"{stem}: its code changed since the sweep; run `python scripts/seed_sweep.py` (it stores the chapters too)"
        )


def test_the_stored_run_is_the_sweeps_seed_0():
    sweep = load()
    assert sweep["seeds"][0] == 0
    for stem, book in sweep["chapters"].items():
        cells = bs.read_notebook(bs.REPO_ROOT / "notebooks" / f"{stem}.ipynb")["cells"]
        assert book["printed"], stem
        for index, text in book["printed"].items():
            cell = cells[int(index)]
            assert calls(cell["source"], "record") or calls(cell["source"], "check"), f"{stem} cell {index}"
            assert printed(cell) == text, (
                f"{stem} cell {index} prints a run that is not the sweep's seed 0: re-run scripts/seed_sweep.py\n"
                f"stored:\n{printed(cell)}\nsweep, seed 0:\n{text}"
            )


SPREAD_CELLS = [
    (path, index, cell) for path in NOTEBOOKS for index, cell in code_cells(path) if calls(cell["source"], "spread")
]


@pytest.mark.parametrize(("path", "index", "cell"), SPREAD_CELLS,
                         ids=[f"{p.stem}-cell{i}" for p, i, _ in SPREAD_CELLS])  # fmt: skip
def test_a_spread_cell_is_compared_and_prints_the_summary(path, index, cell):
    from transformer_edu import seeds

    assert not ignored(cell), f"{path.name} cell {index} prints spreads from the package's data: nbval must compare it"
    namespace, out = {"seeds": seeds}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(cell["source"], f"{path.name} cell {index}", "exec"), namespace)  # only `seeds`
    assert printed(cell) == out.getvalue(), (
        f"{path.name} cell {index}: its stored output is not what the package's summary gives; "
        "re-execute the notebook (scripts/seed_sweep.py stores the swept chapters)"
    )


def test_the_package_ships_the_summary_of_both_files():
    from transformer_edu import seeds

    files = [load(kernels) for kernels in FILES]
    shipped = seeds.summary()
    assert shipped["seeds"] == files[0]["seeds"] and shipped["runs"] == sum(len(f["seeds"]) for f in files)
    assert set(shipped["summary"]) == set(files[0]["summary"])
    for key, entry in shipped["summary"].items():
        values = [run["numbers"][key] for sweep in files for run in sweep["runs"].values()]
        assert (entry["min"], entry["max"], entry["runs"]) == (min(values), max(values), len(values)), key
        assert math.isclose(entry["mean"], statistics.fmean(values), rel_tol=1e-12, abs_tol=1e-15), key


def test_spread_prints_the_mean_and_range_and_names_an_unknown_key(monkeypatch):
    from transformer_edu import seeds

    monkeypatch.delenv(seeds.RECORD_VARIABLE, raising=False)
    entry = seeds.summary()["summary"]["ch7.warmup.post_ln"]
    line = seeds.spread("ch7.warmup.post_ln", fmt=".3f")
    assert line == f"{entry['runs']} runs: mean {entry['mean']:.3f}, from {entry['min']:.3f} to {entry['max']:.3f}"
    short = seeds.spread("ch8.curse.K4.bleu", fmt=".1f", short=True)
    assert re.fullmatch(r"\d+\.\d \(\d+\.\d to \d+\.\d\)", short)
    with pytest.raises(ValueError, match=r"'ch7.warmup.post_lnn' is not a number of the seed sweep; did you mean"):
        seeds.spread("ch7.warmup.post_lnn")
    with pytest.raises(TypeError, match="key must be a str"):
        seeds.spread(3)


def test_the_script_runs():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=300,
        cwd=bs.REPO_ROOT, env={**os.environ, "PYTHONPATH": str(bs.REPO_ROOT)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--seeds" in result.stdout and "--kernels" in result.stdout


def test_the_script_holds_no_copy_of_a_notebook():
    script = SCRIPT.read_text(encoding="utf-8")
    cells = [c["source"] for path in NOTEBOOKS for _, c in code_cells(path)]
    lines = {line.strip() for source in cells for line in source.splitlines() if len(line.strip()) > 30}
    copied = [line for line in script.splitlines() if line.strip() in lines]
    assert not copied, copied
    assert "train_task" not in script and "import torch.nn" not in script


SEED_LINE = 'SEED = int(os.environ.get("TRANSFORMER_EDU_SEED", "0"))'
# A seed written as a number: manual_seed(0), random.seed(1), Random(2),
# default_rng(3), seed=4 (an argument or a default).
LITERAL_SEED = re.compile(r"(manual_seed\(|\.seed\(|\bRandom\(|default_rng\(|\bseed\s*=)\s*[\d_]+\s*([,)]|$)")


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


def test_the_sweep_digest_is_of_the_code_cells(tmp_path):
    # the digest the sweep stores: code sources only, so prose edits need no new sweep
    sources = ["print(1)", "x = 2"]
    expected = hashlib.sha256("\n\0\n".join(sources).encode()).hexdigest()
    notebook = {"cells": [{"cell_type": "markdown", "source": "text"},
                          *({"cell_type": "code", "source": s} for s in sources)]}  # fmt: skip
    path = tmp_path / "probe.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import seed_sweep

        assert seed_sweep.code_digest(path) == expected
    finally:
        sys.path.remove(str(SCRIPT.parent))


def test_reuse_rebuilds_a_chapters_runs_and_refuses_changed_code(tmp_path):
    # --reuse: the runs of a chapter whose code has not changed, taken from the book's
    # files, give back that chapter's part of them; a changed chapter is refused.
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import seed_sweep

        stem = min(load()["chapters"])
        chapter = stem[:2]
        results = seed_sweep.reused_results([chapter])
        for kernels, path in seed_sweep.OUT.items():
            old = json.loads(path.read_text(encoding="utf-8"))
            mine = [r for r in results if r["kernels"] == kernels]
            assert len(mine) == len(old["seeds"])
            new = seed_sweep.sweep_file(kernels, old["seeds"], [chapter], mine, [])
            assert new["chapters"][stem] == old["chapters"][stem]
            for name, claim in new["claims"].items():
                assert claim == old["claims"][name], name
            for seed, run in old["runs"].items():
                keys = old["chapters"][stem]["keys"]
                assert new["runs"][seed]["numbers"] == {k: v for k, v in run["numbers"].items() if k in keys}
            changed = json.loads(path.read_text(encoding="utf-8"))
            changed["chapters"][stem]["code_sha256"] = "0" * 64
            (tmp_path / path.name).write_text(json.dumps(changed), encoding="utf-8")
        with pytest.raises(SystemExit, match="code changed"):
            seed_sweep.reused_results([chapter], tmp_path)
    finally:
        sys.path.remove(str(SCRIPT.parent))
