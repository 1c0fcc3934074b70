"""Every number the prose states is the number its source gives today.

The registry is ``tests/book/page_numbers/`` (its ``framework.py`` says how it
is written): one module per page, each listing the page's numbers with their
sources (the seed sweep, a stored output of the notebook, the package) and the
numbers that nothing measures, each with its reason. These tests fail when

* a source no longer renders the registered text (the data changed: change the
  prose and the registered text to what the source gives, and the Korean);
* the registered text is not on its page (the prose changed);
* the Korean catalogue's message holding the text is fuzzy, untranslated, or
  lacks one of its numbers;
* the page has a measured-looking number (a percentage, a decimal, a range,
  "N of M", a time, a size, a ratio, a power of ten) that no registered or
  exempt text covers.
"""

from __future__ import annotations

import json

import pytest
from page_numbers import framework as fw

NUMBERS = fw.entries(fw.Number)
EXEMPT = fw.entries(fw.Exempt)
PAGES = [(module, page) for module in fw.present_modules() for page in fw.pages_of(module)]


def test_every_page_has_its_registry():
    missing = [name for name in fw.MODULES if name not in fw.present_modules()]
    assert not missing, f"no registry module for {missing} in tests/book/page_numbers/"


@pytest.mark.parametrize("entry", NUMBERS, ids=[e.id for e in NUMBERS])
def test_the_source_gives_the_registered_text(entry):
    number = entry.item
    rendered = number.source.render(entry.page)
    assert rendered == number.text, (
        f"page {entry.page}: the prose says {number.text!r}, but its source ({number.source.describe()}) "
        f"gives {rendered!r} today: write {rendered!r} in the prose and in {entry.module}.py "
        "(the Korean message then needs the new number too)"
    )


@pytest.mark.parametrize("entry", NUMBERS + EXEMPT, ids=[e.id for e in NUMBERS + EXEMPT])
def test_the_registered_text_is_on_its_page(entry):
    assert fw.normalize(entry.item.text) in fw.markdown(entry.page), (
        f"{entry.module}.py registers {entry.item.text!r}, which page {entry.page} "
        f"({fw.page_path(entry.page).relative_to(fw.ROOT)}) no longer says"
    )


@pytest.mark.parametrize("entry", NUMBERS, ids=[e.id for e in NUMBERS])
def test_the_korean_message_carries_the_same_number(entry):
    problem = fw.korean_problem(entry.page, entry.item.text)
    assert problem is None, problem


@pytest.mark.parametrize("entry", EXEMPT, ids=[e.id for e in EXEMPT])
def test_an_exempt_number_says_why(entry):
    assert len(entry.item.reason.split()) >= 2, f"{entry.id}: give a reason, not {entry.item.reason!r}"


@pytest.mark.parametrize(("module", "page"), PAGES, ids=[f"{m}:{p}" for m, p in PAGES])
def test_every_measured_number_is_registered(module, page):
    texts = [e.item.text for e in NUMBERS + EXEMPT if e.page == page]
    missing = fw.uncovered(page, texts)
    assert not missing, (
        f"page {page}: {len(missing)} measured-looking numbers that {module}.py neither registers "
        "(NUMBERS, with their source) nor exempts (EXEMPT, with a reason):\n" + "\n".join(missing)
    )


# --------------------------------------------------------------------------- #
# The framework itself                                                          #
# --------------------------------------------------------------------------- #


def test_the_scanner_finds_every_kind_and_skips_code_math_and_chapters():
    text = fw.normalize(
        "It got 35–46 % (seed 4: 0.54), 50 of 76 errors, from −18 to +1, in 11 s, a 2.5 MiB file, "
        "9.18× faster, a drift of 10⁻⁷, at most 1.9, UTF-8 bytes on P100s. Chapters 1 to 6 and Chapter 8 use `d_model = 0.1` and $x = 2.5$ "
        "([link](https://example.org/a-1.5-b))."
    )
    found = [match for _, _, match in fw.scan(text)]
    assert found == ["35–46 %", "0.54", "50 of 76", "−18 to +1", "11 s", "2.5 MiB", "9.18×", "10⁻⁷", "1.9"]


def test_numbers_are_written_as_the_book_writes_them():
    assert fw.format_number(-0.183, ".0f", 100) == "−18"
    assert fw.format_number(0.01, "+.0f", 100) == "+1"
    assert fw.format_number(-0.0004, ".2f") == "0.00"  # never −0.00
    assert fw.format_number(262144, ",") == "262 144"
    assert fw.digits("from −18 to +1, 10⁻⁷, 8 000 and 2.5 %") == ["18", "1", "10⁻⁷", "8", "000", "2.5"]


@pytest.fixture
def fake_book(tmp_path, monkeypatch):
    """A notebook 99_fake with one paragraph and one output, a catalogue, two sweep files."""
    notebooks, catalogues = tmp_path / "notebooks", tmp_path / "locales"
    (catalogues / "notebooks").mkdir(parents=True)
    notebooks.mkdir()
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "Over ten runs it got\n35–46 %, here 97 %."},
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "print(x)",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "same_verb split 97.0%\n"}]},
    ]
    (notebooks / "99_fake.ipynb").write_text(json.dumps({"cells": cells}), encoding="utf-8")
    runs = {"default": [0.35, 0.40], "avx2": [0.4633, 0.41]}
    files = {}
    for name, values in runs.items():
        files[name] = tmp_path / f"{name}.json"
        sweep = {"seeds": [0, 1], "runs": {str(s): {"numbers": {"k": v}} for s, v in enumerate(values)}}
        files[name].write_text(json.dumps(sweep), encoding="utf-8")
    monkeypatch.setattr(fw, "NOTEBOOKS", notebooks)
    monkeypatch.setattr(fw, "CATALOGUES", catalogues)
    monkeypatch.setattr(fw, "SWEEP_FILES", files)
    fw._sweep_file.cache_clear()
    fw._notebook.cache_clear()
    yield catalogues / "notebooks" / "99_fake.po"
    fw._sweep_file.cache_clear()
    fw._notebook.cache_clear()


def _catalogue(path, msgstr, fuzzy=False):
    flag = "#, fuzzy\n" if fuzzy else ""
    path.write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=utf-8\\n"\n\n'
        f'{flag}msgid "Over ten runs it got 35–46 %, here 97 %."\nmsgstr "{msgstr}"\n',
        encoding="utf-8",
    )


def test_sources_render_from_the_sweep_and_the_stored_outputs(fake_book):
    assert fw.sweep("k", scale=100, template="{} %").render("99") == "35–46 %"
    assert fw.sweep("k", files="default", scale=100, template="{} %").render("99") == "35–40 %"
    assert fw.sweep("k", "mean", fmt=".3f").render("99") == "0.406"
    assert fw.sweep("k", seeds=[1], scale=100).render("99") == "40–41"
    assert fw.output(r"split (\d+\.\d)%", fmt=".0f", template="{} %").render("99") == "97 %"
    assert fw.package(lambda: 0.97, fmt=".0f", scale=100).render("99") == "97"
    with pytest.raises(LookupError, match="no stored output"):
        fw.output(r"nothing (\d+)").render("99")
    assert fw.uncovered("99", ["35–46 %"]) and fw.uncovered("99", ["35–46 %", "97 %"]) == []


def test_the_korean_check_names_a_fuzzy_message_and_a_missing_number(fake_book):
    _catalogue(fake_book, "열 번의 실행에서 35–46 %, 여기서는 97 %입니다.")
    assert fw.korean_problem("99", "35–46 %") is None
    _catalogue(fake_book, "열 번의 실행에서 35–45 %, 여기서는 97 %입니다.")
    assert "lacks ['46']" in fw.korean_problem("99", "35–46 %")
    _catalogue(fake_book, "열 번의 실행에서 35–46 %, 여기서는 97 %입니다.", fuzzy=True)
    assert "is fuzzy" in fw.korean_problem("99", "35–46 %")
    assert "no message" in fw.korean_problem("99", "35–47 %")


def test_orders_of_magnitude_and_several_groups(fake_book):
    assert fw.format_number(3.4e-4, "10^") == "10⁻⁴" and fw.format_number(1.2e-7, "10^") == "10⁻⁷"
    assert fw.format_number(1e-5, "10^") == "10⁻⁵" and fw.format_number(250, "10^") == "10²"
    assert fw.format_number(1.234e-7, ".1e·") == "1.2 · 10⁻⁷" and fw.format_number(3e4, ".0e·") == "3 · 10⁴"
    assert fw.sweep("k", fmt="10^", sep=" to ").render("99") == "10⁻¹"
    assert fw.output(r"(\w+) split (\d+)", group=(1, 2), template="{}: {}").render("99") == "same_verb: 97"
    assert fw.output(r"split (\d+\.\d)", stat="range", fmt=".0f", template="{}–{}").render("99") == "97–97"


def _messages(path, pairs):
    """A catalogue of (English, Korean) messages at ``path``."""
    import polib

    catalogue = polib.POFile()
    catalogue.metadata = {"Content-Type": "text/plain; charset=utf-8"}
    for msgid, msgstr in pairs:
        catalogue.append(polib.POEntry(msgid=msgid, msgstr=msgstr))
    catalogue.save(str(path))


def test_the_korean_check_matches_whole_numbers(fake_book):
    """A registered "3×" is not held by a message's "3.3×", nor "8 MiB" by its "48 MiB"."""
    _messages(fake_book, [
        ("Batching is 3.3× faster; the cache takes 48 MiB.", "배치로 하면 3.3배 빠르고, 캐시는 48 MiB를 차지합니다."),
        ("The cache is 3× faster and takes 8 MiB.", "캐시를 쓰면 3배 빠르고, 캐시는 8 MiB를 차지합니다."),
    ])
    assert fw.korean_problem("99", "3×") is None
    assert fw.korean_problem("99", "8 MiB") is None
    _messages(fake_book, [("The cache is 3× faster.", "캐시를 쓰면 3.3배 빠릅니다.")])
    assert "lacks ['3']" in fw.korean_problem("99", "3×")
    assert "no message" in fw.korean_problem("99", "3.3×")
    assert fw.holds_number_text("only 3× here", "3×") and not fw.holds_number_text("runs 3.3× faster", "3×")
    assert not fw.holds_number_text("at 0.54", "0.5") and not fw.holds_number_text("1.5 times", "5 times")


def test_the_korean_check_reads_numbers_as_korean_writes_them(fake_book):
    """18.9 million is 1,890만; 214.3 million is 2억 1430만; 1 050 624 may be 1,050,624."""
    _messages(fake_book, [
        ("The encoder has 18.9 million parameters.", "인코더의 파라미터는 1,890만 개입니다."),
        ("They have 63.1 and 214.3 million parameters.", "파라미터는 각각 6310만 개와 2억 1430만 개입니다."),
        ("It counts its 1 050 624 numbers.", "수 1,050,624개를 셉니다."),
        ("About 40 900 tokens, 1.9 million fewer.", "토큰 약 40,900개, 190만 개 적습니다."),
    ])
    for text in ["18.9 million parameters", "63.1 and 214.3 million", "its 1 050 624", "About 40 900 tokens", "1.9 million"]:
        assert fw.korean_problem("99", text) is None, text
    _messages(fake_book, [("The encoder has 18.9 million parameters.", "인코더의 파라미터는 1,800만 개입니다.")])
    assert "lacks ['18.9']" in fw.korean_problem("99", "18.9 million")
    assert fw.korean_values("2억 1430만 개, 0.54") >= {214_300_000, 0.54}
    assert fw.korean_lacks("a drift of 1.2 · 10⁻⁷", "1.2 · 10⁻⁸의 차이") == ["10⁻⁷"]
