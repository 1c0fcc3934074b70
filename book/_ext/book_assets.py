"""Sphinx extension: serve Plotly's JavaScript from the built site.

The figures in the notebooks are stored without Plotly's 4 MB bundle (made
with ``include_plotlyjs=False``); their loader uses the global ``Plotly``. This
extension copies ``plotly.min.js`` from the installed ``plotly`` package into
``book/_static/`` (git-ignored) before the build, and ``_config.yml`` loads it
on every page through ``html_js_files``. Every build therefore serves the
version of Plotly that wrote the figures, with no CDN involved.

It also drops repeated inline scripts from each page: sphinx-thebe registers
its ``const THEBE_JS_URL = ...`` snippet (and sphinx-togglebutton its own)
both with Sphinx and with the HTML builder, and the second copy raises "Identifier 'THEBE_JS_URL' has already
been declared" in the browser.
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

STATIC_DIR = Path("book") / "_static"


def plotly_js_source() -> Path:
    """Return the path of ``plotly.min.js`` inside the installed plotly package."""
    try:
        import plotly
    except ImportError as error:  # pragma: no cover - plotly is a requirement
        raise ExtensionError(
            "plotly is not installed; run `pip install -r requirements.txt`"
        ) from error
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise ExtensionError(f"plotly.min.js not found in the plotly package: {path}")
    return path


def copy_plotly_js(srcdir: str | Path) -> Path:
    """Copy ``plotly.min.js`` into ``<srcdir>/book/_static/`` when it is missing or stale."""
    source = plotly_js_source()
    target = Path(srcdir) / STATIC_DIR / "plotly.min.js"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists() or not filecmp.cmp(source, target, shallow=False):
        shutil.copyfile(source, target)
    return target


def _on_config_inited(app: Sphinx, config) -> None:
    copy_plotly_js(app.srcdir)


def _drop_repeated_inline_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set = set()
    unique = []
    for script in scripts:
        attributes = getattr(script, "attributes", {})
        # Registered once with filename None and once with "": the same script.
        key = (str(getattr(script, "filename", script) or ""), tuple(sorted(attributes.items())))
        if key in seen and "body" in attributes:
            continue
        seen.add(key)
        unique.append(script)
    context["script_files"] = unique


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _on_config_inited)
    app.connect("html-page-context", _drop_repeated_inline_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
