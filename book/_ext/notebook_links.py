"""Sphinx extension: the notebooks' links to the published book, made local and checked.

The chapters are read in three places: this HTML book, JupyterLab and Colab.
The last two render plain Markdown, where MyST roles such as ``{term}`` and
``{cite}`` show up literally. So the notebooks' Markdown links glossary terms
and citations to the published site, built from the one site setting
``html_baseurl`` (``html.baseurl`` in ``_config.yml``)::

    a [batch](https://transformer-step-by-step.github.io/book/book/glossary.html#term-batch)
    ([Vaswani et al., 2017](https://transformer-step-by-step.github.io/book/book/references.html#cite-vaswani2017attention))

A glossary anchor is Sphinx's id of the term (:func:`term_anchor`); a
bibliography anchor is ``cite-`` and the BibTeX key (:func:`cite_anchor`, set
through sphinxcontrib-bibtex's ``bibtex_cite_id``).

In the built book, a post-transform turns every link that starts with
``html_baseurl`` back into a relative link to the page, so the book works
offline and from any address, and checks its target. The page must be in the
book; an anchor on the glossary's page (or any ``term-`` anchor) must be a
glossary term of that page, an anchor on the bibliography's page (or any
``cite-`` anchor) an entry of that bibliography, any other anchor an id of
that page; otherwise the build warns (and ``-W`` fails it), just as a broken
``{term}`` or ``{cite}`` role would. A link to the site's host that does not
start with ``html_baseurl`` warns too.

Plain Markdown has no admonitions either: a block quote whose first paragraph
is a bold title starting with "Pitfall", "Warning", "Note" or "Tip" becomes an
admonition of that kind, titled with that text::

    > **Pitfalls**
    >
    > - ...
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from docutils import nodes
from docutils.nodes import make_id as _docutils_make_id
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.nodes import _make_id as _sphinx_make_id

logger = logging.getLogger(__name__)

#: sphinxcontrib-bibtex's id template for bibliography entries (``bibtex_cite_id``).
CITE_ID = "cite-{key}"
#: Where the glossary and the bibliography live (Sphinx document names).
GLOSSARY_DOC = "book/glossary"
REFERENCES_DOC = "book/references"

ADMONITION_TITLE = re.compile(r"^(Pitfall|Warning|Note|Tip)s?\b")
ADMONITION_CLASS = {"Pitfall": "warning", "Warning": "warning", "Note": "note", "Tip": "tip"}


def term_anchor(term: str) -> str:
    """Return the anchor Sphinx gives a glossary term, e.g. ``term-padding-mask``.

    Sphinx keeps the term's case (``term-Adam``) and turns every run of other
    characters into one hyphen (``key/value cache`` -> ``term-key-value-cache``).
    """
    return _sphinx_make_id(f"term-{term}")


def cite_anchor(key: str) -> str:
    """Return the anchor of a BibTeX key's entry, e.g. ``cite-vaswani2017attention``."""
    return _docutils_make_id(CITE_ID.format(key=key))


def page_url(base_url: str, docname: str, anchor: str = "") -> str:
    """Return the published address of a page of the book (and an anchor on it)."""
    base = base_url if base_url.endswith("/") else base_url + "/"
    return f"{base}{docname}.html" + (f"#{anchor}" if anchor else "")


def glossary_url(base_url: str, term: str) -> str:
    """Return the published address of a glossary term."""
    return page_url(base_url, GLOSSARY_DOC, term_anchor(term))


def citation_url(base_url: str, key: str) -> str:
    """Return the published address of a bibliography entry."""
    return page_url(base_url, REFERENCES_DOC, cite_anchor(key))


class SiteLinksToLocal(SphinxPostTransform):
    """Turn links to the published book into checked, relative links."""

    # Before Sphinx's own reference resolver (10): the output is final either way.
    default_priority = 5

    def run(self, **kwargs) -> None:
        # The Korean edition's pages link to the English site's address, as
        # the notebooks do (book_site_url; see book/_ext/editions.py).
        base = self.config.book_site_url or self.config.html_baseurl
        if not base:
            return
        base = base if base.endswith("/") else base + "/"
        host = urlsplit(base).netloc
        for node in list(self.document.findall(nodes.reference)):
            uri = node.get("refuri", "")
            if uri.startswith(base):
                self._localize(node, uri, base)
            elif uri and urlsplit(uri).netloc == host:
                self._warn(
                    node,
                    f"link to {uri} points at the book's site but does not start with "
                    f"html_baseurl ({base})",
                )

    def _warn(self, node: nodes.Node, message: str) -> None:
        logger.warning(message, location=node, type="notebook_links", subtype="target")

    def _localize(self, node: nodes.reference, uri: str, base: str) -> None:
        path, _, anchor = uri[len(base) :].partition("#")
        if path in ("", "index.html"):
            docname = self.config.root_doc
        elif path.endswith(".html"):
            docname = path[: -len(".html")]
        else:
            self._warn(node, f"link to {uri} is not a page of the book (expected .../<page>.html)")
            return
        if docname not in self.env.all_docs:
            self._warn(node, f"link to {uri}: the book has no page {docname!r}")
            return
        title = None
        classes: list[str] = []
        terms, citations = _terms(self.env), _citations(self.env)
        term_pages = {page for page, _ in terms}
        citation_pages = {page for page, _ in citations}
        if anchor and (anchor.startswith("term-") or docname in term_pages):
            if (docname, anchor) not in terms:
                self._warn(node, f"link to {uri}: {anchor!r} is not a glossary term of {docname}")
                return
            classes = ["xref", "std", "std-term"]
        elif anchor and (anchor.startswith("cite-") or docname in citation_pages):
            citation = citations.get((docname, anchor))
            if citation is None:
                self._warn(
                    node,
                    f"link to {uri}: {anchor!r} is not a bibliography entry of {docname} "
                    f"(a BibTeX key's anchor is {cite_anchor('<key>')!r})",
                )
                return
            title = citation.formatted_entry.text.render_as("text")
        elif anchor and anchor not in _ids(self.env, docname):
            self._warn(node, f"link to {uri}: page {docname} has no anchor {anchor!r}")
            return

        relative = self.app.builder.get_relative_uri(self.env.docname, docname)
        local = relative + (f"#{anchor}" if anchor else "")
        new = nodes.reference("", "", internal=True, refuri=local or "#")
        new["classes"] = list(node.get("classes", []))
        if title:
            new["reftitle"] = title
        children = [child.deepcopy() for child in node.children]
        if classes:
            new += nodes.inline("", "", *children, classes=classes)
        else:
            new.extend(children)
        node.replace_self(new)


def _terms(env) -> dict[tuple[str, str], str]:
    """{(document, anchor): term} for every glossary term of the book."""
    std = env.get_domain("std")
    return {
        (entry[0], entry[1]): name
        for (objtype, name), entry in std.objects.items()
        if objtype == "term"
    }


def _citations(env) -> dict:
    """{(document, anchor): citation} for every entry of every bibliography."""
    try:
        domain = env.get_domain("cite")
    except Exception:  # sphinxcontrib-bibtex not loaded: no bibliography
        return {}
    return {
        (citation.bibliography_key.docname, citation.citation_id): citation
        for citation in domain.citations
    }


def _ids(env, docname: str) -> set[str]:
    """Every id in a document (sections, labels, targets)."""
    doctree = env.get_doctree(docname)
    return {id_ for element in doctree.findall(nodes.Element) for id_ in element.get("ids", [])}


class QuoteToAdmonition(SphinxTransform):
    """A block quote titled ``**Pitfalls**`` (or Warning, Note, Tip) becomes an admonition."""

    # Before Sphinx's Locale transform (20), so that the Korean edition
    # translates the title ("Pitfalls") like any other message.
    default_priority = 15

    def apply(self, **kwargs) -> None:
        for quote in list(self.document.findall(nodes.block_quote)):
            if not quote.children or not isinstance(quote[0], nodes.paragraph):
                continue
            first = [
                child
                for child in quote[0].children
                if not (isinstance(child, nodes.Text) and not child.strip())
            ]
            if len(first) != 1 or not isinstance(first[0], nodes.strong):
                continue
            title_text = first[0].astext().strip()
            match = ADMONITION_TITLE.match(title_text)
            if not match:
                continue
            kind = ADMONITION_CLASS[match.group(1)]
            title = nodes.title(title_text, "", *[child.deepcopy() for child in first[0].children])
            # A title with a source is a message of the page (the Korean edition translates it).
            title.source, title.line = quote[0].source, quote[0].line
            admonition = nodes.admonition("", title, classes=[kind])
            admonition.source, admonition.line = quote.source, quote.line
            admonition.extend(child.deepcopy() for child in quote.children[1:])
            quote.replace_self(admonition)


def _check_config(app: Sphinx, config) -> None:
    cite_id = getattr(config, "bibtex_cite_id", None)
    if cite_id is not None and cite_id != CITE_ID:
        raise ExtensionError(
            f"notebook_links expects bibtex_cite_id = {CITE_ID!r} (the notebooks' "
            f"bibliography anchors), got {cite_id!r}"
        )


def setup(app: Sphinx) -> dict:
    app.add_config_value("book_site_url", "", "env")
    app.connect("config-inited", _check_config, priority=900)
    app.add_transform(QuoteToAdmonition)
    app.add_post_transform(SiteLinksToLocal)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
