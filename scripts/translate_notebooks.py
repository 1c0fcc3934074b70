"""Make the Korean notebooks (locales/ko/notebooks/) from the English ones and the catalogues.

A Korean chapter is its English notebook with every Markdown message (a
paragraph, a heading, a list item, a table cell; the same units Sphinx's
gettext builder extracts) and every figure's alt text replaced by its
translation in ``locales/ko/LC_MESSAGES/notebooks/<chapter>.po``. The code
cells, their outputs and the notebook's metadata are the English notebook's,
unchanged. Links to the published book lead to the Korean edition
(``.../book/ko/...``).

The book's Colab and download buttons of a Korean chapter open these
notebooks (book/_ext/editions.py). They are committed, so Colab can open them
from the repository, and never edited by hand:
``tests/book/test_korean_edition.py`` fails if one is not what this script
makes from the current English notebook and catalogue.

Usage::

    python scripts/translate_notebooks.py           # write every chapter
    python scripts/translate_notebooks.py 01 06     # only Chapters 1 and 6
    python scripts/translate_notebooks.py --check   # exit 1 if one is out of step
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from pathlib import Path

import polib
import yaml
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

ROOT = Path(__file__).resolve().parents[1]
ENGLISH = ROOT / "notebooks"
KOREAN = ROOT / "locales" / "ko" / "notebooks"
CATALOGUES = ROOT / "locales" / "ko" / "LC_MESSAGES" / "notebooks"
BOLD_ONLY = re.compile(r"^\*\*(.+)\*\*$")


def _parser():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = set(config["parse"]["myst_enable_extensions"])
    return create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML)


def _site_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    base = config["html"]["baseurl"]
    return base if base.endswith("/") else base + "/"


class Translator:
    """Translate one chapter's Markdown with its catalogue; count what it could not."""

    def __init__(self, catalogue: Path):
        entries = polib.pofile(str(catalogue))
        self.messages = {
            e.msgid: e.msgstr
            for e in entries
            if e.msgstr and not e.obsolete and "fuzzy" not in e.flags
        }
        self.known = {e.msgid for e in entries if not e.obsolete}
        self.missing: list[str] = []
        self.md = _parser()
        site = _site_url()
        self._site = (site, site + "ko/")

    def message(self, text: str) -> str | None:
        """The translation of one message, or None (counted in ``missing``)."""
        key = text.replace("\n", " ").strip()
        if key in self.messages:
            return self.messages[key]
        bold = BOLD_ONLY.match(key)
        if bold and bold.group(1) in self.messages:
            return f"**{self.messages[bold.group(1)]}**"
        self.missing.append(key)
        return None

    def markdown(self, source: str) -> str:
        """Translate a Markdown cell's source, block by block."""
        lines = source.split("\n")
        replaced: dict[int, str] = {}  # first line -> its new text
        dropped: set[int] = set()
        for token in self.md.parse(source):
            if token.type != "inline" or token.map is None or not token.content.strip():
                continue
            first = token.map[0]
            translation = self.message(token.content)
            if translation is None:
                continue
            translation = translation.replace(*self._site)
            content_lines = token.content.split("\n")
            line = replaced.get(first, lines[first])
            start = line.find(content_lines[0])
            if start < 0:
                self.missing.append(token.content)
                continue
            if len(content_lines) == 1:
                # a heading, a list item, a table cell: replace the text in place
                tail = line[start + len(content_lines[0]) :]
            else:
                # a paragraph: one line, the next lines of the English dropped
                tail = ""
                dropped.update(range(first + 1, first + len(content_lines)))
            replaced[first] = line[:start] + translation + tail
        out = [
            replaced.get(index, text)
            for index, text in enumerate(lines)
            if index not in dropped
        ]
        return "\n".join(out)


def translate_notebook(english: dict, translator: Translator) -> dict:
    """Return the Korean notebook made from an English one."""
    notebook = copy.deepcopy(english)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            text = translator.markdown(source)
            cell["source"] = text.splitlines(keepends=True)
        image = cell.get("metadata", {}).get("mystnb", {}).get("image", {})
        has_image = any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
        if image.get("alt") and has_image:
            alt = translator.message(image["alt"])
            if alt is not None:
                image["alt"] = alt
    return notebook


def dumps(notebook: dict) -> str:
    """A notebook as the repository stores them (nbformat's layout)."""
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def build(chapter: Path) -> tuple[str, list[str]]:
    """The Korean notebook of one chapter (as text) and the messages left in English."""
    translator = Translator(CATALOGUES / f"{chapter.stem}.po")
    english = json.loads(chapter.read_text(encoding="utf-8"))
    return dumps(translate_notebook(english, translator)), translator.missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only check, write nothing")
    parser.add_argument("chapters", nargs="*", metavar="NN", help="only these chapters (01, 07, ...); default: all")
    args = parser.parse_args(argv)
    status = 0
    KOREAN.mkdir(parents=True, exist_ok=True)
    chapters = sorted(ENGLISH.glob("*.ipynb"))
    if args.chapters:
        wanted = {f"{int(n):02d}" for n in args.chapters}
        chapters = [c for c in chapters if c.name[:2] in wanted]
        if len(chapters) != len(wanted):
            parser.error(f"no notebook for some of {sorted(wanted)} in {ENGLISH.relative_to(ROOT)}")
    for chapter in chapters:
        text, missing = build(chapter)
        target = KOREAN / chapter.name
        for message in missing:
            print(f"{chapter.name}: no translation for {message[:100]!r}")
            status = 1
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                print(f"{target.relative_to(ROOT)} is out of step: run scripts/translate_notebooks.py")
                status = 1
        else:
            target.write_text(text, encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
