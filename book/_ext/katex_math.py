"""Math typeset when the book is built, with KaTeX: no math script on any page.

Every ``$…$`` and ``$$…$$`` of the book (MyST's dollarmath and amsmath) is
turned into HTML by KaTeX (npm, pinned by ``package-lock.json``) running in
one Node.js process for the whole build. A page with math then carries the
typeset HTML, a MathML copy for screen readers (KaTeX's ``htmlAndMathml``
output) and one stylesheet, ``_static/katex/katex.min.css``, with the fonts
it needs from ``_static/katex/fonts/`` (WOFF2 only; every browser that runs
the book reads it). A page without math loads none of it.

MathJax, which the book used before, typesets in the browser: 1.16 MB of
script on every page with a formula, even a page with three. KaTeX's CSS
and the few fonts a page uses come to a tenth of that, and the formulas
are there at first paint.

A formula KaTeX cannot typeset stops the build with a warning naming the
page and the TeX (the book builds with ``-W``).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
KATEX = ROOT / "node_modules" / "katex"
STATIC = "katex"  # _static/katex/

# One Node.js process: a JSON request per line in, a JSON answer per line out.
SERVER = r"""
const katex = require(process.argv[1]);
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const { tex, display } = JSON.parse(line);
  let answer;
  try {
    answer = { html: katex.renderToString(tex, {
      displayMode: display, output: "htmlAndMathml", throwOnError: true,
      strict: "error", trust: false,
    }) };
  } catch (error) {
    answer = { error: String(error.message || error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
"""


class KaTeX:
    """The build's KaTeX: typesets TeX strings, caching each one."""

    def __init__(self) -> None:
        if not (KATEX / "package.json").is_file():
            raise ExtensionError(
                f"KaTeX is not installed at {KATEX}: run `bash .ci/npm` (npm ci) first"
            )
        node = shutil.which("node")
        if node is None:
            raise ExtensionError("node not found: the book's math needs Node.js 20 or later")
        self.version = json.loads((KATEX / "package.json").read_text(encoding="utf-8"))["version"]
        self.process = subprocess.Popen(
            [node, "-e", SERVER, str(KATEX)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
        )
        self.cache: dict[tuple[str, bool], tuple[str | None, str | None]] = {}

    def render(self, tex: str, display: bool) -> tuple[str | None, str | None]:
        """(html, None) or (None, KaTeX's error message)."""
        key = (tex, display)
        if key not in self.cache:
            self.process.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
            if not line:
                raise ExtensionError("the KaTeX process stopped")
            answer = json.loads(line)
            self.cache[key] = (answer.get("html"), answer.get("error"))
        return self.cache[key]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=10)


_katex: KaTeX | None = None


def katex() -> KaTeX:
    global _katex
    if _katex is None:
        _katex = KaTeX()
    return _katex


def _typeset(node: nodes.Element, tex: str, display: bool) -> str:
    rendered, error = katex().render(tex, display)
    if error is not None:
        logger.warning("KaTeX cannot typeset %r: %s", tex, error, location=node)
        return f'<code class="math-error">{html.escape(tex)}</code>'
    return rendered


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_typeset(node, node.astext(), display=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def display_tex(node: nodes.math_block) -> str:
    """The TeX of a display block as Sphinx's MathJax renderer builds it:
    amsmath environments as written; blank-line separated equations aligned;
    a lone equation with ``\\\\`` split."""
    if node["nowrap"]:
        return node.astext()
    parts = [part for part in node.astext().split("\n\n") if part.strip()]
    parts = [rf"\begin{{split}}{p}\end{{split}}" if r"\\" in p else p for p in parts]
    if len(parts) > 1:
        return r"\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}"
    return parts[0] if parts else ""


def visit_displaymath(self, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"] and not node["nowrap"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(_typeset(node, display_tex(node), display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def fonts_woff2_only(css: str) -> str:
    """KaTeX's stylesheet with each font's WOFF2 file only (no WOFF, no TTF)."""
    return re.sub(
        r'src:url\((fonts/[^)]+\.woff2)\) format\("woff2"\)(?:,url\([^)]+\) format\("[a-z]+"\))*',
        r'src:url(\1) format("woff2")',
        css,
    )


def add_assets(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The KaTeX stylesheet on the pages with math only; on those with display
    math, the book's ``scrollable-math.js`` (a formula too wide for a phone
    scrolls in its box, which then takes keyboard focus)."""
    if app.builder.math_renderer_name != "katex":
        return
    body = context.get("body", "")
    if '<span class="katex">' in body:
        app.add_css_file(f"{STATIC}/katex.min.css", priority=500)  # before the book's CSS
    if '<span class="katex-display">' in body:
        app.add_js_file("scrollable-math.js", loading_method="defer")


def copy_assets(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        if _katex is not None:
            _katex.close()
        return
    out = Path(app.outdir) / "_static" / STATIC
    (out / "fonts").mkdir(parents=True, exist_ok=True)
    css = (KATEX / "dist" / "katex.min.css").read_text(encoding="utf-8")
    (out / "katex.min.css").write_text(fonts_woff2_only(css), encoding="utf-8")
    for font in sorted((KATEX / "dist" / "fonts").glob("*.woff2")):
        shutil.copyfile(font, out / "fonts" / font.name)
    if _katex is not None:
        _katex.close()


def choose_renderer(app: Sphinx, config) -> None:
    config.html_math_renderer = "katex"


def setup(app: Sphinx) -> dict:
    app.add_html_math_renderer("katex", (visit_math, None), (visit_displaymath, None))
    app.connect("config-inited", choose_renderer)
    # before book_assets, which rebuilds the page's list of scripts
    app.connect("html-page-context", add_assets, priority=400)
    app.connect("build-finished", copy_assets)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": False}
