"""Sphinx extension: the book's two editions, English and Korean.

The book is written once, in English. The Korean edition is built from the
same sources with Sphinx's gettext catalogues (``locales/ko/LC_MESSAGES/``):
``bash .ci/book`` builds the English site into ``_build/html/`` and then,
with ``language: ko`` (:func:`korean_config`), the Korean one into
``_build/html/ko/``, page for page at the same paths.

What this extension adds to both builds:

- **A link to the same page in the other edition** in every page's header
  (``edition-switch.html``), with ``hreflang`` and ``lang``, and the
  matching ``<link rel="alternate" hreflang>`` in ``<head>``.
- **What is not translated stays out of the catalogues**: the API
  reference's signatures and every display formula (LaTeX is the same in
  both editions). The docstrings are translated, as reStructuredText
  (:class:`TranslateDocstrings`).
- **The figures' alt text is translated**: myst-nb keeps the cell's images
  in the doctree, and the gettext builder is told to prefer them
  (``nb_mime_priority_overrides`` in ``_config.yml``), so each alt text is a
  message of its page.

And to the Korean build only:

- **Its words**: the title, the theme's words (``locales/ko/LC_MESSAGES/``
  ``sphinx.po`` and ``booktheme.po``; the latter before sphinx-book-theme's
  own Korean catalogue, :func:`_theme_words_first`), the search box and
  myst-nb's toggles of hidden cells.

- **Korean search** (:class:`KoreanSearch`): Sphinx has no Korean search
  language, and its default one indexes 어텐션을 and 어텐션의 as words of
  their own, so a search for 어텐션 would miss them. Words with Hangul lose a
  particle or a verb ending (:func:`korean_stem`, the same rule in the
  search page's JavaScript), other words get the English stemmer.
- **The parts' captions in the navigation translated** (:class:`TranslateTocCaptions`).
- **The glossary sorted by its Korean terms** (가나다 order; the anchors stay
  those of the English terms, so every link into it still works).
- **The download button gives the Korean notebook** (``locales/ko/notebooks``,
  made by ``scripts/translate_notebooks.py``); the launch buttons open it in
  Colab through ``repository.path_to_book: locales/ko``.
"""

from __future__ import annotations

import gettext
import json
import os
import re
import shutil
import sys
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.search.en import SearchEnglish, js_porter_stemmer
from sphinx.transforms import SphinxTransform

#: The editions: language code -> (its name in itself, its folder in the site).
EDITIONS = {"en": ("English", ""), "ko": ("한국어", "ko/")}
#: Where the Korean notebooks live, relative to the book's root.
KOREAN_NOTEBOOKS = Path("locales") / "ko" / "notebooks"

HANGUL = re.compile(r"[\uac00-\ud7a3]")

#: Particles (조사) and the endings of 하다/되다 verbs that a Korean word may
#: carry, longest first: 어텐션을, 어텐션의, 어텐션에서는 and 어텐션 are one
#: search term. A word keeps at least two characters, so 정의 and 결과 stay
#: whole.
KOREAN_SUFFIXES = sorted(
    {
        # case particles and their compounds
        "이", "가", "을", "를", "은", "는", "의", "에", "에서", "에게", "께",
        "와", "과", "로", "으로", "도", "만", "까지", "부터", "보다", "처럼",
        "마다", "이나", "나", "이며", "며", "이고", "이다", "이라", "이라는",
        "라는", "이란", "란", "에서는", "에서도", "에서의", "에는", "에도",
        "에의", "으로는", "로는", "으로도", "로도", "으로의", "로의", "와는",
        "과는", "와의", "과의", "와도", "과도", "까지의", "부터는", "만으로",
        "만을", "만의", "만이", "보다는", "이든", "든",
        # plural 들 with a particle
        "들", "들이", "들을", "들은", "들의", "들에", "들로", "들과", "들도",
        "들만", "들에서",
        # 이다 after a noun
        "입니다", "이므로", "이지만", "인", "이면",
        # 하다 / 되다 verbs made from a noun (계산합니다 -> 계산)
        "합니다", "했습니다", "하는", "하고", "하면", "하여", "해서", "하기",
        "하지", "한", "할", "하며", "한다", "했다", "해야", "하려면",
        "됩니다", "되는", "된", "될", "되어", "되면", "됐습니다", "되고",
        "시킵니다", "시키는", "시킨",
    },
    key=lambda suffix: (-len(suffix), suffix),
)


def korean_stem(word: str) -> str:
    """Return the search term of a word: a Hangul word without its particle or ending.

    ``어텐션을`` -> ``어텐션``, ``gpu에서`` -> ``gpu``; the result keeps at
    least two characters (``정의`` stays ``정의``).
    """
    for suffix in KOREAN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


class KoreanSearch(SearchEnglish):
    """Sphinx search language ``ko``: Hangul words by :func:`korean_stem`, others by Porter."""

    lang = "ko"
    language_name = "Korean"
    js_stemmer_code = (
        js_porter_stemmer.replace("var Stemmer = function", "var PorterStemmer = function")
        + f"""
const KOREAN_SUFFIXES = {json.dumps(KOREAN_SUFFIXES, ensure_ascii=False)};
const HANGUL_RE = /[\\uac00-\\ud7a3]/;
var Stemmer = function() {{
  const porter = new PorterStemmer();
  this.stemWord = function(word) {{
    if (!HANGUL_RE.test(word)) return porter.stemWord(word);
    for (const suffix of KOREAN_SUFFIXES) {{
      if (word.endsWith(suffix) && word.length - suffix.length >= 2) {{
        const stem = word.slice(0, word.length - suffix.length);
        return HANGUL_RE.test(stem) ? stem : porter.stemWord(stem);
      }}
    }}
    return word;
  }};
}};
"""
    )

    def stem(self, word: str) -> str:
        word = word.lower()
        if not HANGUL.search(word):
            return super().stem(word)
        stem = korean_stem(word)
        return stem if HANGUL.search(stem) else super().stem(stem)


def edition(config) -> str:
    """The edition a build makes: ``"ko"`` or ``"en"``."""
    return "ko" if (config.language or "en").startswith("ko") else "en"


def other_edition_url(pagename: str, this: str, other: str) -> str:
    """Relative address, from a page of one edition, of the same page in the other."""
    depth = pagename.count("/") + (1 if EDITIONS[this][1] else 0)
    return "../" * depth + EDITIONS[other][1] + pagename + ".html"


def _in_signature(node: nodes.Node) -> bool:
    while node is not None:
        if isinstance(node, addnodes.desc_signature):
            return True
        node = node.parent
    return False


def _untranslatable(app: Sphinx, doctree: nodes.document) -> None:
    """Leave the API reference's signatures and every display formula out of the catalogues."""
    for node in doctree.findall(nodes.TextElement):
        if _in_signature(node):
            node["translatable"] = False
    # A display formula is LaTeX, the same in both editions.
    for node in doctree.findall(nodes.math_block):
        node["translatable"] = False


class SortGlossary(SphinxTransform):
    """In the Korean edition, order a sorted glossary by its translated terms."""

    # After Sphinx's Locale transform (20), which translates the terms.
    default_priority = 30

    def apply(self, **kwargs) -> None:
        if edition(self.config) != "ko":
            return
        for glossary in self.document.findall(addnodes.glossary):
            if not glossary.get("sorted"):
                continue
            for items in glossary.findall(nodes.definition_list):
                entries = list(items.children)
                entries.sort(key=lambda item: item[0].astext().casefold())
                items.children = []
                items.extend(entries)


def _theme_words_first(app: Sphinx) -> None:
    """Korean edition: the book's catalogue of sphinx-book-theme's words comes first.

    The theme registers its own Korean catalogue (``booktheme``), which lacks
    most of the words it shows and renders "By" as "으로";
    ``locales/ko/LC_MESSAGES/booktheme.po`` is looked up before it, the
    theme's as the fallback. (The ``sphinx`` domain needs no help: the
    ``locale_dirs`` come before Sphinx's and pydata-sphinx-theme's own.)
    """
    if edition(app.config) != "ko":
        return
    from sphinx import locale

    for folder in app.config.locale_dirs:
        path = Path(app.srcdir) / folder
        if not (path / "ko" / "LC_MESSAGES" / "booktheme.mo").exists():
            continue
        ours = gettext.translation("booktheme", localedir=str(path), languages=["ko"])
        theirs = locale.translators.get(("general", "booktheme"))
        if theirs is not None and type(theirs) is not gettext.NullTranslations:
            ours.add_fallback(theirs)
        locale.translators[("general", "booktheme")] = ours
        return


def _is_docstring(node: nodes.Node) -> bool:
    """Whether a node is reStructuredText of the API reference: a docstring, or
    the body of an object description written in an ``eval-rst`` block."""
    source = node.source or ""
    if "docstring of " in source or source.endswith(".py"):
        return True
    parent = node.parent
    while parent is not None:
        if isinstance(parent, addnodes.desc):
            return True
        parent = parent.parent
    return False


def _page_catalogue(transform: SphinxTransform):
    """The current page's Korean catalogue (a gettext translations object), as
    Sphinx's Locale transform finds it, or None when the page has none."""
    from sphinx.locale import init as init_locale
    from sphinx.util.i18n import docname_to_domain

    config, env = transform.config, transform.env
    domain = docname_to_domain(env.docname, config.gettext_compact)
    folders = [os.path.join(env.srcdir, folder) for folder in config.locale_dirs]
    catalog, found = init_locale(folders, config.language, domain)
    return catalog if found else None


class TranslateDocstrings(SphinxTransform):
    """Translate the API reference's docstrings as reStructuredText.

    Sphinx's Locale transform parses every translation with the parser of the
    page's file; the API reference is a MyST page (``book/api.md``), but the
    text that autodoc takes from the package is reStructuredText
    (``:class:`X```, ````code````, ``Example::``). This transform runs just
    before Locale and translates those messages as Locale does, with the
    reStructuredText parser, then marks them done.
    """

    default_priority = 19

    def apply(self, **kwargs) -> None:
        if edition(self.config) == "en":
            return
        from sphinx.transforms.i18n import _NodeUpdater, publish_msgstr
        from sphinx.util.nodes import extract_messages

        catalog = _page_catalogue(self)
        if catalog is None:
            return
        for node, message in list(extract_messages(self.document)):
            if not _is_docstring(node):
                continue
            translation = catalog.gettext(message)
            if not translation or translation == message:
                continue
            if translation.strip().endswith("::"):  # as Locale does: a literal block follows
                translation += "\n\n   dummy literal"
            patch = publish_msgstr(
                self.app, translation, f"{node.source}.rst", node.line, self.config,
                self.document.settings,
            )
            if not isinstance(patch, nodes.paragraph):
                continue
            updater = _NodeUpdater(node, patch, self.document, noqa=False)
            updater.update_autofootnote_references()
            updater.update_refnamed_references()
            updater.update_refnamed_footnote_references()
            updater.update_citation_references()
            updater.update_pending_xrefs()
            updater.update_leaves()
            node["translated"] = True
            node["translatable"] = False  # Locale leaves it alone


class TranslateTocCaptions(SphinxTransform):
    """Translate the parts' captions of the table of contents ("Part I: Foundations").

    sphinx-external-toc inserts the book's toctrees (from ``_toc.yml``) into the
    root page after Sphinx's Locale transform has run (priority 100 against
    20), so their captions, which the gettext builder does extract into the
    root page's catalogue, would stay in English.
    """

    default_priority = 101

    def apply(self, **kwargs) -> None:
        if edition(self.config) == "en":
            return
        toctrees = list(self.document.findall(addnodes.toctree))
        if not any(node.get("caption") for node in toctrees):
            return
        catalog = _page_catalogue(self)
        if catalog is None:
            return
        for node in toctrees:
            if node.get("caption"):
                node["caption"] = node["rawcaption"] = catalog.gettext(node["caption"])


def _on_config_inited(app: Sphinx, config) -> None:
    options = dict(config.html_theme_options or {})
    if edition(config) == "ko":
        options["search_bar_text"] = "이 책에서 검색..."
    end = options.get("article_header_end", "article-header-buttons.html")
    end = [end] if isinstance(end, str) else list(end)
    if "edition-switch.html" not in end:
        end.insert(0, "edition-switch.html")
    options["article_header_end"] = end
    config.html_theme_options = options


def _on_page_context(app: Sphinx, pagename, templatename, context, doctree) -> None:
    this = edition(app.config)
    other = "ko" if this == "en" else "en"
    url = other_edition_url(pagename, this, other)
    context["edition_switch"] = {
        "url": url,
        "lang": other,
        "label": EDITIONS[other][0],
        "title": "이 페이지를 한국어로 읽기" if other == "ko" else "Read this page in English",
    }
    base = app.config.html_baseurl
    if base:
        root = base.removesuffix(EDITIONS[this][1]) if EDITIONS[this][1] else base
        root = root if root.endswith("/") else root + "/"
        links = "".join(
            f'<link rel="alternate" hreflang="{code}" href="{root}{folder}{pagename}.html">\n'
            for code, (_, folder) in EDITIONS.items()
        )
        context["metatags"] = context.get("metatags", "") + links


def _on_build_finished(app: Sphinx, exception) -> None:
    """Korean edition: the download button gives the Korean notebook."""
    if exception is not None or app.builder.format != "html":
        return
    if edition(app.config) != "ko":
        return
    sources = Path(app.outdir) / "_sources"
    for notebook in sorted((Path(app.srcdir) / KOREAN_NOTEBOOKS).glob("*.ipynb")):
        target = sources / "notebooks" / notebook.name
        if target.exists():
            shutil.copyfile(notebook, target)


def korean_config(config: dict) -> dict:
    """Return the Korean edition's ``_config.yml`` made from the English one."""
    config = json.loads(json.dumps(config))
    base = config["html"]["baseurl"]
    config["title"] = "한 단계씩 만드는 트랜스포머"
    config["author"] = "《한 단계씩 만드는 트랜스포머》 저자들"
    config["html"]["baseurl"] = base + EDITIONS["ko"][1]
    config["repository"]["path_to_book"] = str(KOREAN_NOTEBOOKS.parent).replace("\\", "/")
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    # The notebooks' links to the published book start with the English
    # site's address; in this edition they lead to its own pages.
    sphinx["book_site_url"] = base
    sphinx["language"] = "ko"
    # myst-nb's toggle of a hidden cell ("Show code cell content")
    sphinx["nb_code_prompt_show"] = "코드 셀 보기"
    sphinx["nb_code_prompt_hide"] = "코드 셀 숨기기"
    sphinx["html_search_language"] = "ko"
    return config


def setup(app: Sphinx) -> dict:
    app.add_search_language(KoreanSearch)
    app.connect("doctree-read", _untranslatable)
    app.connect("config-inited", _on_config_inited)
    app.connect("builder-inited", _theme_words_first)
    app.connect("html-page-context", _on_page_context)
    app.connect("build-finished", _on_build_finished)
    app.add_transform(SortGlossary)
    app.add_transform(TranslateDocstrings)
    app.add_transform(TranslateTocCaptions)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    # python book/_ext/editions.py ko-config _config.yml OUT.yml
    import yaml

    if len(sys.argv) != 4 or sys.argv[1] != "ko-config":
        sys.exit("usage: editions.py ko-config _config.yml OUT.yml")
    english = yaml.safe_load(Path(sys.argv[2]).read_text(encoding="utf-8"))
    out = Path(sys.argv[3])
    out.parent.mkdir(parents=True, exist_ok=True)
    korean = korean_config(english)
    # Jupyter Book finds local extensions relative to the configuration file
    # (every other path is relative to the book's root).
    extensions = korean["sphinx"].get("local_extensions", {})
    for name, folder in extensions.items():
        here = Path(sys.argv[2]).resolve().parent / folder
        extensions[name] = os.path.relpath(here, out.resolve().parent)
    out.write_text(
        "# Generated by book/_ext/editions.py from _config.yml: the Korean edition.\n"
        + yaml.safe_dump(korean, allow_unicode=True, sort_keys=False),
        encoding="utf-8",
    )
