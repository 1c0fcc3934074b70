"""Check the Korean edition's message catalogues (locales/ko/LC_MESSAGES/**.po).

Every message of the English book (a paragraph, a heading, a list item, a
table cell, a figure's alt text) has an entry in the catalogue of its page.
This script fails on any entry that is untranslated, fuzzy or obsolete, and on
a translation that lost part of the Markdown the page needs to stay the same
book:

- every link target (the glossary and bibliography links of the notebooks);
- every inline code span and every $math$ span, unchanged;
- every MyST role with its target ({term}, {doc}, {cite}, {ref}, ...);
- emphasis that still renders: no ``**`` or stray backtick left as text once
  the translation is parsed as Markdown (in Korean, ``**"x"**는`` does not close
  its bold: see locales/README.md).

A translation may leave a message as it is only when it has nothing to
translate: no run of three or more ASCII letters outside code, math, roles and
links, or only names (see :func:`needs_hangul`).

Usage::

    python scripts/check_translation.py                  # every catalogue
    python scripts/check_translation.py locales/ko/LC_MESSAGES/book/intro.po

Exit status 1 and one line per problem (file, message) if any.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
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


def _stray_markup(text: str) -> list[str]:
    """What is left of ``**``, ``__`` or a backtick as plain text once parsed."""
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
    if not _stray_markup(source) and _stray_markup(target):
        problems.append(
            "emphasis or code that no longer renders (a ** or ` left as text: "
            "see locales/README.md, 'Markdown')"
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
