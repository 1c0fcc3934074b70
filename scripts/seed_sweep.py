"""Run the chapters whose lessons rest on short training runs over seeds and CPU kernels.

Usage (from anywhere)::

    python scripts/seed_sweep.py                       # the whole sweep, then the stored run
    python scripts/seed_sweep.py --chapters 08 --seeds 0 1 --kernels default --no-store

Several lessons of Chapters 7, 8, 9 and 10 rest on short training runs (a
2-epoch model, 60 updates of a warm-up trial, 20 updates in one process and
in two, 200 updates of a small language model). Another seed, or another
CPU's rounding, moves such a run, so a chapter asserts only what held for
every run of this sweep, and prints its own run next to the spread over all
of them.

The sweep executes the chapter notebooks themselves, one code cell after the
other on a fresh kernel (as ``scripts/execute_notebooks.py`` does: CPU only,
``PYTHONHASHSEED=0``, the repository on ``PYTHONPATH``), under
``TRANSFORMER_EDU_SEED`` = each seed of ``--seeds`` (0-4), on each set of CPU
kernels of ``--kernels``: ``default`` (what PyTorch picks on this machine) and
``avx2`` (``ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2
ONEDNN_MAX_CPU_ISA=AVX2``: the rounding of an older CPU, which sends a short
run elsewhere). There is no second copy of the experiments: the cells record
their numbers with ``transformer_edu.seeds.record(key, value)`` and their
claims with ``transformer_edu.seeds.check(claim, margin)``, which write to the
file named by ``TRANSFORMER_EDU_SWEEP_RECORDS`` in a sweep (and only return,
or assert, otherwise). A claim that fails in a sweep is recorded, not raised,
so a bad seed reports every claim; a cell that raises is recorded as an error
and the run goes on with the next cell.

It writes

* ``book/_data/seed_sweep.json`` and ``book/_data/seed_sweep_avx2.json``: per
  set of kernels, every run's numbers and claim margins, the cell that recorded
  each, the text each recording cell printed for seed 0, every error, the
  summary (mean, min, max) and every claim's margins;
* ``transformer_edu/assets/seed_sweep.json``: the mean, minimum and maximum of
  every number over all runs (both sets of kernels), which
  ``transformer_edu.seeds.spread`` prints in the chapters;

and then (unless ``--no-store``) runs the swept chapters once more with seed 0
on the default kernels through ``scripts/execute_notebooks.py``, which stores
their outputs: the stored run is the sweep's seed 0, and the spread lines the
chapters print come from the summary just written. It ends by checking that
every recording cell of the stored notebooks printed what it printed in the
sweep (``tests/book/test_seed_sweep.py`` checks it again, on the committed
files). ``--jobs`` notebooks run at once (default: the number of cores, at
most 2); each kernel uses one thread.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
sys.path.insert(0, str(REPO_ROOT))

import execute_notebooks  # noqa: E402  (the one way the book runs a notebook)

from transformer_edu.seeds import RECORD_VARIABLE  # noqa: E402

DATA = REPO_ROOT / "book" / "_data"
OUT = {"default": DATA / "seed_sweep.json", "avx2": DATA / "seed_sweep_avx2.json"}
PACKAGE_SUMMARY = REPO_ROOT / "transformer_edu" / "assets" / "seed_sweep.json"
CHAPTERS = ("07", "08", "09", "10")
SEEDS = (0, 1, 2, 3, 4)
#: The environment of each set of CPU kernels (variables PyTorch, MKL and oneDNN read).
KERNELS = {
    "default": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
}
KERNEL_VARIABLES = sorted({name for env in KERNELS.values() for name in env})
#: Run in the kernel after the last cell: its CPU seconds and its children's.
CPU_PROBE = (
    "import resource as _r\n"
    "print(sum(getattr(_r.getrusage(w), f) for w in (_r.RUSAGE_SELF, _r.RUSAGE_CHILDREN)"
    " for f in ('ru_utime', 'ru_stime')))"
)


def chapter_path(chapter: str) -> Path:
    """``"07"`` -> ``notebooks/07_training.ipynb``."""
    found = sorted((REPO_ROOT / "notebooks").glob(f"{int(chapter):02d}_*.ipynb"))
    if len(found) != 1:
        raise SystemExit(f"chapter {chapter}: expected one notebook, found {found}")
    return found[0]


def code_digest(path: Path) -> str:
    """SHA-256 of the notebook's code cells (their sources, in order): the experiment."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
               for c in notebook["cells"] if c["cell_type"] == "code"]
    return hashlib.sha256("\n\0\n".join(sources).encode("utf-8")).hexdigest()


def printed(cell) -> str:
    """What a cell printed (its stdout streams, in order)."""
    return "".join(
        "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream" and out.get("name") == "stdout"
    )


def kernel_environment(seed: int, kernels: str, records: Path) -> dict:
    """The kernel's environment: execute_notebooks' (CPU, PYTHONHASHSEED=0), the seed,
    the records file and the CPU kernels' variables."""
    env = execute_notebooks.environment(allow_gpu=False)
    for name in KERNEL_VARIABLES:
        env.pop(name, None)
    env.update(KERNELS[kernels])
    env["TRANSFORMER_EDU_SEED"] = str(seed)
    env[RECORD_VARIABLE] = str(records)
    return env


def run_notebook(task: tuple[str, int, str, int]) -> dict:
    """Execute one chapter for one seed on one set of kernels, cell by cell.

    Returns:
        ``{"chapter", "seed", "kernels", "numbers": {key: value}, "keys": {key: cell},
        "claims": {claim: {"margin", "inclusive", "cell"}}, "printed": {cell: text},
        "errors": [{"cell", "error"}], "seconds"}``; cells count all cells from 0.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    chapter, seed, kernels, timeout = task
    path = chapter_path(chapter)
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(REPO_ROOT / "notebooks")}},
    )  # fmt: skip
    result = {"chapter": path.stem, "seed": seed, "kernels": kernels, "numbers": {}, "keys": {},
              "claims": {}, "printed": {}, "errors": [], "slow_cells": {}}  # fmt: skip
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="seed-sweep-") as work:
        records = Path(work) / "records.jsonl"
        records.touch()
        env = kernel_environment(seed, kernels, records)
        read = 0

        def collect(index: int, cell) -> None:
            nonlocal read
            with records.open(encoding="utf-8") as file:
                file.seek(read)
                lines = file.readlines()
                read = file.tell()
            for line in lines:
                entry = json.loads(line)
                if "key" in entry:
                    if entry["key"] in result["keys"] and result["keys"][entry["key"]] != index:
                        result["errors"].append({"cell": index, "error": f"{entry['key']!r} recorded twice"})
                    result["numbers"][entry["key"]] = entry["value"]
                    result["keys"][entry["key"]] = index
                else:
                    if entry["claim"] in result["claims"]:
                        result["errors"].append({"cell": index, "error": f"claim {entry['claim']!r} checked twice"})
                    result["claims"][entry["claim"]] = {
                        "margin": entry["margin"], "inclusive": entry["inclusive"], "cell": index,
                    }  # fmt: skip
            if lines:
                result["printed"][str(index)] = printed(cell)

        async def run() -> None:
            client.reset_execution_trackers()
            async with client.async_setup_kernel(env=env):
                for index, cell in enumerate(notebook.cells):
                    if cell.cell_type != "code":
                        continue
                    began = time.perf_counter()
                    try:
                        await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                    except CellExecutionError as error:
                        lines = re.sub(r"\x1b\[[0-9;]*m", "", str(error)).strip().splitlines()
                        result["errors"].append({"cell": index, "error": lines[-1] if lines else repr(error)})
                    except Exception as error:  # the kernel died, a cell timed out: the run stops
                        result["errors"].append({"cell": index, "error": f"{type(error).__name__}: {error}"})
                        collect(index, cell)
                        return
                    collect(index, cell)
                    if time.perf_counter() - began > 60:  # a cell that waited: show where
                        result["slow_cells"][str(index)] = round(time.perf_counter() - began, 1)
                # the kernel's CPU time, with its subprocesses' (torchrun in Chapter 9)
                notebook.cells.append(nbformat.v4.new_code_cell(CPU_PROBE))
                await client.async_execute_cell(notebook.cells[-1], len(notebook.cells) - 1)
                result["cpu_seconds"] = float(printed(notebook.cells.pop()))

        asyncio.run(run())
    result["seconds"] = time.perf_counter() - start
    return result


# --------------------------------------------------------------------------- #
# Results                                                                       #
# --------------------------------------------------------------------------- #


def holds(margin: float, inclusive: bool) -> bool:
    return margin >= 0 if inclusive else margin > 0


def summarize(values: dict[str, float]) -> dict:
    """Mean, minimum and maximum of ``{run: value}``, with the runs of the extremes."""
    low, high = min(values, key=values.get), max(values, key=values.get)
    return {
        "mean": statistics.fmean(values.values()), "min": values[low], "min_run": low,
        "max": values[high], "max_run": high, "runs": len(values),
    }  # fmt: skip


def sweep_file(kernels: str, seeds: list[int], chapters: list[str], results: list[dict], argv: list[str]) -> dict:
    """The JSON of one set of kernels."""
    import torch

    runs = {str(seed): {"numbers": {}, "claims": {}, "errors": [], "seconds": {}} for seed in seeds}
    books = {}
    for chapter in chapters:
        stem = chapter_path(chapter).stem
        books[stem] = {"code_sha256": code_digest(chapter_path(chapter)), "keys": {}, "claims": {}, "printed": {}}
    for r in results:
        run, book = runs[str(r["seed"])], books[r["chapter"]]
        run["numbers"].update(r["numbers"])
        run["claims"].update({name: c["margin"] for name, c in r["claims"].items()})
        run["errors"] += [{"chapter": r["chapter"], **e} for e in r["errors"]]
        if r["slow_cells"]:
            run.setdefault("slow_cells", {})[r["chapter"]] = r["slow_cells"]
        run["seconds"][r["chapter"]] = {"wall": round(r["seconds"], 1), "cpu": round(r.get("cpu_seconds", 0.0), 1)}
        book["keys"].update(r["keys"])
        for name, c in r["claims"].items():
            book["claims"][name] = {"cell": c["cell"], "inclusive": c["inclusive"]}
        if r["seed"] == seeds[0]:
            book["printed"] = r["printed"]
    keys = sorted({key for run in runs.values() for key in run["numbers"]})
    summary = {
        key: summarize({seed: run["numbers"][key] for seed, run in runs.items() if key in run["numbers"]})
        for key in keys
    }
    claims = {}
    for book in books.values():
        for name, where in book["claims"].items():
            margins = {seed: run["claims"][name] for seed, run in runs.items() if name in run["claims"]}
            held = {seed: holds(m, where["inclusive"]) for seed, m in margins.items()}
            worst = min(margins, key=margins.get)
            claims[name] = {
                **where, "margins": margins, "held": held,
                "held_for_all": len(held) == len(seeds) and all(held.values()),
                "smallest_margin": margins[worst], "seed_of_smallest": int(worst),
            }  # fmt: skip
    return {
        "description": (
            "The chapters' short training runs over seeds, made by executing the chapters "
            "(scripts/seed_sweep.py): every run's numbers (fractions as fractions) and claim "
            "margins (a claim holds when its margin is > 0, or >= 0 if inclusive), the cell "
            "(counted from 0 over all cells) that recorded each, and what each recording "
            "cell printed for the first seed."
        ),
        "made_with": " ".join([*(f"{k}={v}" for k, v in KERNELS[kernels].items()),
                               "python scripts/seed_sweep.py", *argv]),  # fmt: skip
        "kernels": kernels,
        "seeds": seeds,
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "torch": str(torch.__version__),
        },
        "chapters": books,
        "runs": runs,
        "summary": summary,
        "claims": claims,
    }


def package_summary(files: dict[str, dict]) -> dict:
    """The summary over every run of every set of kernels (what the package ships)."""
    keys = sorted({key for sweep in files.values() for key in sweep["summary"]})
    summary = {}
    for key in keys:
        values = [run["numbers"][key] for sweep in files.values() for run in sweep["runs"].values()
                  if key in run["numbers"]]  # fmt: skip
        summary[key] = {"mean": statistics.fmean(values), "min": min(values), "max": max(values), "runs": len(values)}
    seeds = sorted({seed for sweep in files.values() for seed in sweep["seeds"]})
    return {
        "description": "The mean, minimum and maximum of every number of book/_data/seed_sweep*.json "
        "over all their runs (written by scripts/seed_sweep.py; read by transformer_edu.seeds).",
        "seeds": seeds,
        "kernels": list(files),
        "runs": sum(len(sweep["seeds"]) for sweep in files.values()),
        "summary": summary,
    }


def write(path: Path, content: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _fmt(value: float) -> str:
    if float(value).is_integer() and abs(value) >= 1:
        return f"{value:.0f}"
    return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"


def report(files: dict[str, dict]) -> list[str]:
    """Print every claim's smallest margin and the largest change a switch of kernels made
    to its margin for one seed; return the problems (a claim that failed, an error)."""
    problems = []
    names = list(next(iter(files.values()))["claims"])
    width = min(70, max(len(n) for n in names)) + 2 if names else 10
    print(f"\n{'claim':{width}s}{'held':>6s}{'smallest':>10s}{'kernels Δ':>11s}")
    for name in names:
        margins = [m for sweep in files.values() for m in sweep["claims"].get(name, {}).get("margins", {}).values()]
        held = all(sweep["claims"].get(name, {}).get("held_for_all") for sweep in files.values())
        change = 0.0
        if len(files) == 2:
            a, b = (sweep["claims"].get(name, {}).get("margins", {}) for sweep in files.values())
            change = max((abs(a[s] - b[s]) for s in a if s in b), default=0.0)
        print(f"{name[:width - 2]:{width}s}{'yes' if held else 'NO':>6s}{_fmt(min(margins)):>10s}{_fmt(change):>11s}")
        if not held:
            problems.append(f"claim did not hold for every run: {name}")
    for kernels, sweep in files.items():
        for seed, run in sweep["runs"].items():
            problems += [f"{kernels}, seed {seed}, {e['chapter']} cell {e['cell']}: {e['error']}" for e in run["errors"]]
    return problems


def store(chapters: list[str], jobs: int) -> None:
    """Re-execute the chapters with seed 0 on the default kernels and store them."""
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES and k != "TRANSFORMER_EDU_SEED"}
    env.pop(RECORD_VARIABLE, None)
    script = REPO_ROOT / "scripts" / "execute_notebooks.py"
    running = []
    for chapter in chapters:
        running.append(subprocess.Popen([sys.executable, str(script), str(chapter_path(chapter))], env=env))
        if len(running) >= jobs:
            if running.pop(0).wait() != 0:
                raise SystemExit("storing a chapter failed")
    for process in running:
        if process.wait() != 0:
            raise SystemExit("storing a chapter failed")


def stored_problems(default: dict) -> list[str]:
    """Recording cells of the stored notebooks whose output is not the sweep's first seed's."""
    problems = []
    for stem, book in default["chapters"].items():
        notebook = json.loads((REPO_ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        for cell, text in book["printed"].items():
            if printed(notebook["cells"][int(cell)]) != text:
                problems.append(f"{stem} cell {cell}: the stored output is not what the sweep's seed 0 printed")
    return problems


def reused_results(chapters: list[str], directory: Path | None = None) -> list[dict]:
    """The runs of ``chapters`` as an earlier sweep wrote them (``directory``: the book's files).

    So that a sweep can run again only the chapters whose code changed: each chapter's
    code digest must still be the one its runs were made with, or it is refused.
    """
    results = []
    for kernels, default_path in OUT.items():
        path = (directory / default_path.name) if directory else default_path
        old = json.loads(path.read_text(encoding="utf-8"))
        for chapter in chapters:
            stem = chapter_path(chapter).stem
            book = old["chapters"].get(stem)
            if book is None:
                raise SystemExit(f"--reuse {chapter}: {path} has no runs of {stem}")
            if book["code_sha256"] != code_digest(chapter_path(chapter)):
                raise SystemExit(f"--reuse {chapter}: its code changed since {path} was made; sweep it again")
            for seed, run in old["runs"].items():
                results.append({
                    "chapter": stem, "seed": int(seed), "kernels": kernels,
                    "numbers": {k: run["numbers"][k] for k in book["keys"] if k in run["numbers"]},
                    "keys": dict(book["keys"]),
                    "claims": {name: {**where, "margin": run["claims"][name]}
                               for name, where in book["claims"].items() if name in run["claims"]},
                    "printed": book["printed"] if int(seed) == old["seeds"][0] else {},
                    "errors": [{k: v for k, v in e.items() if k != "chapter"}
                               for e in run["errors"] if e.get("chapter") == stem],
                    "slow_cells": run.get("slow_cells", {}).get(stem, {}),
                    "seconds": run["seconds"].get(stem, {}).get("wall", 0.0),
                    "cpu_seconds": run["seconds"].get(stem, {}).get("cpu", 0.0),
                })  # fmt: skip
    return results


def run_all(tasks: list[tuple], jobs: int):
    """Run every task in its own process, ``jobs`` at a time; yield each result as it ends.

    A process that dies without a result (killed from outside, say) is run once more, then
    reported as an error of its run.
    """
    waiting = [(task, 1) for task in tasks]
    running = []
    with tempfile.TemporaryDirectory(prefix="seed-sweep-results-") as work:
        while waiting or running:
            while waiting and len(running) < jobs:
                task, attempt = waiting.pop(0)
                out = Path(work) / f"{len(waiting)}-{task[0]}-{task[1]}-{task[2]}-{attempt}.json"
                command = [sys.executable, str(Path(__file__).resolve()), "--task", *map(str, task), str(out)]
                running.append((subprocess.Popen(command), task, attempt, out))
            time.sleep(1)
            for item in list(running):
                process, task, attempt, out = item
                if process.poll() is None:
                    continue
                running.remove(item)
                if process.returncode == 0 and out.is_file():
                    yield json.loads(out.read_text(encoding="utf-8"))
                elif attempt == 1:
                    print(f"    {task[:3]}: the run ended without a result (exit {process.returncode}); again", flush=True)
                    waiting.insert(0, (task, 2))
                else:
                    chapter, seed, kernels, _ = task
                    yield {"chapter": chapter_path(chapter).stem, "seed": seed, "kernels": kernels, "numbers": {},
                           "keys": {}, "claims": {}, "printed": {}, "slow_cells": {}, "seconds": 0.0,
                           "errors": [{"cell": -1, "error": f"the run ended twice without a result "
                                                            f"(exit {process.returncode})"}]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--task"]:  # one run, in a process of its own (run_all)
        chapter, seed, kernels, timeout, out = argv[1:]
        write(Path(out), run_notebook((chapter, int(seed), kernels, int(timeout))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="seeds (default 0-4)")
    parser.add_argument("--chapters", nargs="+", default=list(CHAPTERS), help="chapter numbers (default 07 08 09 10)")
    parser.add_argument("--kernels", nargs="+", choices=list(KERNELS), default=list(KERNELS),
                        help="sets of CPU kernels (default both)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="notebooks at once")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (600)")
    parser.add_argument("--no-store", action="store_true", help="do not re-execute and store the chapters")
    parser.add_argument("--reuse", nargs="+", default=[], metavar="CHAPTER",
                        help="chapters (of --chapters) whose runs are taken from the book's files, not run "
                        "again: refused if their code changed since; they are not stored again either")
    parser.add_argument("--out-dir", type=Path, default=None,
                        help="write the JSON files here (the package's summary as package_seed_sweep.json) "
                        "instead of book/_data and the package")  # fmt: skip
    args = parser.parse_args(argv)
    if args.seeds[0] != 0 and not args.no_store:
        parser.error("the stored run is seed 0: start --seeds with 0, or pass --no-store")
    partial = args.out_dir is None and (
        sorted(args.kernels) != sorted(KERNELS) or sorted(args.chapters) != sorted(CHAPTERS)
    )
    if partial:
        parser.error("a partial sweep (--kernels, --chapters) writes elsewhere: give --out-dir")
    if args.out_dir is not None and not args.no_store:
        parser.error("the stored run prints the book's summary: with --out-dir, pass --no-store")
    for chapter in args.chapters:
        chapter_path(chapter)
    # the longest chapters first, so that the last ones to finish are short
    reused = reused_results(args.reuse) if args.reuse else []
    tasks = [(c, s, k, args.timeout) for c in sorted(set(args.chapters) - set(args.reuse), reverse=True)
             for k in args.kernels for s in args.seeds]  # fmt: skip
    start = time.perf_counter()
    results, cpu = [r for r in reused if r["kernels"] in args.kernels and r["seed"] in args.seeds], 0.0
    print(f"{len(tasks)} notebook runs, {args.jobs} at a time", flush=True)
    for done, r in enumerate(run_all(tasks, args.jobs), start=1):
        results.append(r)
        cpu += r.get("cpu_seconds", 0.0)
        failed = [c for c, v in r["claims"].items() if not holds(v["margin"], v["inclusive"])]
        print(
            f"[{done}/{len(tasks)}, {(time.perf_counter() - start) / 60:.1f} min] {r['chapter']}, seed "
            f"{r['seed']}, {r['kernels']} kernels: {r['seconds']:.0f} s ({r.get('cpu_seconds', 0):.0f} s of CPU), "
            f"{len(r['numbers'])} numbers, {len(r['claims'])} claims ({len(failed)} failed), "
            f"{len(r['errors'])} errors", flush=True,
        )  # fmt: skip
        for claim in failed:
            print(f"    claim failed: {claim} (margin {r['claims'][claim]['margin']:.4g})", flush=True)
        for error in r["errors"]:
            print(f"    cell {error['cell']}: {error['error']}", flush=True)
    files = {
        kernels: sweep_file(kernels, args.seeds, args.chapters, [r for r in results if r["kernels"] == kernels], argv)
        for kernels in args.kernels
    }
    out = {k: (args.out_dir / OUT[k].name if args.out_dir else OUT[k]) for k in files}
    for kernels, sweep in files.items():
        write(out[kernels], sweep)
    write(args.out_dir / "package_seed_sweep.json" if args.out_dir else PACKAGE_SUMMARY, package_summary(files))
    problems = report(files)
    print(f"\nsweep: {(time.perf_counter() - start) / 60:.1f} min ({cpu / 60:.1f} min of CPU); written: {', '.join(map(str, out.values()))}")
    if not args.no_store:
        print("storing the chapters (seed 0, default kernels) ...", flush=True)
        store([c for c in args.chapters if c not in args.reuse], args.jobs)
        problems += stored_problems(files["default"])
    print(f"total: {(time.perf_counter() - start) / 60:.1f} min")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
