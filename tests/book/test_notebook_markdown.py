"""The notebooks' Markdown reads cleanly where learners run them, and its links land.

Colab and JupyterLab render a notebook's Markdown cells as plain Markdown
(CommonMark with GitHub's tables), not MyST: a ``{term}`` role or a
``{warning}`` fence shows up there literally. These tests render every
Markdown cell the same way (markdown-it-py, CommonMark preset plus tables)
and fail on leftover MyST syntax, on links that cannot work in Colab, and on
glossary or bibliography links whose targets do not exist.

The link form is set by ``book/_ext/notebook_links.py`` from ``html.baseurl``
in ``_config.yml``: a glossary term links to
``<base>book/glossary.html#term-<term>``, a citation to
``<base>book/references.html#cite-<BibTeX key>``. The book build turns those
links back into local ones and checks them too; the last tests here build a
small Sphinx project to show that a broken target fails the build, and read
the built book to show that the chapters' links are local and land.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from markdown_it import MarkdownIt

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

sys.path.insert(0, str(bs.REPO_ROOT / "book" / "_ext"))
import notebook_links as nl  # noqa: E402

NOTEBOOKS = sorted((bs.REPO_ROOT / "notebooks").glob("*.ipynb"))
GLOSSARY = bs.REPO_ROOT / "book" / "glossary.md"
BIBLIOGRAPHY = bs.REPO_ROOT / "book" / "references.bib"

# What Colab and JupyterLab do with a Markdown cell: CommonMark and GFM tables.
RENDERER = MarkdownIt("commonmark").enable("table")

# MyST-only syntax, as it survives a plain CommonMark rendering.
ROLE = re.compile(r"\{[A-Za-z][\w:+-]*\}$")  # text just before a code span: {term}`x`
TARGET = re.compile(r"^\([\w.:-]+\)=\s*$", re.MULTILINE)  # (label)=
COLON_FENCE = re.compile(r"^:::+\s*\{", re.MULTILINE)  # :::{note}
COMMENT = re.compile(r"^%", re.MULTILINE)  # % a MyST comment line
BLOCK_BREAK = re.compile(r"^\+\+\+", re.MULTILINE)  # +++ a MyST block break
SUBSTITUTION = re.compile(r"\{\{[^}]*\}\}")  # {{ name }}


@dataclass(frozen=True)
class Link:
    href: str
    text: str


def base_url() -> str:
    base = bs.read_config()["html"]["baseurl"]
    return base if base.endswith("/") else base + "/"


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    notebook = bs.read_notebook(path)
    return [
        (index, cell["source"])
        for index, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "markdown"
    ]


def myst_leftovers(markdown: str) -> list[str]:
    """Return every piece of MyST-only syntax in ``markdown``, as plain Markdown renders it."""
    found = []
    tokens = RENDERER.parse(markdown)
    for token in tokens:
        if token.type == "fence" and token.info.strip().startswith("{"):
            found.append(f"directive fence ```{token.info.strip()}")
        if token.type != "inline":
            continue
        children = token.children or []
        for before, after in zip(children, children[1:]):
            if (
                before.type == "text"
                and after.type == "code_inline"
                and ROLE.search(before.content)
            ):
                found.append(f"role {ROLE.search(before.content).group(0)}`{after.content}`")
        # The paragraph's text, line by line, code spans left out.
        text = "\n".join(
            child.content if child.type == "text" else "\n"
            for child in children
            if child.type in {"text", "softbreak", "hardbreak"}
        )
        for pattern, name in [
            (TARGET, "target"),
            (COLON_FENCE, "colon fence"),
            (COMMENT, "% comment"),
            (BLOCK_BREAK, "+++ block break"),
            (SUBSTITUTION, "substitution"),
        ]:
            for match in pattern.finditer(text):
                found.append(f"{name} {match.group(0).strip()!r}")
    return found


def links(markdown: str) -> list[Link]:
    """Every link and image of ``markdown`` (Markdown or raw HTML), with its visible text."""
    found = []

    def walk(children):
        stack: list[tuple[str, list[str]]] = []
        for child in children:
            if child.type == "link_open":
                stack.append((child.attrs["href"], []))
            elif child.type == "link_close":
                href, text = stack.pop()
                found.append(Link(href, "".join(text)))
            elif child.type == "image":
                found.append(Link(child.attrs["src"], child.content))
            elif child.type in {"text", "code_inline", "softbreak"}:
                for _, text in stack:
                    text.append(child.content if child.type != "softbreak" else " ")
            if child.type in {"html_inline"}:
                found.extend(
                    Link(href, "") for href in re.findall(r'(?:href|src)="([^"]*)"', child.content)
                )

    for token in RENDERER.parse(markdown):
        if token.type == "inline":
            walk(token.children or [])
        elif token.type == "html_block":
            found.extend(
                Link(href, "") for href in re.findall(r'(?:href|src)="([^"]*)"', token.content)
            )
    return found


@cache
def glossary_terms() -> frozenset[str]:
    """Every term of the ``{glossary}`` directive in ``book/glossary.md``."""
    text = GLOSSARY.read_text(encoding="utf-8")
    body = re.search(r"```\{glossary\}\n(.*?)\n```", text, re.DOTALL)
    assert body, "glossary.md has no {glossary} directive"
    return frozenset(
        line.strip()
        for line in body.group(1).splitlines()
        if line.strip() and not line[0].isspace() and not line.startswith(":")
    )


@cache
def bibliography() -> dict[str, tuple[str, str]]:
    """{BibTeX key: (first author's surname, year)} of ``book/references.bib``."""
    from pybtex.database import parse_file
    from pybtex.richtext import Text

    entries = {}
    for key, entry in parse_file(str(BIBLIOGRAPHY)).entries.items():
        first = (entry.persons.get("author") or entry.persons.get("editor"))[0]
        surname = Text.from_latex(" ".join(first.prelast_names + first.last_names)).render_as(
            "text"
        )
        entries[key] = (surname, entry.fields.get("year", ""))
    return entries


def link_problems(markdown: str, base: str) -> list[str]:
    """Return what is wrong with the links of ``markdown`` (empty when nothing is)."""
    terms = {nl.term_anchor(term): term for term in glossary_terms()}
    citations = {nl.cite_anchor(key): key for key in bibliography()}
    pages = {f"{name}.html" for name in bs.toc_files()} | {"", "index.html"}
    glossary_page = f"{nl.GLOSSARY_DOC}.html"
    references_page = f"{nl.REFERENCES_DOC}.html"
    site_host = urlsplit(base).netloc
    problems = []
    for link in links(markdown):
        href = link.href
        parts = urlsplit(href)
        if href.startswith(base):
            page, _, anchor = href[len(base) :].partition("#")
            if page not in pages:
                problems.append(f"{href}: {page!r} is not a page of the book")
            elif page == glossary_page and anchor and anchor not in terms:
                problems.append(f"{href}: {anchor!r} is not the anchor of a glossary term")
            elif page == references_page and anchor and anchor not in citations:
                problems.append(f"{href}: {anchor!r} is not the anchor of a key of references.bib")
            elif page == references_page and anchor:
                surname, year = bibliography()[citations[anchor]]
                if surname not in link.text or year not in link.text:
                    problems.append(
                        f"{href}: the citation reads {link.text!r}; it should name "
                        f"{surname} and {year}"
                    )
        elif parts.netloc == site_host:
            problems.append(f"{href}: a link to the book's site must start with {base}")
        elif not parts.scheme and not href.startswith("#"):
            problems.append(f"{href}: a relative link does not work in Colab; link to {base}...")
        elif parts.scheme not in {"", "http", "https", "mailto"}:
            problems.append(f"{href}: {parts.scheme}: links do not work in Colab")
    return problems


# --------------------------------------------------------------------------- #
# The checkers catch what they must (each would let a broken notebook pass     #
# if it were wrong)                                                            #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "markdown, expected",
    [
        ("Sentences in a {term}`batch` differ.", "role {term}`batch`"),
        ("As shown {cite:p}`vaswani2017attention`.", "role {cite:p}`vaswani2017attention`"),
        (
            "See {doc}`the glossary <../book/glossary>`.",
            "role {doc}`the glossary <../book/glossary>`",
        ),
        ("```{warning} Pitfalls\n- one\n```", "directive fence ```{warning} Pitfalls"),
        (":::{note}\nSome note.\n:::", "colon fence"),
        ("(sec-masks)=\n## Masks", "target"),
        ("% a comment\nText.", "% comment"),
        ("Text.\n\n+++\n\nMore.", "+++ block break"),
        ("Uses {{ version }} here.", "substitution"),
    ],
)
def test_myst_leftovers_are_found(markdown, expected):
    found = myst_leftovers(markdown)
    assert any(item.startswith(expected) for item in found), found


@pytest.mark.parametrize(
    "markdown",
    [
        "Plain text with `code`, a [link](https://example.org) and math $x_{i}$.",
        "A code block keeps its braces:\n\n```python\nprint(f'{term}`x`')\n```",
        "| a | b |\n| --- | --- |\n| `{x}` | 1 |",
        "Percentages such as 50 % stay text.",
    ],
)
def test_plain_markdown_is_left_alone(markdown):
    assert myst_leftovers(markdown) == []


def test_link_checker_accepts_the_documented_forms():
    base = base_url()
    markdown = (
        f"A [batch]({nl.glossary_url(base, 'batch')}) and "
        f"[Adam]({nl.glossary_url(base, 'Adam')}); "
        f"([Vaswani et al., 2017]({nl.citation_url(base, 'vaswani2017attention')})); "
        f"[Vaswani et al. (2017)]({nl.citation_url(base, 'vaswani2017attention')}); "
        f"[Chapter 3]({base}notebooks/03_positional_encoding.html); "
        "[the paper](https://arxiv.org/abs/1706.03762); [below](#pitfalls)."
    )
    assert link_problems(markdown, base) == []


@pytest.mark.parametrize(
    "href, text, expected",
    [
        ("{base}book/glossary.html#term-not-a-term", "x", "not the anchor of a glossary term"),
        ("{base}book/glossary.html#batch", "batch", "not the anchor of a glossary term"),
        ("{base}book/references.html#cite-nobody1999", "Nobody, 1999", "not the anchor of a key"),
        (
            "{base}book/references.html#cite-vaswani2017attention",
            "Bahdanau et al., 2015",
            "should name",
        ),
        ("{base}book/no_such_page.html", "x", "not a page of the book"),
        (
            "http://transformer-step-by-step.github.io/book/book/glossary.html#term-batch",
            "batch",
            "must start with",
        ),
        ("../book/glossary.md", "glossary", "relative link"),
        ("images/figure.png", "figure", "relative link"),
    ],
)
def test_link_checker_rejects_broken_links(href, text, expected):
    base = base_url()
    problems = link_problems(f"See [{text}]({href.format(base=base)}).", base)
    assert any(expected in problem for problem in problems), problems


def test_term_anchors_follow_sphinx():
    assert nl.term_anchor("padding mask") == "term-padding-mask"
    assert nl.term_anchor("Adam") == "term-Adam"
    assert nl.term_anchor("key/value cache") == "term-key-value-cache"
    assert nl.cite_anchor("vaswani2017attention") == "cite-vaswani2017attention"


def test_site_setting_is_the_published_address():
    """html.baseurl is where GitHub Pages publishes the repository the setup cells install from."""
    config = bs.read_config()
    owner, name = config["repository"]["url"].removeprefix("https://github.com/").split("/")
    assert config["html"]["baseurl"] == f"https://{owner}.github.io/{name}/"
    assert config["sphinx"]["config"]["bibtex_cite_id"] == nl.CITE_ID
    assert "notebook_links" in config["sphinx"]["local_extensions"]


# --------------------------------------------------------------------------- #
# Every notebook                                                               #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_markdown_has_no_myst_syntax(notebook):
    leftovers = [
        f"cell {index}: {item}"
        for index, source in markdown_cells(notebook)
        for item in myst_leftovers(source)
    ]
    assert leftovers == [], (
        "Colab and JupyterLab show MyST syntax literally; write plain Markdown "
        "(see CONTRIBUTING.md's conventions):\n" + "\n".join(leftovers)
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_links_work_in_colab_and_land_on_real_targets(notebook):
    base = base_url()
    problems = [
        f"cell {index}: {problem}"
        for index, source in markdown_cells(notebook)
        for problem in link_problems(source, base)
    ]
    assert problems == [], "\n".join(problems)


def test_the_notebooks_link_the_glossary_and_the_bibliography():
    """The chapters keep linking terms and citations (the form is used, not dropped)."""
    base = base_url()
    hrefs = [
        link.href
        for path in NOTEBOOKS
        for _, source in markdown_cells(path)
        for link in links(source)
    ]
    assert sum(href.startswith(base + nl.GLOSSARY_DOC) for href in hrefs) >= 20
    assert sum(href.startswith(base + nl.REFERENCES_DOC) for href in hrefs) >= 10


# --------------------------------------------------------------------------- #
# The book build: links become local, and a broken target fails the build      #
# --------------------------------------------------------------------------- #

MINI_BIB = """\
@article{doe2020thing,
  author = {Doe, Jane and Roe, Richard},
  title = {A Thing},
  journal = {Journal of Things},
  year = {2020}
}
"""


def mini_book(tmp_path: Path, page: str) -> tuple[int, str, Path]:
    """Build a small Sphinx project with the extension; return (returncode, log, html dir)."""
    src = tmp_path / "src"
    (src / "book").mkdir(parents=True)
    (src / "conf.py").write_text(
        textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(bs.REPO_ROOT / "book" / "_ext")!r})
        extensions = ["myst_parser", "sphinxcontrib.bibtex", "notebook_links"]
        root_doc = "index"
        html_baseurl = "https://example.org/site/"
        bibtex_bibfiles = ["book/refs.bib"]
        bibtex_cite_id = "cite-{{key}}"
        bibtex_reference_style = "author_year"
        """)
    )
    (src / "book" / "refs.bib").write_text(MINI_BIB)
    (src / "book" / "glossary.md").write_text(
        "# Glossary\n\n```{glossary}\nbatch\n  The examples of one step.\n\n"
        "padding mask\n  Blocks the pads.\n```\n"
    )
    (src / "book" / "references.md").write_text("# References\n\n```{bibliography}\n:all:\n```\n")
    (src / "index.md").write_text(
        "# Home\n\n```{toctree}\nbook/glossary\nbook/references\npage\n```\n"
    )
    (src / "page.md").write_text(page)
    out = tmp_path / "html"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-n",
            "-W",
            "--keep-going",
            "-q",
            str(src),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result.returncode, result.stdout + result.stderr, out


GOOD_PAGE = """\
# Page

## Section one

Sentences in a [batch](https://example.org/site/book/glossary.html#term-batch) differ,
a [padding mask](https://example.org/site/book/glossary.html#term-padding-mask) blocks
pads ([Doe and Roe, 2020](https://example.org/site/book/references.html#cite-doe2020thing)),
see [the section](https://example.org/site/page.html#section-one) and
[home](https://example.org/site/index.html).

> **Pitfalls**
>
> - one
"""


def test_extension_makes_site_links_local_and_quotes_admonitions(tmp_path):
    returncode, log, out = mini_book(tmp_path, GOOD_PAGE)
    assert returncode == 0, log
    html = (out / "page.html").read_text(encoding="utf-8")
    assert "example.org/site/book" not in html
    assert 'href="book/glossary.html#term-batch"' in html
    assert 'href="book/glossary.html#term-padding-mask"' in html
    assert 'href="book/references.html#cite-doe2020thing"' in html
    assert 'href="#section-one"' in html
    assert 'href="index.html"' in html
    assert re.search(
        r'<div class="warning admonition">\s*<p class="admonition-title">Pitfalls</p>', html
    )
    references = (out / "book" / "references.html").read_text(encoding="utf-8")
    assert 'id="cite-doe2020thing"' in references


@pytest.mark.parametrize(
    "href, message",
    [
        ("https://example.org/site/book/glossary.html#term-batches", "is not a glossary term"),
        ("https://example.org/site/book/glossary.html#glossary", "is not a glossary term"),
        (
            "https://example.org/site/book/references.html#cite-nobody1999",
            "is not a bibliography entry",
        ),
        ("https://example.org/site/book/nowhere.html", "has no page"),
        ("https://example.org/site/page.html#no-such-section", "has no anchor"),
        ("https://example.org/elsewhere/page.html", "does not start with html_baseurl"),
    ],
)
def test_extension_fails_the_build_on_a_broken_target(tmp_path, href, message):
    returncode, log, _ = mini_book(tmp_path, f"# Page\n\nA [link]({href}).\n")
    assert returncode != 0
    assert message in log, log


def test_built_chapters_link_locally_to_existing_anchors():
    book = bs.build_book()
    assert book.returncode == 0, book.log[-6000:]
    base = base_url()
    pages = [bs.html_path(name) for name in bs.toc_files() if name.startswith("notebooks/")]
    checked = 0
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert f'href="{base}{nl.GLOSSARY_DOC}' not in html, (
            f"{page.name} links the site's glossary"
        )
        assert f'href="{base}{nl.REFERENCES_DOC}' not in html, (
            f"{page.name} links the site's bibliography"
        )
        for target, anchor in re.findall(
            r'href="(\.\./book/(?:glossary|references)\.html)#([^"]+)"', html
        ):
            target_html = (page.parent / target).resolve().read_text(encoding="utf-8")
            assert f'id="{anchor}"' in target_html, (
                f"{page.name}: {target}#{anchor} does not exist"
            )
            checked += 1
    assert checked >= 30
