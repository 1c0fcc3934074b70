"""Sphinx extension: the book's own front-end files, and fixes to its pages.

Explorers (``transformer_edu.figures.explorer.Explorer``):
    The site serves ``_static/explorers.js`` and ``_static/explorers.css``
    (copied from ``transformer_edu/assets/explorer/``) and
    ``_static/plotly-cartesian.min.js`` (Plotly with the three cartesian
    traces the explorers draw: scatter, bar and heatmap; ``.ci/npm`` bundles
    it with esbuild from ``book/_frontend/plotly-cartesian.js`` and the
    ``plotly.js`` package pinned by ``package-lock.json``, into
    ``node_modules/.book/``). Only pages that hold an
    explorer load the first two; the script loads Plotly itself after the
    first paint. The copy of the script that each explorer carries inline for
    Jupyter is dropped from the book's pages. No page uses a CDN.

Page fixes, applied to every written HTML file:
    - Korean is marked: each run of Hangul in a text node is wrapped in
      ``<span lang="ko">`` (not inside ``<script>``, ``<style>``,
      ``<title>``, ``<textarea>``, ``<option>``, SVG, math, or attributes).
    - The theme's ``fontawesome.js`` (1.5 MB, turns icons into SVG) is not
      loaded: the theme's CSS draws the same icons with its web font.
    - Only the search page loads ``searchtools.js``, ``language_data.js``
      and ``searchindex.js`` (230 kB): elsewhere the search box is a form
      that opens that page.
      sphinx-design's stylesheet (55 kB) is loaded only by a page that uses
      one of its components (a ``sd-`` class); no page does today.
    - The theme's Font Awesome web fonts (270 kB, 1 400 icons) are cut down
      (fontTools) to the icons the site shows: those named by an ``fa-``
      class on a page, and those the theme's and the book's stylesheets draw
      themselves (admonitions, links, ``--pst-icon-*``); the stylesheet's
      rules for the other icons' classes (67 kB) go too.
    - Scripts in ``<head>`` are deferred, so they do not hold back the first
      paint; the saved ipywidgets state (no widget manager runs in the book)
      is dropped; figures load lazily, as the reader scrolls to them.
    - myst-nb's toggle of hidden cells gets no ``aria-label``, so its
      accessible name is its visible text ("Show code cell content").
    - Inline scripts registered twice (sphinx-thebe's ``THEBE_JS_URL``,
      sphinx-togglebutton's) appear once: the second copy raised
      "Identifier 'THEBE_JS_URL' has already been declared".

The build needs no Python package beyond Jupyter Book (not even
``transformer_edu``'s dependencies): files are read from the source tree.
"""

from __future__ import annotations

import re
import shutil
import sys
from html import escape
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

PLOTLY_NPM = Path("node_modules") / ".book"
PLOTLY_FILE = "plotly-cartesian.min.js"
EXPLORER_DIR = Path("transformer_edu") / "assets" / "explorer"
ASSETS = {  # name in _static: source, relative to the book's root
    PLOTLY_FILE: PLOTLY_NPM / PLOTLY_FILE,
    "explorers.js": EXPLORER_DIR / "explorer.js",
    "explorers.css": EXPLORER_DIR / "explorer.css",
}
EXPLORER_MARK = 'class="tse-explorer"'

# --------------------------------------------------------------------------
# Static files
# --------------------------------------------------------------------------


def asset_sources(srcdir: str | Path) -> dict[str, Path]:
    """The source of every file the extension serves, checked to exist."""
    root = Path(srcdir)
    sources = {name: root / path for name, path in ASSETS.items()}
    if not sources[PLOTLY_FILE].is_file():
        raise ExtensionError(
            f"{sources[PLOTLY_FILE]} is missing: run `bash .ci/npm` in the "
            "repository root (bash .ci/setup does), which installs the "
            "front-end packages pinned in package-lock.json and bundles the "
            "book's Plotly"
        )
    for name, path in sources.items():
        if not path.is_file():
            raise ExtensionError(f"{path} is missing (served as {name})")
    return sources


def _on_config_inited(app: Sphinx, config) -> None:
    """Copy the assets into a folder of the build and serve it as static."""
    folder = Path(app.outdir).parent / "_book_assets"
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in asset_sources(app.srcdir).items():
        target = folder / name
        if not target.exists() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)
    config.html_static_path = list(config.html_static_path) + [str(folder)]


# --------------------------------------------------------------------------
# Per page
# --------------------------------------------------------------------------


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    if EXPLORER_MARK in context.get("body", ""):
        app.add_css_file("explorers.css")
        app.add_js_file(
            "explorers.js", loading_method="defer", **{"data-tse-explorers": "1"}
        )
    _drop_repeated_inline_scripts(context)


def _drop_repeated_inline_scripts(context) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set = set()
    unique = []
    for script in scripts:
        attributes = getattr(script, "attributes", {})
        # Registered once with filename None and once with "": one script.
        key = (
            str(getattr(script, "filename", script) or ""),
            tuple(sorted(attributes.items())),
        )
        if key in seen and "body" in attributes:
            continue
        seen.add(key)
        unique.append(script)
    context["script_files"] = unique


def _visit_hidden_cell(self, node) -> None:
    """myst-nb's toggle of a hidden cell, named by its visible text."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append("<summary>\n")
    self.body.append(
        f'<p class="collapsed admonition-title">'
        f"{escape(node['prompt_show'])}</p>\n"
    )
    self.body.append(
        f'<p class="expanded admonition-title">'
        f"{escape(node['prompt_hide'])}</p>\n"
    )
    self.body.append("</summary>\n")


def _depart_hidden_cell(self, node) -> None:
    self.body.append("</details>\n")


def _on_builder_inited(app: Sphinx) -> None:
    try:
        from myst_nb.sphinx_ import HideCodeCellNode
    except ImportError:  # pragma: no cover - jupyter-book brings myst-nb
        return
    app.add_node(
        HideCodeCellNode,
        override=True,
        html=(_visit_hidden_cell, _depart_hidden_cell),
    )


# --------------------------------------------------------------------------
# The written pages
# --------------------------------------------------------------------------

HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
HANGUL_RUN = re.compile(f"[{HANGUL}]+(?:[ \u00a0]+[{HANGUL}]+)*")
# Comments, raw-text elements (kept whole), tags, and text between them.
_TOKENS = re.compile(
    r"(<!--.*?-->|<!\[CDATA\[.*?\]\]>|<!.*?>"
    r"|<script\b[^>]*>.*?</script\s*>|<style\b[^>]*>.*?</style\s*>"
    r"|<textarea\b[^>]*>.*?</textarea\s*>|<title\b[^>]*>.*?</title\s*>"
    r"|</?[A-Za-z][^>]*>)",
    re.DOTALL | re.IGNORECASE,
)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)([^>]*)>", re.DOTALL)
_SKIP_TAGS = {"svg", "math", "option"}
_MATH_CLASS = re.compile(r"""class\s*=\s*["'][^"']*\bmath\b""")
_LANG_ATTR = re.compile(r"""\blang\s*=\s*["']?ko""", re.IGNORECASE)
_VOID = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link",
    "meta", "param", "source", "track", "wbr",
}


def wrap_hangul(page: str) -> str:
    """Wrap each run of Hangul in the page's text in ``<span lang="ko">``.

    Runs of Hangul words separated by spaces become one span. Text inside
    ``<script>``, ``<style>``, ``<title>``, ``<textarea>``, ``<option>``,
    ``<svg>``, ``<math>``, math markup (``class="math"``) and elements that
    are already ``lang="ko"`` is left alone, as are attributes.
    """
    out = []
    skip_tag: str | None = None  # the element we are inside and skipping
    depth = 0
    for token in _TOKENS.split(page):
        if not token:
            continue
        if token.startswith("<"):
            out.append(token)
            match = _TAG.match(token)
            if not match or token.startswith(("<!", "<script", "<style")):
                continue
            closing, name, attributes = match.groups()
            name = name.lower()
            if skip_tag is not None:
                if name == skip_tag and name not in _VOID:
                    if closing:
                        depth -= 1
                        if depth == 0:
                            skip_tag = None
                    elif not attributes.rstrip().endswith("/"):
                        depth += 1
                continue
            if closing or name in _VOID or attributes.rstrip().endswith("/"):
                continue
            if (
                name in _SKIP_TAGS
                or _MATH_CLASS.search(attributes)
                or _LANG_ATTR.search(attributes)
            ):
                skip_tag, depth = name, 1
            continue
        if skip_tag is None and HANGUL_RUN.search(token):
            token = HANGUL_RUN.sub(
                lambda m: f'<span lang="ko">{m.group(0)}</span>', token
            )
        out.append(token)
    return "".join(out)


_FONTAWESOME_JS = re.compile(
    r'[ \t]*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*">'
    r"</script>\n?"
)
_SEARCH_SCRIPTS = re.compile(
    r'[ \t]*<script (?:defer )?src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)'
    r'[^"]*"></script>\n?'
)
_SPHINX_DESIGN_CSS = re.compile(
    r'[ \t]*<link rel="stylesheet" type="text/css" href="[^"]*_static/sphinx-design\.min\.css[^"]*" />\n?'
)
_INLINE_EXPLORER = re.compile(
    r'<script data-tse-inline="1">.*?</script>\n?', re.DOTALL
)
_WIDGET_STATE = re.compile(
    r'[ \t]*<script type="application/vnd\.jupyter\.widget-state\+json">'
    r".*?</script>\n?",
    re.DOTALL,
)
_BLOCKING_SCRIPT = re.compile(
    r'<script (?![^>]*\b(?:defer|async|type)\b)([^>]*\bsrc="[^"]*"[^>]*)>'
    r"</script>"
)


def defer_head_scripts(page: str) -> str:
    """Give every external script of ``<head>`` the ``defer`` attribute.

    Sphinx and the theme load a dozen scripts (and the 90 kB search index)
    synchronously in ``<head>``, which holds back the first paint. Deferred
    scripts still run in the same order, before ``DOMContentLoaded``; the
    head's inline scripts only set variables.
    """
    end = page.find("</head>")
    if end < 0:
        return page
    head = _BLOCKING_SCRIPT.sub(r"<script defer \1></script>", page[:end])
    return head + page[end:]


_OUTPUT_IMAGE = re.compile(r'<img (?![^>]*\bloading=)([^>]*\bsrc="[^"]*_images/[^"]*")')


def lazy_images(page: str) -> str:
    """Let the browser fetch the page's figures (``_images/``) as the reader
    scrolls to them: ``loading="lazy"``. myst-nb writes each figure's width
    and height, so nothing moves when one arrives."""
    return _OUTPUT_IMAGE.sub(r'<img loading="lazy" \1', page)


def fix_page(page: str, *, search_page: bool = False) -> str:
    """Every change this extension makes to a written HTML page
    (``search_page``: the page that runs the search, ``search.html``)."""
    page = lazy_images(page)
    if not search_page:
        page = _SEARCH_SCRIPTS.sub("", page)
    if 'class="sd-' not in page:
        page = _SPHINX_DESIGN_CSS.sub("", page)
    # docutils marks a citation role="doc-biblioentry" inside a role="list":
    # a list's children must be list items (axe aria-required-children,
    # critical); doc-biblioentry is deprecated in ARIA 1.3 anyway.
    page = page.replace('role="doc-biblioentry"', 'role="listitem"')
    page = _FONTAWESOME_JS.sub("", page)
    page = _INLINE_EXPLORER.sub("", page)
    # No widget manager is loaded (nb_ipywidgets_js is empty): the saved
    # widget state would be dead weight.
    page = _WIDGET_STATE.sub("", page)
    page = defer_head_scripts(page)
    return wrap_hangul(page)


def _on_build_finished(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    pages = []
    for path in outdir.rglob("*.html"):
        if "_static" in path.relative_to(outdir).parts:
            continue
        text = path.read_text(encoding="utf-8")
        fixed = fix_page(text, search_page=path == outdir / "search.html")
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")
        pages.append(fixed)
    subset_icon_fonts(outdir, pages)


# --------------------------------------------------------------------------
# The icon fonts
# --------------------------------------------------------------------------

_ICON_FONTS = ("fa-solid-900.woff2", "fa-regular-400.woff2", "fa-brands-400.woff2")
_ICON_RULE = re.compile(r'([^{}]*)\{[^{}]*?content:\s*"\\(f[0-9a-f]{3,4})"')
_ICON_VARIABLE = re.compile(r'--pst-icon-[a-z0-9-]+:\s*"\\?(f[0-9a-f]{3,4}|[\uf000-\uf8ff])"')
_ICON_CLASS = re.compile(r"\bfa-[a-z0-9-]+")
# A rule that only maps icon classes to a code point: .fa-a:before,.fa-b:before{content:"\f…"}
_CLASS_ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:before,?)+)\{content:"\\f[0-9a-f]{3,4}"\}')
_RULE_CLASSES = re.compile(r"\.(fa-[a-z0-9-]+):before")


def used_icons(css_texts: list[str], named: set[str]) -> set[int]:
    """The code points of the icons the site shows.

    An icon is shown when a page names it by class (``named``, e.g.
    ``fa-github``: the
    stylesheets map the class to a code point) or a stylesheet draws it
    itself: a ``content`` rule whose selector names no ``fa-`` class, or a
    ``--pst-icon-*`` variable (the theme's admonitions and links).
    """
    by_class: dict[str, int] = {}
    drawn: set[int] = set()
    for css in css_texts:
        for selector, code in _ICON_RULE.findall(css):
            point = int(code, 16)
            names = re.findall(r"\.(fa-[a-z0-9-]+)", selector)
            if names:
                for name in names:
                    by_class[name] = point
            else:
                drawn.add(point)
        for value in _ICON_VARIABLE.findall(css):
            drawn.add(ord(value) if len(value) == 1 else int(value, 16))
    return drawn | {by_class[name] for name in named if name in by_class}


def subset_icon_fonts(outdir: Path, pages: list[str]) -> None:
    """Cut the Font Awesome web fonts down to :func:`used_icons` (see the module's docstring)."""
    fonts = [outdir / "_static" / "vendor" / "fontawesome" / "webfonts" / name for name in _ICON_FONTS]
    fonts = [font for font in fonts if font.is_file()]
    if not fonts:
        return
    try:
        from fontTools import subset
        from fontTools.ttLib import TTFont
        import brotli  # noqa: F401  (fontTools writes WOFF2 with it)
    except ImportError as error:  # requirements-book.txt lists both
        raise RuntimeError(f"book_assets: subsetting the icon fonts needs fonttools and brotli ({error})")
    css_files = list((outdir / "_static").rglob("*.css"))
    css_texts = [path.read_text(encoding="utf-8") for path in css_files]
    named = {name for page in pages for name in _ICON_CLASS.findall(page)}  # the classes pages use
    points = used_icons(css_texts, named)
    for path, css in zip(css_files, css_texts):
        trimmed = _CLASS_ICON_RULE.sub(lambda m: m.group(0) if set(_RULE_CLASSES.findall(m.group(1))) & named else "", css)
        if trimmed != css:
            path.write_text(trimmed, encoding="utf-8")
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = []
    options.notdef_outline = True
    for path in fonts:
        font = TTFont(path)
        subsetter = subset.Subsetter(options=options)
        subsetter.populate(unicodes=points)
        subsetter.subset(font)
        font.flavor = "woff2"
        font.save(path)


# --------------------------------------------------------------------------
# The API reference
# --------------------------------------------------------------------------


_SHAPE_ITEM = re.compile(r"^(\s*[-*]\s*[^:]+:\s*)(\([^)]*\))(.*)$")


def _shapes_as_literals(app, what, name, obj, options, lines):
    """Write the shapes of a ``Shape:`` section as code: ``(*, V)``.

    Runs before napoleon. A shape such as ``(*, V)`` is also an unfinished
    reStructuredText emphasis; as a literal it reads as code and stays intact.
    """
    in_shape = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.endswith(":") and not line.startswith(" "):
            in_shape = stripped == "Shape:"
            continue
        if in_shape:
            match = _SHAPE_ITEM.match(line)
            if match:
                head, shape, rest = match.groups()
                lines[index] = f"{head}``{shape}``{rest}"


_LENGTH_BARS = re.compile(r"(?<![\\`|])\|([A-Za-z])\|")


def _length_bars_as_text(app, what, name, obj, options, lines):
    """Keep ``|Y|`` (the length of Y) as text: reStructuredText would read it
    as a substitution and fail the build."""
    for index, line in enumerate(lines):
        lines[index] = _LENGTH_BARS.sub(r"\\|\1\\|", line)


def _attribute_docstring_is_prose(app, what, name, obj, options, lines):
    """Undo napoleon's reading of "Text: more text" as "type: description".

    Runs after napoleon. The package documents its constants in prose ("The
    widest figure, in inches: …"); napoleon takes everything before the
    first colon of an attribute's docstring for a type. Put it back in front
    of the description.
    """
    if what not in ("attribute", "data"):
        return
    for index, line in enumerate(lines):
        if line.startswith(":type: "):
            prose = line.removeprefix(":type: ")
            del lines[index]
            if index and not lines[index - 1].strip():
                del lines[index - 1]
            first = next((i for i, text in enumerate(lines) if text.strip()), None)
            if first is None:
                lines.append(prose)
            else:
                lines[first] = f"{prose}: {lines[first].lstrip()}"
            return


def _resolve_package_names(app, env, node, contnode):
    """Resolve ``transformer_edu.Name`` and bare ``Name`` to the one object
    of the package documented as ``transformer_edu.<module>.Name``.

    The chapters use the package's top-level names (``te.causal_mask``) and
    docstrings name siblings from other modules; the reference documents each
    object once, under the module that defines it.
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    name = target.removeprefix("transformer_edu.")
    if not name or "." in name:
        return None
    domain = env.get_domain("py")
    matches = [
        full
        for full, entry in domain.objects.items()
        if full.startswith("transformer_edu.")
        and full.rsplit(".", 1)[-1] == name
        and not entry.aliased
    ]
    if len(matches) != 1:
        return None
    (full,) = matches
    entry = domain.objects[full]
    return domain.resolve_xref(
        env, node.get("refdoc"), app.builder, entry.objtype, full, node, contnode
    ) or domain.resolve_xref(
        env, node.get("refdoc"), app.builder, "obj", full, node, contnode
    )


def setup(app: Sphinx) -> dict:
    # The API reference (book/api.md) imports transformer_edu from the
    # checkout, its heavy dependencies mocked (autodoc_mock_imports).
    root = str(Path(app.srcdir).resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
    app.connect("config-inited", _on_config_inited)
    app.connect("builder-inited", _on_builder_inited)
    app.connect("html-page-context", _on_page_context)
    app.connect("build-finished", _on_build_finished)
    # napoleon handles docstrings at the default priority, 500
    app.connect(
        "autodoc-process-docstring", _shapes_as_literals, priority=400
    )
    app.connect(
        "autodoc-process-docstring", _length_bars_as_text, priority=400
    )
    app.connect(
        "autodoc-process-docstring", _attribute_docstring_is_prose, priority=600
    )
    app.connect("missing-reference", _resolve_package_names)
    return {
        "version": "2.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
