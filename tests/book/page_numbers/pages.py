"""The book's pages (intro, costs, limits, family tree, glossary): the numbers their prose states.

The costs page is generated from ``book/_data/costs.json`` by
``scripts/measure_costs.py``; its numbers are read back from that file through
the script's own rendering. The limits page works its sizes out from formulas,
which are computed here (this replaces ``tests/book/test_page_numbers.py``);
its other numbers, and the family tree's, are quoted from the papers cited
beside them.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re

from .framework import BOOK, ROOT, Exempt, Number, package

KIB, MIB, GIB = 2**10, 2**20, 2**30


# --------------------------------------------------------------------------- #
# intro                                                                         #
# --------------------------------------------------------------------------- #


def sweep_seeds() -> str:
    """The seeds of the committed seed sweep, ``"0–4"``."""
    seeds = json.loads((BOOK / "_data" / "seed_sweep.json").read_text(encoding="utf-8"))["seeds"]
    assert seeds == list(range(min(seeds), max(seeds) + 1)), seeds
    return f"{min(seeds)}–{max(seeds)}"


INTRO = [Number("range over seeds 0–4", package(sweep_seeds, template="range over seeds {}"), page="intro")]


# --------------------------------------------------------------------------- #
# costs                                                                         #
# --------------------------------------------------------------------------- #


@functools.cache
def _costs_page() -> list[str]:
    """The lines of the costs page as ``scripts/measure_costs.py`` renders it from costs.json."""
    path = ROOT / "scripts" / "measure_costs.py"
    spec = importlib.util.spec_from_file_location("measure_costs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.render_markdown(module.load_costs()).splitlines()


def costs_line(start: str, section: str | None = None) -> str:
    """The rendered line of the costs page that starts with ``start`` (in the
    section whose heading starts with ``section``, if given)."""
    lines, heading = [], None
    for line in _costs_page():
        if line.startswith("#"):
            heading = line.lstrip("# ")
        if line.startswith(start) and (section is None or (heading or "").startswith(section)):
            lines.append(line)
    if len(lines) != 1:
        raise LookupError(f"the costs page has {len(lines)} lines starting with {start!r} in section {section!r}")
    return lines[0]


def costs_cell(start: str, column: int, section: str | None = None) -> str:
    """One cell of a rendered table row of the costs page (bold marks removed)."""
    cells = [cell.strip() for cell in costs_line(start, section).strip().strip("|").split("|")]
    return cells[column].strip("*")


def costs_match(start: str, pattern: str) -> str:
    """What ``pattern`` matches in the rendered line that starts with ``start``."""
    match = re.search(pattern, costs_line(start))
    if match is None:
        raise LookupError(f"{pattern!r} not in the costs page's line {start!r}")
    return match.group(0)


def cell(typed: str, start: str, column: int, section: str | None = None) -> Number:
    """A number in one cell of the costs page's tables."""
    return Number(typed, package(functools.partial(costs_cell, start, column, section)), page="costs")


def fragment(typed: str, start: str, pattern: str) -> Number:
    """What a pattern matches in one rendered line of the costs page."""
    return Number(typed, package(functools.partial(costs_match, start, pattern)), page="costs")


#: Each chapter's wall time on the CPU and on the GPU, as the page writes them.
_CHAPTER_TIMES = {
    "01_attention": ("12.1 s", "21.1 s"),
    "02_multi_head_attention": ("8.6 s", "18.0 s"),
    "03_positional_encoding": ("10.0 s", "19.0 s"),
    "04_layer_norm_and_residuals": ("15.5 s", "32.0 s"),
    "05_encoder": ("10.0 s", "17.4 s"),
    "06_decoder": ("9.6 s", "21.6 s"),
    "07_training": ("1 min 24 s", "50.0 s"),
    "08_beam_search": ("1 min 01 s", None),  # failed on the GPU
    "09_beyond_the_toy": ("2 min 00 s", None),  # not run on the GPU
    "10_language_models": ("1 min 51 s", None),  # timed alone (measure_costs.py --chapter), not on the GPU
}
CPU, GPU = "CPU", "GPU (CUDA)"
#: (section, a benchmark row's label, its ratio as the page writes it)
_RATIOS = [
    (CPU, "greedy, 100 new tokens: recompute / cache", "6.46×"),
    (CPU, "greedy, 400 new tokens: recompute / cache", "26.2×"),
    (CPU, "beam K = 5, 40 tokens: plain loop, no cache / batched, cache", "37.8×"),
    (CPU, "beam K = 5: one source at a time / all sources in one batch", "4.46×"),
    (CPU, "cached greedy step at d_model 512: inside / outside PyTorch operators", "9.38×"),
    (CPU, "ours / torch.nn.Transformer (training step)", "0.981×"),
    (GPU, "greedy, 100 new tokens: recompute / cache", "1.54×"),
    (GPU, "greedy, 500 new tokens: recompute / cache", "3×"),
    (GPU, "beam K = 5, 40 tokens: plain loop, no cache / batched, cache", "60.8×"),
    (GPU, "beam K = 5: one source at a time / all sources in one batch", "7.32×"),
    (GPU, "cached greedy step at d_model 512: inside / outside PyTorch operators", "4.65×"),
    (GPU, "ours / torch.nn.Transformer (training step)", "0.928×"),
    (GPU, "ours / torch.nn.Transformer (training step, bfloat16 autocast)", "0.865×"),
    (GPU, "float32 / bfloat16 autocast (our training step)", "1.56×"),
    (GPU, "ours / torch.nn.Transformer (peak GPU memory, float32)", "0.924×"),
]


def costs_ratio(section: str, label: str) -> str:
    """One benchmark ratio of a device's table."""
    found, heading = [], None
    for line in _costs_page():
        if line.startswith("#"):
            heading = line.lstrip("# ")
        elif (heading or "").startswith(section) and f"| {label} |" in line:
            found.append(line.rstrip(" |").rsplit("|", 1)[1].strip())
    if len(found) != 1:
        raise LookupError(f"{len(found)} rows {label!r} in the costs page's section {section!r}")
    return found[0]


def costs_detail(start: str) -> str:
    """A line of the GPU's details, without its list mark."""
    return costs_line(f"- {start}").removeprefix("- ")


GPU_NOTE_7 = "- GPU (CUDA), {doc}`/notebooks/07_training`:"
GPU_NOTE_8 = "- GPU (CUDA), {doc}`/notebooks/08_beam_search`:"
_DETAILS = [
    "Peak GPU memory of decoding, greedy 500 new tokens, cache: 338 MiB.",
    "Peak GPU memory of decoding, greedy 500 new tokens, recompute: 349 MiB.",
    (
        "Profile of the cached greedy step (d_model 512, 8 heads, otherwise as above, 100 tokens): 1.44 ms per step, "
        "0.18 reads of a value from the GPU per step (each one a host–device synchronisation)."
    ),
    "Peak GPU memory of a training step, ours, float32: 6,236 MiB.",
    "Peak GPU memory of a training step, torch.nn.Transformer, float32: 6,751 MiB.",
    "Peak GPU memory of a training step, ours, bfloat16 autocast: 4,669 MiB.",
    "Peak GPU memory of a training step, torch.nn.Transformer, bfloat16 autocast: 4,786 MiB.",
]
#: The live translator's table: (the start of a row, its measurement as the page writes it)
_LIVE = [
    ("| Chapter 8's page before", "1.72 MB"),
    ("| of which the demo's own", "44 kB"),
    ("| ONNX Runtime Web", "14.31 MB (3.69 MB gzipped)"),
    ("| the model (", "1.15 MB"),
    ("| time to the first translation", "0.9 s"),
    ("| of which loading the runtime", "0.6 s"),
    ("| each further sentence", "6 ms"),
    ("| the slowest of them", "11 ms"),
]
COSTS = [
    *(cell(typed, f"| {{doc}}`/notebooks/{name}` |", column)
      for name, times in _CHAPTER_TIMES.items() for column, typed in enumerate(times, start=1) if typed),
    cell("7 min 22 s", "| **All chapters** |", 1),
    cell("2 min 59 s (7 of 8 chapters)", "| **All chapters** |", 2),
    fragment("after 68 s", GPU_NOTE_7, r"after \d+ s"),
    fragment("stopped after 44 s", GPU_NOTE_8, r"stopped after \d+ s"),
    fragment("took 65.7 s", GPU_NOTE_8, r"took [\d.]+ s"),
    fragment("load average 3.0", "- CPU, {doc}`/notebooks/10_language_models`:", r"load average [\d.]+"),
    *(Number(typed, package(functools.partial(costs_ratio, section, label)), page="costs")
      for section, label, typed in _RATIOS),
    *(Number(typed, package(functools.partial(costs_detail, typed.split(":")[0])), page="costs")
      for typed in _DETAILS),
    *(cell(typed, start, 1) for start, typed in _LIVE),
    fragment("(median of 23)", "| each further sentence", r"\(median of \d+\)"),
]

# --------------------------------------------------------------------------- #
# limits: sizes worked out from their formulas                                  #
# --------------------------------------------------------------------------- #


def size(n_bytes: float) -> str:
    """'1 MiB', '3 GiB', '720 KiB', '2.5 MiB', as the pages write sizes."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if n_bytes >= unit:
            value = n_bytes / unit
            if value != round(value, 1):
                raise ValueError(f"{n_bytes} bytes is not a round number of {name}")
            return f"{value:g} {name}"
    return f"{n_bytes} bytes"


def grouped(n: int) -> str:
    """Thousands separated by a space, as the pages write them: 262 144."""
    return f"{n:,}".replace(",", " ")


def score_cells(length: int) -> list[str]:
    """A row of the score-matrix table: L, L², float32 scores of one head, 8 heads, 8 heads × 6 layers."""
    one = length * length * 4
    return [grouped(length), grouped(length**2), size(one), size(8 * one), size(48 * one)]


def score_cell(length: int, column: int) -> str:
    return score_cells(length)[column]


D_BASE, N_BASE = 512, 6
#: Llama 3 70B: 80 layers, 8 key/value heads of 128 for 64 query heads, bfloat16.
LLAMA_LAYERS, LLAMA_KV_WIDTH, LLAMA_HEADS, LLAMA_HEAD_DIM = 80, 8 * 128, 64, 128
LLAMA_TOKENS = 131072


def llama_cache(heads_of_keys: int) -> int:
    """Bytes per token of Llama 3 70B's key/value cache in bfloat16."""
    return 2 * LLAMA_LAYERS * heads_of_keys * LLAMA_HEAD_DIM * 2


def sixty_fourth() -> str:
    tokens = 32768 * D_BASE * 4
    ratio = (32768**2 * 4) // tokens
    words = {64: "sixty-fourth"}
    return f"is {size(tokens)}, a {words[ratio]}"


#: The score-matrix table as the page writes it: L → (L², one head, 8 heads, 8 heads × 6 layers).
_TYPED_ROWS = {
    512: ("262 144", "1 MiB", "8 MiB", "48 MiB"),
    4096: ("16 777 216", "64 MiB", "512 MiB", "3 GiB"),
    32768: ("1 073 741 824", "4 GiB", "32 GiB", "192 GiB"),
}
LIMITS = [
    *(Number(typed, package(functools.partial(score_cell, n, column)), page="limits")
      for n, row in _TYPED_ROWS.items() for column, typed in enumerate(row, start=1)),
    Number("L = 6·D: 3 072 tokens",
           package(lambda: grouped(12 * D_BASE * D_BASE // (2 * D_BASE)), template="L = 6·D: {} tokens"),
           page="limits"),
    Number("is 64 MiB, a sixty-fourth", package(sixty_fourth), page="limits"),
    Number("T = 4 096 target tokens take 96 MiB",
           package(lambda: size(2 * N_BASE * 4096 * D_BASE * 4), template="T = 4 096 target tokens take {}"),
           page="limits"),
    Number("S = 30 tokens adds 720 KiB",
           package(lambda: size(2 * N_BASE * 30 * D_BASE * 4), template="S = 30 tokens adds {}"), page="limits"),
    Number("2 · 80 · 1 024 · 2 bytes = 320 KiB per token, or 40 GiB for one sequence of 128K (131 072) tokens",
           package(lambda: (size(llama_cache(8)), size(llama_cache(8) * LLAMA_TOKENS), grouped(LLAMA_TOKENS)),
                   template="2 · 80 · 1 024 · 2 bytes = {} per token, or {} for one sequence of 128K ({}) tokens"),
           page="limits"),
    Number("it would be 2.5 MiB per token and 320 GiB",
           package(lambda: (size(llama_cache(LLAMA_HEADS)), size(llama_cache(LLAMA_HEADS) * LLAMA_TOKENS)),
                   template="it would be {} per token and {}"),
           page="limits"),
    Number("70 billion weights take about 140 GB",
           package(lambda: f"{70e9 * 2 / 1e9:.0f}", template="70 billion weights take about {} GB"), page="limits"),
    Number("The 320 KiB above", package(lambda: size(llama_cache(8)), template="The {} above"), page="limits"),
]

# --------------------------------------------------------------------------- #
# family tree                                                                   #
# --------------------------------------------------------------------------- #

FAMILY_TREE = [
    Number("14 336 = 3.5 · D for its 8B model (D = 4 096), three matrices of 10.5D²",
           package(lambda: (f"{14336 / 4096:g}", f"{3 * 14336 / 4096:g}"),
                   template="14 336 = {} · D for its 8B model (D = 4 096), three matrices of {}D²"),
           page="family_tree"),
]

NUMBERS = [*INTRO, *COSTS, *LIMITS, *FAMILY_TREE]

QUOTED = "quoted from the paper cited beside it"
EXEMPT = [
    # limits
    Exempt("(4 bytes a number)", "the size of a float32, a definition", page="limits"),
    Exempt("2.25 groups", QUOTED, page="limits"),
    Exempt("2–4 times more requests", QUOTED, page="limits"),
    Exempt("from 2 048 to 32 768 tokens within 1 000 steps", QUOTED, page="limits"),
    Exempt("about 10 times fewer tokens and 2.5 times fewer steps", QUOTED, page="limits"),
    Exempt("Llama 2 to 128K tokens", "a model's name and a quoted context length", page="limits"),
    Exempt("Llama 3.1", "a model's name", page="limits"),
    Exempt("Gemini 1.5", "a model's name", page="limits"),
    Exempt("over 99 % accuracy", QUOTED, page="limits"),
    Exempt("30 seconds of audio", QUOTED, page="limits"),
    # family tree
    Exempt("GPT (2018–2020)", "the years of a family of models", page="family_tree"),
    Exempt("Llama (2023–2025)", "the years of a family of models", page="family_tree"),
    Exempt("15 % of the tokens", QUOTED, page="family_tree"),
    Exempt("1.5 billion parameters", QUOTED, page="family_tree"),
    Exempt("2 of 8 experts", QUOTED, page="family_tree"),
    Exempt("13 of its 47 billion", QUOTED, page="family_tree"),
    Exempt("21 of 236 billion", QUOTED, page="family_tree"),
    Exempt("680 000 hours", QUOTED, page="family_tree"),
    Exempt("54.5-billion-parameter", QUOTED, page="family_tree"),
    Exempt("16 × 16-pixel", QUOTED, page="family_tree"),
]
