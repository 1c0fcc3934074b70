"""Check the Korean edition's message catalogues (locales/ko/LC_MESSAGES/**.po).

Every message of the English book (a paragraph, a heading, a list item, a
table cell, a figure's alt text) has an entry in the catalogue of its page.
This script fails on any entry that is untranslated, fuzzy or obsolete, and on
a translation that lost part of the Markdown the page needs to stay the same
book:

- every link target (the glossary and bibliography links of the notebooks);
- every inline code span and every $math$ span, unchanged;
- every MyST role with its target ({term}, {doc}, {cite}, {ref}, ...), and
  as many cross-references as the English (Sphinx warns, and the build
  fails, when a translation names :class:`X` twice);
- emphasis that still renders: no ``**`` or stray backtick left as text once
  the translation is parsed as Markdown (in Korean, ``**"x"**는`` does not close
  its bold: see locales/README.md), by markdown-it-py as the book's build
  does and by CommonMark 0.31 as JupyterLab and Colab do, which count symbols
  as punctuation too (``**−∞**는`` renders there as ``**−∞**는``).

A translation may leave a message as it is only when it has nothing to
translate: no run of three or more ASCII letters outside code, math, roles and
links, or only names (see :func:`needs_hangul`).

It also fails on what the house rules (locales/README.md, "How the Korean
reads") retired, wherever it can be told by rule (:func:`style_problems`):
the retired renderings (:data:`RETIRED`: 라벨, 극성, 추출 for a draw, 어간 | 조사
for a noun, 모으다 for gather, 우리 X, 더 나쁘게는, "n = d보다 작으면", Post-LN,
간격 for offset, 내적 어텐션, curly quotes, an en dash between Hangul words),
an English gloss in parentheses inside parentheses, and a particle that does
not agree with how the number, letter or acronym before it is read (Llama 3은,
LN은, GPU는, L로, N으로; :func:`particle_problems`).

Usage::

    python scripts/check_translation.py                  # every catalogue
    python scripts/check_translation.py locales/ko/LC_MESSAGES/book/intro.po

Exit status 1 and one line per problem (file, message) if any.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import polib
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

ROOT = Path(__file__).resolve().parents[1]
LOCALE_DIR = ROOT / "locales" / "ko" / "LC_MESSAGES"

LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"(`+)(.+?)\1")
ROLE = re.compile(r"\{([a-z:]+)\}`([^`]*)`")
RST_ROLE = re.compile(r":[a-z:]+:`[^`]*`")
MATH = re.compile(r"(?<![\\$])\$(?!\s)([^$]+?)(?<!\s)\$")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
WORD = re.compile(r"[A-Za-z]{3,}")

_md = MarkdownIt("commonmark").use(dollarmath_plugin)


def role_target(role: str, text: str) -> tuple[str, str]:
    """Return a role's name and target: ``{term}`heads <head>``` -> ``("term", "head")``."""
    explicit = re.search(r"<([^<>]+)>\s*$", text)
    if role.startswith(("cite", "eq", "numref")) or not explicit:
        return role, text.strip() if not explicit else explicit.group(1).strip()
    return role, explicit.group(1).strip()


def _strip_markup(text: str) -> str:
    text = ROLE.sub(" ", text)
    text = RST_ROLE.sub(" ", text)
    text = CODE.sub(" ", text)
    text = MATH.sub(" ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"https?://\S+", " ", text)
    # identifiers (d_model, max_len) and function notation (log(n), softmax(x))
    text = re.sub(r"\b\w*_\w*\b", " ", text)
    return re.sub(r"\b[A-Za-z]+(?=\()", " ", text)


def needs_hangul(msgid: str) -> bool:
    """Whether a message has prose to translate (so its translation needs Hangul).

    Code, math, roles, link targets, identifiers (``d_model``) and function
    notation (``log(n)``) do not count; nor does a message whose
    words are all capitalised names or acronyms (``BLEU``, ``Adam``,
    ``FlashAttention``), which Korean writes as they are.
    """
    if re.match(r"(python|torchrun|pip|bash|git) ", msgid.strip()):
        return False  # a command line
    words = WORD.findall(_strip_markup(msgid))
    return any(word[0].islower() for word in words)


@contextmanager
def _symbols_as_punctuation():
    """Parse as CommonMark 0.31 does: a Unicode symbol (−, ∞, ×, →, ≈: categories
    S*) is punctuation when a ``**`` decides whether it may open or close.

    JupyterLab and Colab follow that rule; markdown-it-py 3 (the book's build)
    counts only the P* categories. So ``**−∞**는`` is bold on the site but shows
    its asterisks in a notebook: the closing ``**`` follows punctuation (∞) and
    is followed by a letter (는), so it cannot close.
    """
    from markdown_it.rules_inline import state_inline

    original = state_inline.isPunctChar
    state_inline.isPunctChar = lambda ch: original(ch) or unicodedata.category(ch).startswith("S")
    try:
        yield
    finally:
        state_inline.isPunctChar = original


def cross_references(text: str) -> list[str]:
    """The roles of a message that Sphinx makes cross-references of (every role
    but math, MyST's ``{term}`x``` or reStructuredText's ``:class:`X```). Sphinx
    warns when a translation has not as many as its English."""
    myst = [m.group(0) for m in ROLE.finditer(text) if m.group(1) != "math"]
    rst = [m.group(0) for m in RST_ROLE.finditer(ROLE.sub(" ", text)) if not m.group(0).startswith(":math:")]
    return myst + rst


def _stray_markup(text: str, symbols_are_punctuation: bool = False) -> list[str]:
    """What is left of ``**``, ``__`` or a backtick as plain text once parsed
    (with ``symbols_are_punctuation``, as CommonMark 0.31 parses it)."""
    if symbols_are_punctuation:
        with _symbols_as_punctuation():
            return _stray_markup(text)
    found = []
    for block in _md.parse(text):
        for token in block.children or []:
            if token.type == "text":
                for mark in ("**", "`"):
                    if mark in token.content:
                        found.append(mark)
    return found


_RST_ROLES = (
    "class", "func", "meth", "attr", "mod", "data", "obj", "exc", "const", "doc", "ref",
    "term", "cite", "math", "py:class", "py:func", "py:meth", "py:attr", "py:mod",
    "py:data", "py:obj", "py:exc",
)
_RST_INLINE = ("literal", "emphasis", "strong", "title_reference", "reference", "problematic")
_RST_VERBATIM = ("literal", "title_reference", "reference")


def rst_markup(text: str) -> Counter:
    """The inline markup of a docstring's message, parsed as reStructuredText.

    reStructuredText ends ``code``, *emphasis* or a :role:`x` only before a
    space or punctuation (not before a Hangul particle or an opening
    parenthesis), and says nothing when it does not: the markup then runs on
    into the text. Comparing what the English and the Korean parse into
    catches it.
    """
    import io

    from docutils import nodes as docnodes
    from docutils.core import publish_doctree
    from docutils.parsers.rst import roles

    for role in _RST_ROLES:
        roles.register_generic_role(role, docnodes.literal)
    tree = publish_doctree(
        text, settings_overrides={"report_level": 5, "halt_level": 5, "warning_stream": io.StringIO()}
    )
    # Code and references keep their text; emphasis is translated, so only counted.
    return Counter(
        (type(node).__name__, node.astext() if type(node).__name__ in _RST_VERBATIM else "")
        for node in tree.findall()
        if type(node).__name__ in _RST_INLINE
    )


def _rst_broken(source: str, target: str) -> bool:
    """Whether the Korean lost a piece of the English's markup, or broke one."""
    want, got = rst_markup(source), rst_markup(target)
    problematic = sum(n for (kind, _), n in got.items() if kind == "problematic")
    problematic -= sum(n for (kind, _), n in want.items() if kind == "problematic")
    lost = Counter({key: n for key, n in want.items() if key[0] != "problematic"}) - got
    return bool(lost) or problematic > 0


# --------------------------------------------------------------------------- #
# How the Korean reads: what the edition's review retired                      #
# (locales/README.md, "How the Korean reads"). Each rule names the fix.        #
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Retired:
    """A rendering the edition no longer uses.

    ``pattern`` is searched in the Korean prose (code, math, link targets and
    role targets left out); ``english``, if given, limits the rule to messages
    whose English says it (추출 is wrong for a random *draw*, not for every
    extraction); a match inside ``allowed`` (a glossary alias) passes, and so
    does Korean that the English itself quotes (an example sentence).
    """

    pattern: re.Pattern
    fix: str
    english: re.Pattern | None = None
    allowed: re.Pattern | None = None


RETIRED = (
    Retired(re.compile(r"라벨"), "라벨: write 레이블 (레이블 스무딩), as every other label",
            allowed=re.compile(r"라벨 스무딩(?:이)?라고도")),
    Retired(re.compile(r"극성"), "극성 for a mask's True/False convention: write the mask's True/False 규약, or 뒤집힌 마스크"),
    Retired(re.compile(r"추출"), "추출 for a random draw: write 시행 (or 뽑다)", english=re.compile(r"\bdraw", re.IGNORECASE)),
    Retired(re.compile(r"(?<![가-힣])어간[\s|+,·과와]*조사"),
            "어간 is the stem of a verb (먹-): a noun and its particle are 명사 | 조사"),
    Retired(re.compile(r"모(?:으|아|았|읍|은|을)"),
            "모으다 for gather (an index-select): write 골라(gather), 인덱스대로 고르다",
            english=re.compile(r"\bgather", re.IGNORECASE)),
    Retired(re.compile(r"(?<![가-힣])우리(?!말)"), "우리 X for 'our X': write 직접 만든 X, 이 장의/이 책의 X, or leave it out"),
    Retired(re.compile(r"더 나쁘게는"), "더 나쁘게는 calques 'worse,': write 더 큰 문제는 … 점입니다"),
    Retired(re.compile(r"=\s*[^\s=()]+\s*보다\s*(?:작|크|적|많|낮|높)"),
            "'below n = d' is math: write n < d (n > d for above)"),
    Retired(re.compile(r"(?<![A-Za-z])(?:Post|Pre)-LN"), "post-LN / pre-LN, in lower case, as the English writes them"),
    Retired(re.compile(r"간격"), "offset is 오프셋, as in the glossary", english=re.compile(r"\boffset", re.IGNORECASE)),
    Retired(re.compile(r"내적 어텐션"), "dot-product attention is 닷 프로덕트 어텐션"),
    Retired(re.compile(r"[“”‘’]"), "curly quotes: write straight ones (\" and '), as the English does"),
    Retired(re.compile(r"(?<=[가-힣])\s?–\s?(?=[가-힣])"), "an en dash between Hangul words: write a hyphen (영어-독일어)"),
)


def _prose(text: str, keep_role_text: bool = True) -> str:
    """The text a reader reads: a role becomes its displayed text, a link its
    text, code and math a placeholder (``\x00``), emphasis marks go."""

    def role(match: re.Match) -> str:
        name, body = match.groups()
        if name.startswith("cite"):
            year = re.search(r"(\d{4})", body)  # {cite:t} prints "Authors (2017)"
            return f"Authors ({year.group(1)})" if name == "cite:t" and year else "\x00"
        shown = re.sub(r"\s*<[^<>]*>\s*$", "", body)
        return shown if keep_role_text else "\x00"

    text = ROLE.sub(role, text)
    text = RST_ROLE.sub("\x00", text)
    text = text.replace("\\ ", "")  # reStructuredText's escaped space: ``x``\ 를
    text = CODE.sub(lambda m: m.group(2) if re.fullmatch(r"[A-Za-z]|\d+", m.group(2)) else "\x00", text)
    text = MATH.sub(lambda m: m.group(1) if re.fullmatch(r"[A-Za-z]|\d+", m.group(1)) else "\x00", text)
    text = re.sub(r"\]\([^)\s]*\)", "]", text)
    text = re.sub(r"https?://\S+", "\x00", text)
    return re.sub(r"\*+", "", text).replace("[", "").replace("]", "")


# --- particles after numbers and Latin letters ------------------------------ #

#: How a digit is read (Sino-Korean: 영 일 이 삼 사 오 육 칠 팔 구) ends: with a
#: final consonant (받침), with ㄹ (which takes 로, not 으로), or with a vowel.
DIGIT_ENDING = dict(zip("0123456789", ["c", "l", "v", "c", "v", "v", "c", "l", "l", "v"]))
#: Letter names: 엘 and 알 end in ㄹ, 엠 and 엔 in another 받침, the others in a vowel
#: (에이, 비, 씨, 디, …, 엑스, 와이, 제트).
LETTER_ENDING = {"l": "l", "r": "l", "m": "c", "n": "c"}
#: Acronyms read as a word, not letter by letter, whose ending differs: FLOP 플롭.
WORD_ACRONYMS = {"FLOP": "c", "SEP": "c"}
#: Particle pairs: (after a 받침, after a vowel). 으로/로: 로 after ㄹ too.
PARTICLES = {"은": "는", "이": "가", "을": "를", "과": "와", "으로": "로"}
_PARTICLE = re.compile(r"(으로|로|은|는|이|가|을|를|과|와)(?=$|[^가-힣]|(?<=로)(?:는|도|서|써|부터|의|만))"
                       r"|(과|와)(?=의|는|도)")


def _hangul_ending(char: str) -> str:
    coda = (ord(char) - 0xAC00) % 28
    return "v" if coda == 0 else "l" if coda == 8 else "c"


def _reading_ending(text: str) -> set[str]:
    """How the reading of ``text`` may end: "c" (a 받침), "l" (ㄹ) or "v" (a
    vowel); empty when no rule tells (an English word, code, a symbol). A
    parenthesis may be read two ways (a gloss or a shape: the word before it,
    or what it holds); either is accepted."""
    if not text:
        return set()
    last = text[-1]
    if last == ")":
        depth, i = 0, len(text) - 1
        while i >= 0:
            depth += {")": 1, "(": -1}.get(text[i], 0)
            if depth == 0:
                break
            i -= 1
        if i < 0:
            return set()
        before, inside = text[:i].rstrip(" "), text[i + 1 : -1]
        spaced = len(before) < i
        hangul_before = bool(before) and bool(HANGUL.match(before[-1]))
        held = {_hangul_ending(inside[-1])} if inside and HANGUL.match(inside[-1]) else _reading_ending(inside)
        if re.fullmatch(r"\d{4}", inside) and not hangul_before:
            return {DIGIT_ENDING[inside[-1]]}  # an author-year citation: Elhage et al. (2021)은
        if not before:
            return held  # the parenthesis is the noun itself: (B, L, D)를
        outside = {_hangul_ending(before[-1])} if hangul_before else _reading_ending(before)
        if re.search(r"et al|\d{4}", inside):
            return outside  # a citation aside: T5(Raffel et al., 2020)는
        if hangul_before:
            # a gloss agrees with the Korean word: 소프트맥스(softmax)는; a shape after a
            # space may be the noun itself: 각 헤드는 (B, H, L, d_k)를
            return outside | held if spaced else outside
        if before.endswith("\x00"):
            return set()  # after code, the code's name is read: `exact_match` (비율)와
        if HANGUL.search(inside):
            return outside  # an aside: GPT(층 12개, D = 768)는
        return held  # function notation is read to its end: O(n)은, layer1(x)를, N(0, 1/d_model)로
    if last in DIGIT_ENDING:
        return {DIGIT_ENDING[last]}
    if re.match(r"[A-Za-z]", last):
        run = re.search(r"[A-Za-z]+$", text).group(0)
        if len(run) == 1:
            return {LETTER_ENDING.get(run.lower(), "v")}
        if run.isupper():
            return {WORD_ACRONYMS.get(run, LETTER_ENDING.get(run[-1].lower(), "v"))}
    return set()


def particle_problems(text: str) -> list[str]:
    """Particles after a number, a letter, an acronym or a glossed Korean word
    that do not agree with how it is read: Llama 3은 (삼), LN은 (엘엔),
    GPU는, d_k로, L로 (엘), N으로 (엔), 소프트맥스(softmax)는, O(n)은."""
    prose = _prose(text)
    found = []
    for match in _PARTICLE.finditer(prose):
        particle = match.group(1) or match.group(2)
        before = prose[: match.start()]
        if not before or before[-1].isspace() or HANGUL.match(before[-1]):
            continue  # a particle right after Hangul is the writer's own syllable
        endings = _reading_ending(before)
        if not endings:
            continue
        if particle in PARTICLES:
            pair = (particle, PARTICLES[particle])
        else:
            pair = next((a, b) for a, b in PARTICLES.items() if b == particle)
        if pair[0] == "으로":
            wants = {"로" if ending in "vl" else "으로" for ending in endings}
        else:
            wants = {pair[1] if ending == "v" else pair[0] for ending in endings}
        if particle not in wants:
            want = min(wants)
            word = re.search(r"\S{0,12}$", before).group(0)
            found.append(f"particle {word}{particle}: write {word}{want} (read as it is pronounced)")
    return found


def nested_glosses(text: str) -> list[str]:
    """English glosses in parentheses inside parentheses: (소프트맥스(softmax) 뒤)."""
    prose = _prose(text)
    found, opened = [], []
    for i, char in enumerate(prose):
        if char == "(":
            if opened and i and HANGUL.match(prose[i - 1]):
                close = prose.find(")", i)
                inside = prose[i + 1 : close] if close > 0 else ""
                if re.match(r"[A-Za-z]", inside) and not HANGUL.search(inside):
                    found.append(
                        f"nested parentheses {prose[max(0, i - 8):close + 1]!r}: give the English at "
                        "the next use outside the parentheses, or leave it out there"
                    )
            opened.append(i)
        elif char == ")" and opened:
            opened.pop()
    return found


def style_problems(source: str, target: str) -> list[str]:
    """What the edition's house rules retired, found by rule (locales/README.md)."""
    prose = _prose(target)
    problems = []
    for rule in RETIRED:
        if rule.english is not None and not rule.english.search(source):
            continue
        for match in rule.pattern.finditer(prose):
            if HANGUL.search(match.group(0)) and match.group(0) in source:
                continue  # the English quotes this Korean (an example sentence)
            if rule.allowed is not None and any(
                a.start() <= match.start() < a.end() for a in rule.allowed.finditer(prose)
            ):
                continue
            problems.append(f"{rule.fix}: {prose[max(0, match.start() - 12):match.end() + 12]!r}")
            break
    return problems + nested_glosses(target) + particle_problems(target)


def check_entry(entry: polib.POEntry, docstring: bool = False) -> list[str]:
    """Return the problems of one catalogue entry (empty if none)."""
    if entry.obsolete:
        return ["obsolete (the English no longer has it; delete it)"]
    if not entry.msgstr.strip():
        return ["untranslated"]
    if "fuzzy" in entry.flags:
        return ["fuzzy (the English changed: check the translation, then drop the flag)"]
    problems = []
    source, target = entry.msgid, entry.msgstr
    for name, pattern in (("link target", LINK_TARGET), ("code span", CODE)):
        if name == "code span":
            want = Counter(m.group(0) for m in pattern.finditer(ROLE.sub(" ", source)))
            got = Counter(m.group(0) for m in pattern.finditer(ROLE.sub(" ", target)))
        else:
            want = Counter(pattern.findall(source))
            got = Counter(pattern.findall(target))
        missing = want - got
        if missing:
            problems.append(f"{name} lost or changed: {sorted(missing)}")
    want = Counter(MATH.findall(CODE.sub(" ", source)))
    got = Counter(MATH.findall(CODE.sub(" ", target)))
    if want - got:
        problems.append(f"math lost or changed: {sorted(want - got)}")
    want = Counter(role_target(*m) for m in ROLE.findall(source))
    got = Counter(role_target(*m) for m in ROLE.findall(target))
    if want - got:
        problems.append(f"role or its target lost or changed: {sorted(want - got)}")
    if len(cross_references(source)) != len(cross_references(target)):
        problems.append(
            f"{len(cross_references(target))} cross-references for the English's "
            f"{len(cross_references(source))} (a role such as :class:`X` or {{term}}`x` named twice, "
            "or dropped): Sphinx warns 'inconsistent term references' and the build (-W) fails; "
            "name each as often as the English does"
        )
    if not _stray_markup(source) and _stray_markup(target):
        problems.append(
            "emphasis or code that no longer renders (a ** or ` left as text: "
            "see locales/README.md, 'Markdown')"
        )
    elif not _stray_markup(source, symbols_are_punctuation=True) and _stray_markup(
        target, symbols_are_punctuation=True
    ):
        problems.append(
            "bold that JupyterLab and Colab leave as text: a symbol (−, ∞, ×, →) before the "
            "closing ** and a Hangul letter after it (CommonMark counts symbols as punctuation); "
            "end the bold before the symbol or put punctuation after it: **−∞**(음의 무한대)는"
        )
    if docstring and re.search(r"``|:[a-z:]+:`|\*", source) and _rst_broken(source, target):
        problems.append(
            "reStructuredText markup broken (a Hangul letter or an opening parenthesis "
            "right after ``code``, *emphasis* or a :role:`x`: put a backslash and a space "
            "between them, ``x``\\ 를)"
        )
    if re.match(r"\d+\.\s", target):
        problems.append(
            "starts with a number and a period, which Markdown reads as a numbered list "
            "(a chapter's title is lost): write 1\\. instead of 1."
        )
    if needs_hangul(source) and not HANGUL.search(target):
        problems.append("left in English")
    if HANGUL.search(target):
        problems += style_problems(source, target)
    return problems


def check_file(path: Path) -> list[str]:
    """Return the problems of one catalogue, one line each, naming file and message."""
    catalogue = polib.pofile(str(path))
    name = path.relative_to(ROOT) if path.is_absolute() and ROOT in path.parents else path
    lines = []
    # The API reference's messages are the package's docstrings: reStructuredText.
    docstrings = path.name == "api.po"
    for entry in catalogue:
        for problem in check_entry(entry, docstring=docstrings):
            message = entry.msgid if len(entry.msgid) <= 90 else entry.msgid[:87] + "..."
            lines.append(f"{name}: {problem}: msgid {message!r}")
    return lines


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(LOCALE_DIR.rglob("*.po"))
    problems = [line for path in paths for line in check_file(path)]
    for line in problems:
        print(line)
    count = sum(len([e for e in polib.pofile(str(p)) if not e.obsolete]) for p in paths)
    print(f"{len(problems)} problem(s) in {len(paths)} catalogue(s), {count} messages")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
