"""The Korean edition: its catalogues, its notebooks, its built site and its search.

The English sources are the only sources: ``locales/ko/LC_MESSAGES/`` holds a
gettext catalogue per page (CONTRIBUTING.md, "The Korean edition"). These tests fail
when the English changes and the Korean has not followed (a message missing,
fuzzy or obsolete, a Korean notebook out of step), when a translation loses
the page's markup or its glossary terms, and when the built Korean site lacks a
page, its links to the English one, Korean prose or a working search.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
import yaml

try:
    from . import book_support as bs
except ImportError:  # run as a top-level module (rootdir without __init__.py)
    import book_support as bs

ROOT = bs.REPO_ROOT
LOCALE = ROOT / "locales" / "ko" / "LC_MESSAGES"
KOREAN_HTML = bs.HTML_DIR / "ko"
HANGUL = re.compile(r"[\uac00-\ud7a3]")

sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import check_translation
import editions
import translate_notebooks

#: The theme's catalogues: written by hand, not extracted from the pages.
THEME_CATALOGUES = {"sphinx.po", "booktheme.po"}


def page_catalogues() -> list[Path]:
    return sorted(p for p in LOCALE.rglob("*.po") if p.name not in THEME_CATALOGUES)


# --------------------------------------------------------------------------- #
# The catalogues                                                               #
# --------------------------------------------------------------------------- #


def test_every_page_has_a_catalogue():
    pages = {f"{page}.po" for page in bs.toc_files()}
    have = {p.relative_to(LOCALE).as_posix() for p in page_catalogues()}
    assert pages == have


def test_every_message_is_translated_and_keeps_its_markup():
    problems = [line for path in sorted(LOCALE.rglob("*.po")) for line in check_translation.check_file(path)]
    assert not problems, "\n".join(problems[:40]) + f"\n({len(problems)} in all)"


def test_the_checker_catches_what_it_should():
    def problems(msgid: str, msgstr: str, flags=()) -> list[str]:
        return check_translation.check_entry(polib.POEntry(msgid=msgid, msgstr=msgstr, flags=list(flags)))

    link = "[attention](https://example.org/glossary.html#term-attention)"
    assert problems(f"Use {link} here.", "여기에서 [어텐션](https://example.org/x.html)을 씁니다.")
    assert problems("The `mask` is boolean.", "마스크는 불리언입니다.")
    assert problems("{term}`padding mask` first.", "{term}`패딩 마스크 <padding>` 먼저.")
    assert problems('The **"pad"** token.', '**"pad"**는 토큰입니다.')
    assert problems("The model learns.", "The model learns.")
    assert problems("The model learns.", "")
    assert problems("The model learns.", "모델이 배웁니다.", flags=["fuzzy"])
    assert problems("$x^2$ grows.", "x^2가 커집니다.")
    assert problems("1. Scaled attention", "1. 스케일드 어텐션")
    assert not problems(f"Use {link} here.", f"여기에서 {link.replace('[attention]', '[어텐션]')}을 씁니다.")
    assert not problems("{term}`padding mask` first.", "{term}`패딩 마스크 <padding mask>` 먼저.")
    assert not problems("`d_model`", "`d_model`")
    assert not problems("1. Scaled attention", "1\\. 스케일드 어텐션")
    # a symbol inside a bold's ** with a Hangul letter outside it (CommonMark 0.31: JupyterLab, Colab)
    assert problems("**−∞** is exact.", "**−∞**는 정확합니다.")
    assert problems("It is **∞ wide**.", "폭이**∞**입니다.")
    assert not problems("**−1e9** is popular.", "**−1e9**는 흔합니다.")  # a digit before the **
    assert not problems("**−∞** is exact.", "**−∞** 자체는 정확합니다.")  # a space after it
    # as many cross-references as the English: Sphinx warns (and -W fails) otherwise
    english = "A :class:`KVCache` holds a :class:`LayerCache` per layer."
    assert problems(english, ":class:`KVCache`\\ 는 :class:`LayerCache`\\ 를 담고, :class:`LayerCache`\\ 는 층마다 있습니다.")
    assert not problems(english, ":class:`KVCache`\\ 는 층마다 :class:`LayerCache`\\ 를 하나씩 담습니다.")
    assert problems("See {term}`head` and {term}`heads <head>`.", "{term}`헤드 <head>`를 보십시오.")


def _catalogue(tmp_path: Path, pairs: list[tuple[str, str]], name: str = "page.po") -> Path:
    """A small catalogue of (English, Korean) messages, written as sphinx-intl writes one."""
    catalogue = polib.POFile()
    catalogue.metadata = {"Content-Type": "text/plain; charset=utf-8", "Language": "ko"}
    for msgid, msgstr in pairs:
        catalogue.append(polib.POEntry(msgid=msgid, msgstr=msgstr))
    path = tmp_path / name
    catalogue.save(str(path))
    return path


#: One message per rule of locales/README.md that the checker enforces: the
#: English, a Korean the edition retired, and the Korean it writes instead.
RETIRED_AND_FIXED = {
    "label": ("Label smoothing caps the confidence.", "라벨 스무딩은 확신도에 상한을 둡니다.", "레이블 스무딩은 확신도에 상한을 둡니다."),
    "polarity": ("Masks have the opposite polarity.", "마스크의 극성이 반대입니다.", "마스크의 True/False 규약이 반대입니다."),
    "draw": ("It runs over 8 draws.", "무작위 추출 8번에 걸쳐 실행합니다.", "시행 8번에 걸쳐 실행합니다."),
    "stem": ("Words split as *stem | particle*.", "*어간 | 조사*로 나뉜 단어입니다.", "*명사 | 조사*로 나뉜 단어입니다."),
    "gather": ("The rows are gathered in place.", "행을 제자리에서 모읍니다.", "행을 골라(gather) 제자리에 다시 씁니다."),
    "our": ("Copy our weights.", "우리 가중치를 복사합니다.", "직접 만든 가중치를 복사합니다."),
    "worse": ("And, worse, it learns padding.", "더 나쁘게는 패딩을 배웁니다.", "더 큰 문제는 패딩을 배운다는 점입니다."),
    "below": ("Less below n = d.", "n = d보다 작으면 더 적습니다.", "n < d이면 더 적습니다."),
    "post-LN": ("Post-LN needs warm-up.", "Post-LN은 워밍업이 필요합니다.", "post-LN은 워밍업이 필요합니다."),
    "offset": ("The offset between two positions.", "두 위치 사이의 간격입니다.", "두 위치 사이의 오프셋입니다."),
    "dot-product": ("It beats dot-product attention.", "내적 어텐션보다 낫습니다.", "닷 프로덕트 어텐션보다 낫습니다."),
    "quotes": ('The "Add & Norm" box.', "“Add & Norm” 상자입니다.", '"Add & Norm" 상자입니다.'),
    "dash": ("English–German pairs.", "영어–독일어 쌍입니다.", "영어-독일어 쌍입니다."),
    "nested": (
        "Dropout on the weights (after the softmax).",
        "가중치에 드롭아웃을 둡니다(소프트맥스(softmax) 뒤).",
        "가중치에 드롭아웃을 둡니다(소프트맥스 뒤).",
    ),
    "particle after a digit": ("Llama 3 uses it.", "Llama 3는 이를 씁니다.", "Llama 3은 이를 씁니다."),
    "particle after an acronym": ("LN is applied.", "LN는 적용됩니다.", "LN은 적용됩니다."),
    # CommonMark 0.31 (JupyterLab, Colab) counts a symbol as punctuation: the
    # closing ** after ∞ and before 는 does not close, though markdown-it-py 3 closes it
    "bold after a symbol": ("**−∞** is exact.", "**−∞**는 정확합니다.", "**−∞**(음의 무한대)는 정확합니다."),
}


@pytest.mark.parametrize("rule", RETIRED_AND_FIXED)
def test_the_checker_fails_on_each_retired_rendering(tmp_path, rule):
    english, retired, fixed = RETIRED_AND_FIXED[rule]
    assert check_translation.check_file(_catalogue(tmp_path, [(english, retired)])), rule
    assert not check_translation.check_file(_catalogue(tmp_path, [(english, fixed)])), rule


def test_the_checker_lets_through_what_is_right():
    def problems(msgid: str, msgstr: str) -> list[str]:
        return check_translation.check_entry(polib.POEntry(msgid=msgid, msgstr=msgstr))

    # the glossary's alias, Korean the English quotes, and words that only look retired
    assert not problems("**레이블 스무딩 (라벨 스무딩)**. Smoothing.", "타깃을 고르게 합니다. 라벨 스무딩이라고도 합니다.")
    assert not problems("우리가 모자를 썼다 means we wore hats.", '우리가 모자를 썼다는 "we wore hats"입니다.')
    assert not problems("Feature extraction.", "특징 추출입니다.")  # no random draw in the English
    assert not problems("Collect the tokens.", "토큰을 모읍니다.")  # no gather in the English
    assert not problems("The stem 먹- takes endings.", "어간 먹-에는 어미가 붙습니다.")
    assert not problems("A batch with a longer sentence.", "더 긴 문장과 한 배치에 들어간 경우입니다.")  # 들어간
    assert not problems("The 2–4 range.", "2–4 범위입니다.")  # an en dash between numbers
    assert not problems("scores (softmax(x) / T)", "점수(softmax(x) / T)")  # math nests its parentheses
    assert not problems("the softmax (after the scaling)", "소프트맥스(softmax)는 스케일링 뒤에 옵니다.")


@pytest.mark.parametrize(
    ("korean", "right"),
    [
        # digits: 영 일 이 삼 사 오 육 칠 팔 구 (받침 after 0, 1, 3, 6, 7, 8; ㄹ after 1, 7, 8)
        *[
            (f"값 {digit}{particle}", particle in right)
            for digit, right in {
                "0": ["은", "이", "을", "과", "으로"], "1": ["은", "이", "을", "과", "로"], "2": ["는", "가", "를", "와", "로"],
                "3": ["은", "이", "을", "과", "으로"], "4": ["는", "가", "를", "와", "로"], "5": ["는", "가", "를", "와", "로"],
                "6": ["은", "이", "을", "과", "으로"], "7": ["은", "이", "을", "과", "로"], "8": ["은", "이", "을", "과", "로"],
                "9": ["는", "가", "를", "와", "로"],
            }.items()
            for particle in ["은", "는", "이", "가", "을", "를", "과", "와", "으로", "로"]
        ],
        ("10은 크다", True), ("512는 크다", True), ("512은 크다", False), ("1 024는 크다", True), ("2 048은 크다", True),
        # single letters and acronyms by their letter names: 엘, 엠, 엔, 알 end in a consonant
        ("L은 길이", True), ("L로 나눕니다", True), ("L으로 나눕니다", False), ("N으로 나눕니다", True),
        ("M은", True), ("R로", True), ("d_k로 나눕니다", True), ("d_k으로", False), ("V를 씁니다", True),
        ("LN은", True), ("LN는", False), ("post-LN은", True), ("GPU는", True), ("GPU은", False),
        ("RNN은", True), ("BPE를", True), ("BPE을", False), ("FLOP은", True), ("Adam은", True), ("Adam는", True),
        # parentheses: a gloss agrees with the Korean word, notation with what it holds, a citation with its year
        ("소프트맥스(softmax)는", True), ("어텐션(attention)를", False), ("O(n)은", True), ("O(n)는", False),
        ("layer1(x)를", True), ("T5(Raffel et al., 2020)는", True), ("Elhage et al. (2021)은", True),
        ("Olsson et al. (2022)는", True), ("Vaswani et al. (2017)는", False), ("{cite:t}`vaswani2017attention`은", True),
        ("{cite:t}`vaswani2017attention`는", False), ("[Elhage et al. (2021)](https://x.org/r.html#c)은", True),
        ("**LN**는", False), ("`x`는", True), ("$N$은", True), ("$N$는", False), ("각 헤드는 (B, H, L, d_k)를", True),
        ("3가지 방법", True), ("3이면 됩니다", True),  # a counter and a copula, not particles
    ],
)
def test_particles_agree_with_how_they_are_read(korean, right):
    assert (not check_translation.particle_problems(korean)) == right, check_translation.particle_problems(korean)


@pytest.fixture(scope="module")
def built():
    book = bs.build_book()
    assert book.returncode == 0, book.log[-6000:]
    return book


def test_catalogues_hold_exactly_the_english_messages(built):
    """Every message of every page is in its catalogue, and nothing else: when
    the English changes, this names what to translate (sphinx-intl update)."""
    problems = []
    for pot in sorted(bs.GETTEXT_DIR.rglob("*.pot")):
        relative = pot.relative_to(bs.GETTEXT_DIR).with_suffix(".po")
        po = LOCALE / relative
        english = {e.msgid for e in polib.pofile(str(pot))}
        korean = {e.msgid for e in polib.pofile(str(po)) if not e.obsolete} if po.exists() else set()
        problems += [f"{relative}: new English message, not in the catalogue: {m[:90]!r}" for m in sorted(english - korean)]
        problems += [f"{relative}: no longer in the English (obsolete): {m[:90]!r}" for m in sorted(korean - english)]
    assert not problems, "\n".join(problems[:40]) + "\n(run `sphinx-intl update -p _build/gettext -l ko -d locales`)"


# --------------------------------------------------------------------------- #
# The glossary's terms                                                         #
# --------------------------------------------------------------------------- #


#: Words a Korean name may drop in running text: 디코더 전용 (모델), GELU
#: (활성화 함수), (위치별) 피드포워드 (신경망), 상대 위치 (표현), 원-핫 (벡터).
GENERIC_WORDS = re.compile(r"^위치별 | (모델|구조|함수|활성화 함수|블록|표현|점수|옵티마이저|신경망|피드포워드 블록|벡터)$")


def glossary_terms() -> dict[str, list[str]]:
    """English term -> its Korean names (the bold line of its definition), each
    also without the generic words it may drop in running text."""
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    body = text.split("```{glossary}", 1)[1]
    terms = {}
    for english, bold in re.findall(r"^(\S[^\n]*)\n  \*\*([^*]+)\*\*", body, re.MULTILINE):
        names = {n.strip() for n in re.split(r"[()/]", bold) if n.strip()}
        for name in list(names):
            while (shorter := GENERIC_WORDS.sub("", name)) != name and shorter:
                names.add(shorter)
                name = shorter
            if name.endswith("팅"):  # the verb of a loanword: 브로드캐스팅 -> 브로드캐스트됩니다
                names.add(name[:-1] + "트")
        terms[english.strip()] = sorted(names)
    return terms


#: English terms too common in other senses to check in running text.
AMBIGUOUS = {
    "value", "key", "query",  # "the key point", "a query of the grammar"
    "head",  # "ahead" is excluded by the word boundary; "head of a list" is not
    "memory",  # GPU memory as well as the encoder's output
    "hypothesis", "parameter", "temperature", "inference", "token",
}


def test_chapters_use_the_glossary_terms():
    """A message that uses a glossary term (two words or more, or a word used
    in one sense only) uses one of its Korean names in the translation."""
    terms = {e: k for e, k in glossary_terms().items() if e not in AMBIGUOUS}
    missing = []
    for path in page_catalogues():
        if path.name == "glossary.po":
            continue
        for entry in polib.pofile(str(path)):
            if entry.obsolete or not entry.msgstr:
                continue
            prose = check_translation._strip_markup(re.sub(r"\b\w+\([^)]*\)", " ", entry.msgid))
            # quoted English (an error message, a table's label), the paper's
            # title, a tensor named with its shape, "logits (B, T, V)", and
            # function notation, "softmax(logits / T)"
            prose = re.sub(r'"[^"]*"|Attention Is All You Need|\b\w+ \([A-Z](?:, [A-Z])*\)', " ", prose)
            # a docstring's argument names: "**batch** -- ...", "logits: ``(B, T, V)``"
            prose = re.sub(r"^\*\*[^*]+\*\* --|^[\w, ]+: ", " ", prose).lower()
            for english, names in terms.items():
                if re.search(rf"(?<![\w-]){re.escape(english.lower())}s?(?![\w-])", prose):
                    korean = entry.msgstr.replace(" ", "").casefold()
                    if not any(name.replace(" ", "").casefold() in korean for name in names):
                        missing.append(f"{path.name}: {english!r} -> one of {names}: {entry.msgid[:70]!r}")
    assert not missing, "\n".join(missing[:40]) + f"\n({len(missing)} in all)"


# --------------------------------------------------------------------------- #
# The Korean notebooks                                                         #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("chapter", bs.chapter_notebooks(), ids=lambda p: p.stem)
def test_korean_notebook_is_in_step(chapter):
    text, missing = translate_notebooks.build(chapter)
    assert not missing, f"{chapter.name}: Markdown with no translation: {missing[:5]}"
    korean = translate_notebooks.KOREAN / chapter.name
    assert korean.exists() and korean.read_text(encoding="utf-8") == text, (
        f"{korean.relative_to(ROOT)} is not what scripts/translate_notebooks.py makes "
        "from the English notebook and the catalogue: run it"
    )


@pytest.mark.parametrize("chapter", bs.chapter_notebooks(), ids=lambda p: p.stem)
def test_korean_notebook_has_the_same_code_and_outputs(chapter):
    english = json.loads(chapter.read_text(encoding="utf-8"))
    korean = json.loads((translate_notebooks.KOREAN / chapter.name).read_text(encoding="utf-8"))
    assert korean["metadata"] == english["metadata"]
    assert [c["cell_type"] for c in korean["cells"]] == [c["cell_type"] for c in english["cells"]]
    for k, e in zip(korean["cells"], english["cells"]):
        if e["cell_type"] == "code":
            assert k["source"] == e["source"] and k["outputs"] == e["outputs"]
        else:
            assert HANGUL.search("".join(k["source"])), "".join(e["source"])[:80]
    links = re.findall(r"\]\((https://[^)]+)\)", "".join("".join(c["source"]) for c in korean["cells"]))
    site = bs.read_config()["html"]["baseurl"]
    assert links and all(not link.startswith(site) or link.startswith(site + "ko/") for link in links)


# --------------------------------------------------------------------------- #
# The built site                                                               #
# --------------------------------------------------------------------------- #


def edition_link(page: Path) -> dict:
    html = page.read_text(encoding="utf-8")
    match = re.search(r'<a class="btn btn-sm edition-switch"([^>]*)>([^<]*)</a>', html)
    assert match, f"{page}: no link to the other edition"
    return dict(re.findall(r'(\w+)="([^"]*)"', match.group(1))) | {"text": match.group(2)}


@pytest.mark.parametrize("page", bs.toc_files())
def test_every_page_has_its_korean_twin_linked_both_ways(built, page):
    english, korean = bs.HTML_DIR / f"{page}.html", KOREAN_HTML / f"{page}.html"
    assert korean.exists(), f"no Korean page for {page}"
    assert re.search(r'<html[^>]*\blang="ko"', korean.read_text(encoding="utf-8"))
    assert re.search(r'<html[^>]*\blang="en"', english.read_text(encoding="utf-8"))
    to_korean, to_english = edition_link(english), edition_link(korean)
    assert (to_korean["hreflang"], to_korean["lang"], to_korean["text"]) == ("ko", "ko", "한국어")
    assert (to_english["hreflang"], to_english["lang"], to_english["text"]) == ("en", "en", "English")
    assert (english.parent / to_korean["href"]).resolve() == korean.resolve()
    assert (korean.parent / to_english["href"]).resolve() == english.resolve()


class _Paragraphs:
    """The prose paragraphs of a page's article: not code, outputs, signatures
    or bibliography entries."""

    SKIP_CLASSES = {"cell_output", "output", "highlight", "citation", "sig"}

    def __init__(self, html: str):
        from html.parser import HTMLParser

        paragraphs: list[str] = []
        stack: list[bool] = []
        current: list[str] | None = None
        skipping = 0

        class Parser(HTMLParser):
            def handle_starttag(self, tag, attrs):
                nonlocal current, skipping
                classes = set((dict(attrs).get("class") or "").split())
                skip = tag in {"pre", "script", "style", "button"} or bool(classes & _Paragraphs.SKIP_CLASSES)
                stack.append((tag, skip))
                skipping += skip
                if tag == "p" and not skipping:
                    current = []

            def handle_endtag(self, tag):
                nonlocal current, skipping
                while stack:
                    name, skip = stack.pop()
                    skipping -= skip
                    if name == "p" and current is not None:
                        paragraphs.append("".join(current).strip())
                        current = None
                    if name == tag:
                        break

            def handle_data(self, data):
                if current is not None and not skipping:
                    current.append(data)

        start, end = html.find("<article"), html.find("</article>")
        Parser().feed(html[start:end])
        self.all = [p for p in paragraphs if re.search(r"[A-Za-z]{3,}", p) or HANGUL.search(p)]
        self.english = [p for p in self.all if not HANGUL.search(p) and len(re.findall(r"[A-Za-z]{3,}", p)) >= 3]


def test_korean_pages_are_in_korean(built):
    """At most 5 % of the Korean pages' prose paragraphs are left in English."""
    total, english = 0, []
    for page in bs.toc_files():
        paragraphs = _Paragraphs((KOREAN_HTML / f"{page}.html").read_text(encoding="utf-8"))
        total += len(paragraphs.all)
        english += [f"{page}: {p[:80]!r}" for p in paragraphs.english]
    share = len(english) / total
    assert total > 1000
    assert share <= 0.05, f"{share:.1%} of {total} paragraphs in English:\n" + "\n".join(english[:30])


def test_korean_pages_show_no_markup_as_text(built):
    broken = []
    for page in bs.toc_files():
        text = re.sub(r"<(pre|script|style|code|dt)\b.*?</\1>", " ", (KOREAN_HTML / f"{page}.html").read_text(encoding="utf-8"), flags=re.DOTALL)
        text = re.sub(r"<[^>]+>", " ", text)
        broken += [f"{page}: {m!r}" for m in re.findall(r".{0,30}(?:\*\*(?!kwargs)|\{term\}|\{doc\}|\{cite).{0,30}", text)]
    assert not broken, "\n".join(broken[:20])


def test_korean_chapters_open_korean_notebooks(built):
    config = bs.read_config()
    for notebook in bs.chapter_notebooks():
        page = KOREAN_HTML / notebook.relative_to(ROOT).with_suffix(".html")
        html = page.read_text(encoding="utf-8")
        korean = translate_notebooks.KOREAN / notebook.name
        assert bs.colab_url(config, korean) in html, f"{page.name}: Colab button does not open {korean.name}"
        served = KOREAN_HTML / "_sources" / "notebooks" / notebook.name
        assert served.read_bytes() == korean.read_bytes(), f"{page.name}: the download button gives the English notebook"


def test_glossary_links_reach_the_korean_glossary(built):
    """The chapters' links into the glossary stay on the Korean site and land on a term."""
    glossary = (KOREAN_HTML / "book" / "glossary.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<dt id="(term-[^"]+)"', glossary))
    assert len(anchors) > 100
    # the first term of each entry (an entry may have two: GQA, grouped-query attention)
    entries = [chunk for chunk in glossary.split("</dd>") if '<dt id="term-' in chunk]
    terms = [re.search(r'<dt id="term-[^"]+">(.*?)<a class="headerlink"', e, re.DOTALL).group(1) for e in entries]
    names = [re.sub(r"<[^>]+>", "", t).strip() for t in terms]
    hangul = [n for n in names if HANGUL.match(n)]
    assert hangul == sorted(hangul, key=str.casefold), "the Korean glossary is not in 가나다 order"
    html = (KOREAN_HTML / "notebooks" / "01_attention.html").read_text(encoding="utf-8")
    links = re.findall(r'href="\.\./book/glossary\.html#(term-[^"]+)"', html)
    assert links and set(links) <= anchors


# --------------------------------------------------------------------------- #
# Korean search                                                                #
# --------------------------------------------------------------------------- #


def search_index() -> dict:
    text = (KOREAN_HTML / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def search(index: dict, query: str) -> set[str]:
    """The pages that Sphinx's search finds for a query: every word's stem must match."""
    stemmer = editions.KoreanSearch({})
    found = None
    for word in re.findall(r"\w+", query.lower()):
        stem = stemmer.stem(word)
        pages = set()
        for field in ("terms", "titleterms"):
            hit = index[field].get(stem)
            if hit is not None:
                pages |= {hit} if isinstance(hit, int) else set(hit)
        found = pages if found is None else found & pages
    return {index["docnames"][i] for i in (found or set())}


@pytest.mark.parametrize(
    ("query", "page"),
    [
        ("어텐션", "notebooks/01_attention"),
        ("어텐션을", "notebooks/01_attention"),
        ("멀티헤드 어텐션", "notebooks/02_multi_head_attention"),
        ("위치 인코딩", "notebooks/03_positional_encoding"),
        ("층 정규화", "notebooks/04_layer_norm_and_residuals"),
        ("빔 서치", "notebooks/08_beam_search"),
        ("레이블 스무딩", "notebooks/07_training"),
        ("서브워드", "notebooks/09_beyond_the_toy"),
    ],
)
def test_korean_search_finds_a_term_with_its_particles(built, query, page):
    assert page in search(search_index(), query)


def test_korean_stems():
    stem = editions.korean_stem
    assert {stem(w) for w in ["어텐션", "어텐션을", "어텐션의", "어텐션은", "어텐션에서는"]} == {"어텐션"}
    assert stem("디코더는") == "디코더" and stem("모델이") == "모델"
    assert stem("정의") == "정의" and stem("결과") == "결과"  # two characters stay whole


def test_search_page_stems_as_the_index_does():
    """The search page's JavaScript stemmer gives the same terms as the index's."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    words = ["어텐션을", "어텐션의", "디코더에서는", "계산합니다", "정의", "gpu에서", "masks", "attention", "결과를"]
    script = editions.KoreanSearch.js_stemmer_code + (
        f"\nconst s = new Stemmer();\nconsole.log(JSON.stringify({json.dumps(words, ensure_ascii=False)}.map(w => s.stemWord(w))));"
    )
    result = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    python = editions.KoreanSearch({})
    assert json.loads(result.stdout) == [python.stem(w) for w in words]


def test_korean_configuration_comes_from_the_english_one():
    english = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    korean = editions.korean_config(english)
    assert korean["sphinx"]["config"]["language"] == "ko"
    assert korean["html"]["baseurl"] == english["html"]["baseurl"] + "ko/"
    assert korean["repository"]["path_to_book"] == "locales/ko"
    assert korean["sphinx"]["config"]["book_site_url"] == english["html"]["baseurl"]
    assert {k: v for k, v in korean.items() if k not in {"title", "author", "html", "repository", "sphinx"}} == {
        k: v for k, v in english.items() if k not in {"title", "author", "html", "repository", "sphinx"}
    }
