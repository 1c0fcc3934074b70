"""The appendices' text, checked without building the book: every work in references.bib is cited,
the numbers the pages work out follow from their formulas, and the glossary names terms one way."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK = REPO_ROOT / "book"


def page(name: str) -> str:
    """A page of book/ with its line breaks and runs of spaces made single spaces."""
    return " ".join((BOOK / name).read_text(encoding="utf-8").split())


def bib_keys(book: Path = BOOK) -> list[str]:
    return re.findall(r"^@\w+\{([^,\s]+),", (book / "references.bib").read_text(encoding="utf-8"), re.M)


def cited_keys(book: Path = BOOK, notebooks: Path = REPO_ROOT / "notebooks") -> set[str]:
    """Keys cited by the pages ({cite}`a,b` and its variants) and by the notebooks, which link
    the published bibliography (…/references.html#cite-<key>) so the links work outside the book."""
    cited = set()
    for path in book.glob("*.md"):
        for keys in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", path.read_text(encoding="utf-8")):
            cited.update(key.strip() for key in keys.split(","))
    for path in notebooks.glob("*.ipynb"):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            cited.update(re.findall(r"references\.html#cite-([\w-]+)", "".join(cell["source"])))
    return cited


def test_every_work_in_the_bibliography_is_cited_and_every_citation_is_in_it():
    keys, cited = bib_keys(), cited_keys()
    assert len(keys) == len(set(keys)), "a key appears twice in references.bib"
    assert sorted(set(keys) - cited) == [], "in references.bib but cited nowhere"
    assert sorted(cited - set(keys)) == [], "cited but not in references.bib"


def test_the_check_finds_uncited_keys_in_pages_and_notebooks(tmp_path):
    (tmp_path / "references.bib").write_text(
        "@misc{page2020,\n}\n@misc{notebook2021,\n}\n@misc{nowhere1999,\n}\n", encoding="utf-8"
    )
    (tmp_path / "page.md").write_text("As shown {cite:t}`page2020`.", encoding="utf-8")
    cell = {"cells": [{"source": ["[Roe, 2021](https://example.org/book/references.html#cite-notebook2021)"]}]}
    (tmp_path / "chapter.ipynb").write_text(json.dumps(cell), encoding="utf-8")
    assert set(bib_keys(tmp_path)) - cited_keys(tmp_path, tmp_path) == {"nowhere1999"}


def size(n_bytes: float) -> str:
    """Bytes as the limits page writes them: 720 KiB, 2.5 MiB, 3 GiB."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= factor:
            return f"{n_bytes / factor:g} {unit}"
    return f"{n_bytes:g} B"


def spaced(n: int) -> str:
    """An integer with a space between groups of three digits: 16 777 216."""
    return f"{n:,}".replace(",", " ")


def test_the_limits_pages_worked_numbers_follow_from_its_formulas():
    text = page("limits.md")
    # One float32 score matrix per head: L² numbers of 4 bytes; 8 heads; 8 heads × 6 layers.
    for length in (512, 4096, 32768):
        one = 4 * length**2
        row = f"| {spaced(length)} | {spaced(length**2)} | {size(one)} | {size(8 * one)} | {size(48 * one)} |"
        assert row in text
    assert (8 * 512) ** 2 // 512**2 == 64 and "8 times longer costs 64 times the memory" in text
    tokens = 4 * 32768 * 512  # the (L × D) sequence in float32
    assert size(tokens) == "64 MiB" and 4 * 32768**2 // tokens == 64
    assert "(L × D) sequence is 64 MiB, a sixty-fourth of a single head's score matrix" in text
    # 2·L²·D multiply-adds of attention against 12·L·D² of the projections and the FFN: equal at L = 6·D.
    assert 2 * (6 * 512) ** 2 * 512 == 12 * (6 * 512) * 512**2
    assert f"L = 6·D: {spaced(6 * 512)} tokens for the base model's D = 512" in text
    # Key/value caches: 2·N·T·D and 2·N·S·D numbers.
    assert size(2 * 6 * 4096 * 512 * 4) == "96 MiB" and size(2 * 6 * 30 * 512 * 4) == "720 KiB"
    assert "T = 4 096 target tokens take 96 MiB, and a source of S = 30 tokens adds 720 KiB" in text
    per_token = 2 * 80 * 8 * 128 * 2  # Llama 3 70B: 80 layers, 8 key/value heads of 128, bfloat16
    full = 2 * 80 * 64 * 128 * 2  # a key and value head for each of the 64 query heads
    assert f"2 · 80 · {spaced(8 * 128)} · 2 bytes = {size(per_token)} per token" in text
    assert f"{size(per_token * 131072)} for one sequence of 128K ({spaced(131072)}) tokens" in text
    assert f"it would be {size(full)} per token and {size(full * 131072)}" in text
    assert 70e9 * 2 / 1e9 == 140 and "70 billion weights take about 140 GB" in text
    # The other numbers on the page are quoted from the papers, and the page says so.
    assert "worked out from the formulas given with them, and those quoted from the papers" in text


def test_the_family_trees_llama_widths():
    text = page("family_tree.md")
    d = 4096
    two_thirds = math.ceil(2 / 3 * 4 * d / 256) * 256  # LLaMA's code rounds up to a multiple of 256
    assert two_thirds == 11008 and f"({spaced(two_thirds)} for D = {spaced(d)})" in text
    assert 3 * (2 / 3 * 4) == 2 * 4 == 8 and "as many weights as the paper's two, 8D²" in text
    assert 14336 == 3.5 * d and f"{spaced(14336)} = 3.5 · D for its 8B model (D = {spaced(d)})" in text
    assert 3 * 3.5 == 10.5 and "three matrices of 10.5D² in all" in text
    assert "3.5 · D in its 8B model" in page("glossary.md")


def test_the_family_tree_puts_gpt_four_months_before_bert():
    text = page("family_tree.md")
    months = {"GPT": ("June", 6), "BERT": ("October", 10)}
    assert months["BERT"][1] - months["GPT"][1] == 4
    assert "The first GPT (June 2018) came four months before BERT (October 2018)." in text
    table = [line for line in (BOOK / "family_tree.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("| ")]
    rows = [line.split(" (")[0].lstrip("| ") for line in table]
    assert rows.index("GPT") < rows.index("BERT")


def glossary_names() -> list[str]:
    """The bold Korean name that opens each glossary definition."""
    return re.findall(r"^  \*\*(.+?)\*\*\.", (BOOK / "glossary.md").read_text(encoding="utf-8"), re.M)


def test_the_glossary_names_terms_one_way():
    names = glossary_names()
    assert len(names) > 60
    for name in names:
        # 기울기 is the name, 그래디언트 the alternative in brackets
        if "기울기" in name and "그래디언트" in name:
            assert name.index("기울기") < name.index("그래디언트"), name
        # a loanword prefix is written closed up (멀티헤드, 멀티쿼리, 그룹쿼리), then a space before 어텐션
        assert not re.search(r"(멀티|그룹) (헤드|쿼리)", name), name
    assert "멀티쿼리 어텐션 (MQA)" in names and "그룹쿼리 어텐션 (GQA)" in names
    assert "SwiGLU 피드포워드 블록" in names  # a block, not an activation function
