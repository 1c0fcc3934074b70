"""Measure what the book costs to run, and write the "Measured costs" page.

Usage (from the repository root)::

    python scripts/measure_costs.py                 # measure on this machine's default device
    python scripts/measure_costs.py --device cpu    # CPU only, even where a GPU exists
    python scripts/measure_costs.py --device all    # CPU, then CUDA when a GPU is present
    python scripts/measure_costs.py --render-only   # rewrite book/costs.md from the JSON
    python scripts/measure_costs.py --device cpu --benchmark benchmarks/decoding.py
                                                    # re-run one benchmark, keep the rest
    python scripts/measure_costs.py --live-translator  # time Chapter 8's live translator in Chromium
    python scripts/measure_costs.py --device cuda --only chapters
                                                    # re-time the chapters, keep the benchmarks
    python scripts/measure_costs.py --device cpu --chapter notebooks/10_language_models.ipynb
                                                    # re-time one chapter, keep the rest (noted
                                                    # on the page with its date and load)

Every run of a device replaces the earlier results of that device in
``book/_data/costs.json`` and keeps the others, so CPU and GPU numbers may come
from different machines: measure the CPU on one, the GPU on another, and commit
the JSON together with the regenerated ``book/costs.md``.

What is measured
----------------
* Each chapter notebook named in ``_toc.yml`` runs top to bottom on a fresh
  kernel (nbclient), with the repository on ``PYTHONPATH`` and the notebook's
  folder as working directory, as nbval runs it. The time recorded is the wall
  time of the whole run, kernel start-up included. For the CPU run the GPU is
  hidden from the kernel (``CUDA_VISIBLE_DEVICES=""``).
* Each benchmark script ``benchmarks/*.py`` (files starting with ``_`` are
  skipped), with the repository on ``PYTHONPATH``, under the contract below.
* With ``--live-translator`` (instead of the chapters and benchmarks): the
  live translator of Chapter 8 in headless Chromium, by its browser tests
  (``tests/book/test_live_translator.py``, which build the book, serve it on
  localhost and write ``artifacts/live_translator.json``): the page's weight
  before the demo starts, the bytes of ONNX Runtime Web and of the model, the
  time to the first translation and the time per sentence. Stored under the
  key ``live_translator`` of the JSON.

The benchmark contract
----------------------
``python benchmarks/NAME.py --json --device DEVICE`` (DEVICE is ``cpu`` or
``cuda``) runs the benchmark on that device and prints, as the last non-empty
line of its standard output, one JSON object::

    {"description": "key/value cache vs recomputing every step, 64 new tokens",
     "ratios": {"speed-up of decoding with the cache": 5.3}}

``description`` (a string, one line) says what is compared; ``ratios`` maps a
short label to a positive number (how many times faster, smaller, ...). Any
other keys (``name``, ``details``, ...) are kept in the JSON but not shown.
Earlier lines of output are free for progress messages. The script finishes in
a few minutes at most and exits with a non-zero status when it fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
COSTS_JSON = REPO_ROOT / "book" / "_data" / "costs.json"
COSTS_MD = REPO_ROOT / "book" / "costs.md"
BENCHMARKS_DIR = REPO_ROOT / "benchmarks"
NOTEBOOK_TIMEOUT_S = 1800
CELL_TIMEOUT_S = 900
BENCHMARK_TIMEOUT_S = 900
DEVICE_NAMES = {"cpu": "CPU", "cuda": "GPU (CUDA)"}
LIVE_TRANSLATOR_TESTS = ["tests/book/test_live_translator.py", "-k", "stays_light or translations_equal"]
LIVE_TRANSLATOR_JSON = REPO_ROOT / "artifacts" / "live_translator.json"
LIVE_TRANSLATOR_TIMEOUT_S = 1800


# --------------------------------------------------------------------------- #
# Rendering: book/_data/costs.json -> book/costs.md (also used by the tests)   #
# --------------------------------------------------------------------------- #

def _seconds(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 60:
        return f"{value:.1f} s"
    minutes, seconds = divmod(round(value), 60)
    return f"{minutes} min {seconds:02d} s"


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}×"


def _runs_in_order(data: dict) -> list[dict]:
    order = list(DEVICE_NAMES)
    return sorted(data.get("runs", []), key=lambda run: order.index(run["device"]))


def _machine_line(run: dict) -> str:
    machine = run["machine"]
    parts = [f"{machine['cpu']} ({machine['cpu_count']} logical cores)", machine["platform"]]
    if machine.get("gpu"):
        parts.insert(0, machine["gpu"])
    return (
        f"- **{DEVICE_NAMES[run['device']]}**, measured on {run['date']}: "
        + ", ".join(parts)
        + f"; Python {run['python']}, PyTorch {run['torch']}."
    )


def _megabytes(value: int) -> str:
    return f"{value / 1e6:.2f} MB" if value >= 1e6 else f"{value / 1e3:.0f} kB"


def _live_translator_lines(data: dict) -> list[str]:
    """The section on Chapter 8's live translator, when ``data`` has its measurement."""
    live = data.get("live_translator")
    if not live:
        return []
    machine = live["machine"]
    gzip = live.get("runtime_gzip_bytes")
    runtime = _megabytes(live["runtime_bytes"]) + (f" ({_megabytes(gzip)} gzipped)" if gzip else "")
    return [
        "## The live translator in the browser",
        "",
        "The live translator of {doc}`/notebooks/08_beam_search` runs the trained",
        "model in the reader's browser with ONNX Runtime Web (WebAssembly, one",
        f"thread). Measured on {live['date']} in headless {live['browser']} on",
        f"{machine['cpu']} ({machine['cpu_count']} logical cores), the book served",
        "from localhost, by `tests/book/test_live_translator.py`.",
        "",
        "| What | Measured |",
        "| --- | ---: |",
        f"| Chapter 8's page before the demo starts (all it transfers) | {_megabytes(live['page_bytes_before_start'])} |",
        f"| of which the demo's own script and stylesheet | {_megabytes(live['demo_script_and_css_bytes'])} |",
        f"| ONNX Runtime Web {live['onnxruntime_web']} (JavaScript and WebAssembly), fetched by the first translation | {runtime} |",
        f"| the model (`encoder.onnx`, `decoder.onnx`, `vocab.json`), fetched by the first translation | {_megabytes(live['model_bytes'])} |",
        f"| time to the first translation (click to English, loading included) | {_seconds(live['first_translation_s_wall'])} |",
        f"| of which loading the runtime and the model | {_seconds(live['runtime_and_model_load_s'])} |",
        f"| each further sentence, greedy decoding and the attention maps (median of {live['sentences'] - 1}) | {live['per_sentence_ms_median']:.0f} ms |",
        f"| the slowest of them | {live['per_sentence_ms_max']:.0f} ms |",
        "",
    ]


def render_markdown(data: dict) -> str:
    """Return the text of ``book/costs.md`` for the measurements in ``data``."""
    runs = _runs_in_order(data)
    lines = [
        "# Measured costs",
        "",
        "```{note}",
        "This page is generated by `scripts/measure_costs.py` from",
        "`book/_data/costs.json`; do not edit it by hand. To measure again, run",
        "`python scripts/measure_costs.py --device all` from the repository root",
        "(on a machine with a GPU it measures both the CPU and the GPU; elsewhere,",
        "the CPU only) and commit both files.",
        "```",
        "",
        "How long each chapter takes to run top to bottom on a fresh kernel, and what",
        "the benchmarks in `benchmarks/` measured. Your numbers will differ with your",
        "hardware; the ratios travel better than the seconds.",
        "",
    ]
    if not runs:
        lines += ["Nothing has been measured yet.", ""]
        return "\n".join(lines + _live_translator_lines(data))

    lines += ["## Machines", ""]
    lines += [_machine_line(run) for run in runs]
    lines += [""]

    devices = [run["device"] for run in runs]
    header = "| Chapter | " + " | ".join(DEVICE_NAMES[d] for d in devices) + " |"
    rule = "| --- | " + " | ".join("---:" for _ in devices) + " |"
    lines += [
        "## Chapters",
        "",
        "Wall time of a full run, kernel start-up included.",
        "",
        header,
        rule,
    ]
    notebooks: list[str] = []
    for run in runs:
        notebooks += [c["notebook"] for c in run["chapters"] if c["notebook"] not in notebooks]
    for notebook in notebooks:
        cells = []
        for run in runs:
            found = [c for c in run["chapters"] if c["notebook"] == notebook]
            if not found:
                cells.append("–")
            elif found[0]["status"] != "ok":
                cells.append("failed")
            else:
                cells.append(_seconds(found[0]["seconds"]))
        page = "/" + notebook.removesuffix(".ipynb")
        lines.append(f"| {{doc}}`{page}` | " + " | ".join(cells) + " |")
    totals = []
    for run in runs:
        ok = [c["seconds"] for c in run["chapters"] if c["status"] == "ok"]
        part = f" ({len(ok)} of {len(run['chapters'])} chapters)" if len(ok) < len(run["chapters"]) else ""
        totals.append(_seconds(sum(ok)) + part if ok else "–")
    lines += ["| **All chapters** | " + " | ".join(f"**{t}**" for t in totals) + " |", ""]
    notes = [f"- {DEVICE_NAMES[run['device']]}, {{doc}}`/{c['notebook'].removesuffix('.ipynb')}`: {c['note']}."
             for run in runs for c in run["chapters"] if c.get("note")]
    lines += notes + [""] if notes else []

    lines += ["## Benchmarks", ""]
    if not any(run["benchmarks"] for run in runs):
        lines += ["No benchmark was measured.", ""]
        return "\n".join(lines + _live_translator_lines(data))
    lines += [
        "Each benchmark runs its sides interleaved in one process and prints the",
        "ratio of their medians, so the machine's noise hits both sides alike. A",
        "device's benchmarks use their own setting (on a GPU, the paper's base",
        "model size), named in each row.",
        "",
    ]
    for run in runs:
        if not run["benchmarks"]:
            continue
        device = DEVICE_NAMES[run["device"]]
        if len(runs) > 1:
            gpu = run["machine"].get("gpu")
            lines += [f"### {device}" + (f": {gpu}" if gpu else ""), ""]
        lines += [f"| Benchmark | Ratio | {device} |", "| --- | --- | ---: |"]
        for bench in run["benchmarks"]:
            name = f"`{bench['script']}`" + (f": {bench['description']}" if bench.get("description") else "")
            if bench.get("date") and bench["date"] != run["date"]:  # re-measured on its own (--benchmark)
                name += f" (measured on {bench['date']})"
            if bench["status"] != "ok":
                lines.append(f"| {name} | | failed |")
                continue
            for row, (label, value) in enumerate(bench["ratios"].items()):
                lines.append(f"| {name if row == 0 else ''} | {label} | {_ratio(value)} |")
        lines.append("")
        notes = [f"- `{bench['script']}`: {bench['note']}" for bench in run["benchmarks"] if bench.get("note")]
        lines += notes + [""] if notes else []
        lines += _gpu_detail_lines(run)
    return "\n".join(lines + _live_translator_lines(data))


def _gpu_detail_lines(run: dict) -> list[str]:
    """Peak memory and host reads that the GPU benchmarks record next to their ratios."""
    if run["device"] != "cuda":
        return []
    lines = []
    for bench in run["benchmarks"]:
        details = bench.get("details", {}) if bench["status"] == "ok" else {}
        details = details.get("details", details)  # the script's own "details", kept under "details"
        for name, mib in details.get("peak_memory_mib", {}).items():
            what = "a training step" if "training" in bench["script"] else "decoding"
            lines.append(f"- Peak GPU memory of {what}, {name}: {mib:,.0f} MiB.")
        profile = details.get("profile")
        if profile and "reads_per_step" in profile:
            lines.append(
                f"- Profile of the cached greedy step ({profile['setting']}): {profile['step_ms']:.2f} ms per "
                f"step, {profile['reads_per_step']:.2f} reads of a value from the GPU per step (each one a "
                "host–device synchronisation)."
            )
    return lines + [""] if lines else []


def load_costs(path: Path = COSTS_JSON) -> dict:
    """Return the measurements stored in ``costs.json`` (an empty record if absent)."""
    if not path.exists():
        return {"schema": 1, "runs": []}
    return json.loads(path.read_text(encoding="utf-8"))


def write_page(data: dict) -> None:
    """Write ``costs.json`` and the page generated from it."""
    COSTS_JSON.parent.mkdir(parents=True, exist_ok=True)
    COSTS_JSON.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    COSTS_MD.write_text(render_markdown(data), encoding="utf-8")


# --------------------------------------------------------------------------- #
# Measuring                                                                    #
# --------------------------------------------------------------------------- #

def _cpu_name() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def describe_machine(device: str) -> dict:
    """Return what the page says about the machine that ran ``device``."""
    import torch

    return {
        "platform": platform.platform(terse=True),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
    }


def chapter_notebooks() -> list[Path]:
    """Return the chapter notebooks named in ``_toc.yml``, in book order."""
    import yaml

    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [REPO_ROOT / f"{f}.ipynb" for f in files if f.startswith("notebooks/")]


def _environment(device: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [str(REPO_ROOT), env.get("PYTHONPATH", "")] if p
    )
    env["MPLBACKEND"] = "agg"
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _title(notebook: dict, fallback: str) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def time_notebook(path: Path, device: str) -> dict:
    """Run one notebook on a fresh kernel and return its timing record."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    record = {
        "notebook": path.relative_to(REPO_ROOT).as_posix(),
        "title": _title(notebook, path.stem),
    }
    start = time.perf_counter()
    try:
        client.execute(env=_environment(device))
    except Exception as error:  # report every failure, keep measuring the rest
        record.update(
            seconds=round(time.perf_counter() - start, 2), status="error", error=str(error)[-2000:]
        )
    else:
        record.update(seconds=round(time.perf_counter() - start, 2), status="ok")
    return record


def run_benchmark(path: Path, device: str) -> dict:
    """Run one benchmark script under the contract above and return its record."""
    record = {"script": path.relative_to(REPO_ROOT).as_posix()}
    start = time.perf_counter()
    try:
        result = subprocess.run(
            [sys.executable, str(path), "--json", "--device", device],
            cwd=REPO_ROOT,
            env=_environment(device),
            capture_output=True,
            text=True,
            timeout=BENCHMARK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        record.update(status="error", error=f"timed out after {BENCHMARK_TIMEOUT_S} s")
        return record
    record["seconds"] = round(time.perf_counter() - start, 2)
    if result.returncode != 0:
        record.update(status="error", error=(result.stdout + result.stderr)[-2000:])
        return record
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    try:
        payload = json.loads(lines[-1])
        ratios = {str(k): float(v) for k, v in payload["ratios"].items()}
    except (IndexError, ValueError, KeyError, TypeError, AttributeError) as error:
        record.update(status="error", error=f"output breaks the contract: {error!r}")
        return record
    record.update(
        date=dt.date.today().isoformat(),
        description=str(payload.get("description", "")),
        ratios=ratios,
        details={k: v for k, v in payload.items() if k not in ("description", "ratios")},
        status="ok",
    )
    return record


def measure(device: str, parts: tuple[str, ...] = ("chapters", "benchmarks")) -> dict:
    """Run every chapter and benchmark on ``device`` (or only ``parts`` of them) and return the run's record."""
    import torch

    run = {
        "device": device,
        "date": dt.date.today().isoformat(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "machine": describe_machine(device),
        "chapters": [],
        "benchmarks": [],
    }
    for path in chapter_notebooks() if "chapters" in parts else []:
        if not path.exists():
            print(f"[{device}] missing, skipped: {path.relative_to(REPO_ROOT)}", flush=True)
            continue
        record = time_notebook(path, device)
        run["chapters"].append(record)
        print(f"[{device}] {record['notebook']}: {record['status']} in {record['seconds']:.1f} s", flush=True)
    for path in sorted(BENCHMARKS_DIR.glob("*.py")) if "benchmarks" in parts else []:
        if path.name.startswith("_"):
            continue
        record = run_benchmark(path, device)
        run["benchmarks"].append(record)
        print(f"[{device}] {record['script']}: {record['status']} {record.get('ratios', '')}", flush=True)
    return run


def remeasure_benchmark(parser: argparse.ArgumentParser, data: dict, script: str, device: str) -> int:
    """Run one benchmark on ``device`` and put its record in place of the old one in that device's run."""
    path = (REPO_ROOT / script).resolve()
    if path.parent != BENCHMARKS_DIR or not path.exists() or path.name.startswith("_"):
        parser.error(f"--benchmark {script}: not a benchmark script in benchmarks/")
    if device not in ("cpu", "cuda"):
        parser.error(f"--benchmark needs --device cpu or --device cuda, got {device}")
    runs = [run for run in data.get("runs", []) if run["device"] == device]
    if not runs:
        parser.error(f"--benchmark: no earlier {device} run in the JSON; measure everything first")
    record = run_benchmark(path, device)
    benchmarks = runs[0]["benchmarks"]
    index = next((i for i, b in enumerate(benchmarks) if b["script"] == record["script"]), len(benchmarks))
    benchmarks[index:index + 1] = [record]
    write_page(data)
    print(f"[{device}] {record['script']}: {record['status']} {record.get('ratios', '')}")
    print(f"wrote {COSTS_JSON.relative_to(REPO_ROOT)} and {COSTS_MD.relative_to(REPO_ROOT)}")
    return 0 if record["status"] == "ok" else 1


def remeasure_chapter(parser: argparse.ArgumentParser, data: dict, notebook: str, device: str) -> int:
    """Time one chapter on ``device`` and put its record in place of the old one in that device's run.

    The record notes its date and the machine's load average: the other
    chapters of the run were timed another day, under another load.
    """
    path = (REPO_ROOT / notebook).resolve()
    if path not in [p.resolve() for p in chapter_notebooks()]:
        parser.error(f"--chapter {notebook}: not a chapter notebook of _toc.yml")
    if device not in ("cpu", "cuda"):
        parser.error(f"--chapter needs --device cpu or --device cuda, got {device}")
    runs = [run for run in data.get("runs", []) if run["device"] == device]
    if not runs:
        parser.error(f"--chapter: no earlier {device} run in the JSON; measure everything first")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    record = time_notebook(path, device)
    when = f"timed alone on {dt.date.today().isoformat()}"
    record["note"] = when + (f", load average {load:.1f} at the start" if load is not None else "")
    chapters = runs[0]["chapters"]
    order = [p.relative_to(REPO_ROOT).as_posix() for p in chapter_notebooks()]
    chapters[:] = [c for c in chapters if c["notebook"] != record["notebook"]] + [record]
    chapters.sort(key=lambda c: order.index(c["notebook"]) if c["notebook"] in order else len(order))
    write_page(data)
    print(f"[{device}] {record['notebook']}: {record['status']} in {record['seconds']:.1f} s ({record['note']})")
    print(f"wrote {COSTS_JSON.relative_to(REPO_ROOT)} and {COSTS_MD.relative_to(REPO_ROOT)}")
    return 0 if record["status"] == "ok" else 1


def measure_live_translator() -> dict:
    """Run the live translator's browser tests and return what they measured, with the machine."""
    import gzip

    LIVE_TRANSLATOR_JSON.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *LIVE_TRANSLATOR_TESTS]
    result = subprocess.run(
        command, cwd=REPO_ROOT, env=_environment("cpu"), timeout=LIVE_TRANSLATOR_TIMEOUT_S, check=False
    )
    if result.returncode != 0 or not LIVE_TRANSLATOR_JSON.exists():
        raise RuntimeError(f"the live translator's browser tests failed (exit status {result.returncode})")
    measured = json.loads(LIVE_TRANSLATOR_JSON.read_text(encoding="utf-8"))
    runtime = REPO_ROOT / "node_modules" / "onnxruntime-web"
    measured["onnxruntime_web"] = json.loads((runtime / "package.json").read_text(encoding="utf-8"))["version"]
    measured["runtime_gzip_bytes"] = sum(
        len(gzip.compress((runtime / "dist" / name).read_bytes(), compresslevel=6))
        for name in measured["runtime_files"]
    )
    return {"date": dt.date.today().isoformat(), "machine": describe_machine("cpu"), **measured}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--device",
        choices=["auto", "cpu", "cuda", "all"],
        default="auto",
        help="auto: CUDA when available, else CPU; all: CPU, then CUDA when available",
    )
    parser.add_argument(
        "--render-only", action="store_true", help="only rewrite book/costs.md from the JSON"
    )
    parser.add_argument(
        "--benchmark",
        metavar="SCRIPT",
        help="re-run only this benchmark (e.g. benchmarks/decoding.py) on --device (cpu or cuda) "
        "and replace its record in that device's earlier run",
    )
    parser.add_argument(
        "--chapter",
        metavar="NOTEBOOK",
        help="re-time only this chapter (e.g. notebooks/10_language_models.ipynb) on --device (cpu or cuda) "
        "and replace its record in that device's earlier run",
    )
    parser.add_argument(
        "--live-translator",
        action="store_true",
        help="only measure Chapter 8's live translator in Chromium (its browser tests)",
    )
    parser.add_argument(
        "--only",
        choices=["chapters", "benchmarks"],
        help="measure only the chapters or only the benchmarks, and keep the other part of "
        "the device's earlier run",
    )
    args = parser.parse_args(argv)

    data = load_costs()
    if args.render_only:
        write_page(data)
        return 0
    if args.benchmark:
        return remeasure_benchmark(parser, data, args.benchmark, args.device)
    if args.chapter:
        return remeasure_chapter(parser, data, args.chapter, args.device)
    if args.live_translator:
        data["live_translator"] = measure_live_translator()
        write_page(data)
        print(f"wrote {COSTS_JSON.relative_to(REPO_ROOT)} and {COSTS_MD.relative_to(REPO_ROOT)}")
        return 0

    import torch

    has_cuda = torch.cuda.is_available()
    if args.device == "cuda" and not has_cuda:
        parser.error("--device cuda: no CUDA device is available")
    devices = {
        "auto": ["cuda" if has_cuda else "cpu"],
        "cpu": ["cpu"],
        "cuda": ["cuda"],
        "all": ["cpu", "cuda"] if has_cuda else ["cpu"],
    }[args.device]

    failures = 0
    for device in devices:
        parts = (args.only,) if args.only else ("chapters", "benchmarks")
        run = measure(device, parts)
        earlier = [r for r in data.get("runs", []) if r["device"] == device]
        if args.only and earlier:  # the part not measured now stays as it was
            kept = "benchmarks" if args.only == "chapters" else "chapters"
            run[kept] = earlier[0][kept]
        failures += sum(r["status"] != "ok" for r in run["chapters"] + run["benchmarks"])
        data["runs"] = [r for r in data.get("runs", []) if r["device"] != device] + [run]
        write_page(data)
    print(f"wrote {COSTS_JSON.relative_to(REPO_ROOT)} and {COSTS_MD.relative_to(REPO_ROOT)}")
    if failures:
        print(f"{failures} notebook(s) or benchmark(s) failed; see the JSON", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
