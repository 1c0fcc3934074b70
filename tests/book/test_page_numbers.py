"""The numbers stated on the book's prose pages, recomputed from their formulas.

The chapters assert their numbers in the notebooks; the appendix pages are plain
Markdown, so their worked examples are checked here: each test computes a number
from the formula the page gives and asserts the page states that number.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[2] / "book"
KIB, MIB, GIB = 2**10, 2**20, 2**30


def page(name: str) -> str:
    return re.sub(r"\s+", " ", (BOOK / f"{name}.md").read_text(encoding="utf-8"))


def size(n_bytes: int) -> str:
    """'1 MiB', '3 GiB', '720 KiB', '2.5 MiB', as the pages write sizes."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if n_bytes >= unit:
            value = n_bytes / unit
            assert value == round(value, 1), f"{n_bytes} bytes is not a round number of {name}"
            return f"{value:g} {name}"
    return f"{n_bytes} bytes"


def grouped(n: int) -> str:
    """Thousands separated by a space, as the pages write them: 262 144."""
    return f"{n:,}".replace(",", " ")


@pytest.mark.parametrize("length", [512, 4096, 32768])
def test_limits_score_matrix_table(length):
    row = next(line for line in (BOOK / "limits.md").read_text(encoding="utf-8").splitlines()
               if line.startswith(f"| {grouped(length)} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    one = length * length * 4  # float32 scores of one head, one layer
    assert cells == [grouped(length), grouped(length**2), size(one), size(8 * one), size(48 * one)]


def test_limits_attention_overtakes_the_linear_layers_at_six_d():
    text, d = page("limits"), 512
    # 2·L²·D (QKᵀ and weights·V) = 12·L·D² (four projections + FFN with d_ff = 4D)  ⇔  L = 6·D
    crossover = 12 * d * d // (2 * d)
    assert crossover == 6 * d
    assert f"L = 6·D: {grouped(crossover)} tokens" in text
    tokens = 32768 * d * 4
    assert f"L = 32 768 with D = 512 the whole (L × D) sequence is {size(tokens)}" in text
    assert (32768**2 * 4) // tokens == 64 and "a sixty-fourth of a single head's score matrix" in text


def test_limits_key_value_cache_examples():
    text = page("limits")
    n, d = 6, 512
    assert f"T = 4 096 target tokens take {size(2 * n * 4096 * d * 4)}" in text
    assert f"S = 30 tokens adds {size(2 * n * 30 * d * 4)}" in text
    layers, kv_width, heads, head_dim = 80, 8 * 128, 64, 128  # Llama 3 70B
    per_token = 2 * layers * kv_width * 2  # keys and values, bfloat16
    assert f"2 · 80 · 1 024 · 2 bytes = {size(per_token)} per token" in text
    assert f"or {size(per_token * 131072)} for one sequence of 128K (131 072) tokens" in text
    full = 2 * layers * heads * head_dim * 2
    assert f"it would be {size(full)} per token and {size(full * 131072)}" in text
