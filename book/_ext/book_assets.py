"""Sphinx extension: the book's own front-end files, and fixes to its pages.

Explorers (``transformer_edu.interactive.Explorer``):
    The site serves ``_static/explorers.js`` and ``_static/explorers.css``
    (copied from ``transformer_edu/assets/explorer/``) and
    ``_static/plotly-cartesian.min.js`` (Plotly's cartesian bundle from npm:
    ``node_modules/plotly.js-cartesian-dist-min``, pinned by
    ``package-lock.json``, installed by ``npm ci``). Only pages that hold an
    explorer load the first two; the script loads Plotly itself after the
    first paint. The copy of the script that each explorer carries inline for
    Jupyter is dropped from the book's pages. No page uses a CDN.

Inline scripts registered twice (sphinx-thebe's ``THEBE_JS_URL``,
sphinx-togglebutton's) appear once: the second copy raised "Identifier
'THEBE_JS_URL' has already been declared".

The build needs no Python package beyond Jupyter Book (not even
``transformer_edu``'s dependencies): files are read from the source tree.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

PLOTLY_NPM = Path("node_modules") / "plotly.js-cartesian-dist-min"
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
            f"{sources[PLOTLY_FILE]} is missing: run `npm ci` in the "
            "repository root (bash .ci/setup does), which installs the "
            "front-end packages pinned in package-lock.json"
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


# --------------------------------------------------------------------------
# The written pages
# --------------------------------------------------------------------------

_INLINE_EXPLORER = re.compile(
    r'<script data-tse-inline="1">.*?</script>\n?', re.DOTALL
)
def fix_page(page: str) -> str:
    """Every change this extension makes to a written HTML page."""
    return _INLINE_EXPLORER.sub("", page)


def _on_build_finished(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for path in outdir.rglob("*.html"):
        if "_static" in path.relative_to(outdir).parts:
            continue
        text = path.read_text(encoding="utf-8")
        fixed = fix_page(text)
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _on_config_inited)
    app.connect("html-page-context", _on_page_context)
    app.connect("build-finished", _on_build_finished)
    return {
        "version": "2.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
