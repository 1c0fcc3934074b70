"""The built book, as a reader's browser shows it.

Serves ``_build/html`` on 127.0.0.1 and opens every page of the book in
headless Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright; set
``CHROMIUM`` to use another binary). Requests to any other host are blocked
and recorded: the book must work offline.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = bs.REPO_ROOT / "artifacts"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
PLOT_TIMEOUT_MS = 15_000
SETTLE_MS = 500

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM)"
)

# What a chapter page must show, read from the outputs stored in its notebook.
COLLECT_FIGURES_JS = """
() => {
  const shown = el => {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && style.visibility !== 'hidden';
  };
  const images = [...document.querySelectorAll('.cell_output img')];
  const plots = [...document.querySelectorAll('.cell_output .plotly-graph-div')];
  const widgets = [...document.querySelectorAll('.cell_output')].filter(out =>
    out.querySelector(':scope > script[type="application/vnd.jupyter.widget-view+json"]'));
  return {
    widgetNotes: widgets.filter(out => {
      const note = getComputedStyle(out, '::before').content;
      return note.includes('kernel') && shown(out);
    }).length,
    images: images.filter(img => img.complete && img.naturalWidth > 0 && shown(img)).length,
    plots: plots.filter(div => div.classList.contains('js-plotly-plot')
                              && div.querySelector('.main-svg') && shown(div)).length,
    plotDivs: plots.length,
  };
}
"""


@dataclass
class PageReport:
    """What happened while one page loaded."""

    url: str
    errors: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    figures: dict = field(default_factory=dict)
    colab_links: list[str] = field(default_factory=list)
    math_elements: int = 0
    typeset_math: int = 0


def expected_figures(notebook: Path) -> dict:
    """Count the figures the book must show for a notebook's stored outputs.

    Each output is rendered as its highest-priority MIME type (myst-nb's order
    for HTML). Outputs of cells tagged to be removed or hidden are not counted.
    """
    from myst_nb.core.render import base_render_priority

    priority = base_render_priority()["html"]
    counts = {"images": 0, "plots": 0, "widgets": 0}
    for cell in bs.read_notebook(notebook)["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] != "code" or tags & {
            "remove-output", "remove-cell", "hide-output", "hide-cell",
        }:
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            candidates = [m for m in data if priority.get(m) is not None]
            if not candidates:
                continue
            mime = min(candidates, key=priority.__getitem__)
            content = data[mime]
            content = "".join(content) if isinstance(content, list) else content
            if mime.startswith("image/"):
                counts["images"] += 1
            elif mime == "application/vnd.jupyter.widget-view+json":
                counts["widgets"] += 1
            elif mime == "text/html" and "plotly-graph-div" in content:
                counts["plots"] += content.count('class="plotly-graph-div"')
    return counts


class Site:
    """The built book served over HTTP and visited by one browser."""

    def __init__(self, base_url: str, context) -> None:
        self.base_url = base_url
        self.context = context

    def url(self, page: str) -> str:
        return f"{self.base_url}/{page}.html"

    def open(self, page: str, report: PageReport | None = None):
        """Open a page, recording errors and blocked requests into ``report``."""
        report = report or PageReport(self.url(page))
        tab = self.context.new_page()
        tab.on("pageerror", lambda error: report.errors.append(f"pageerror: {error}"))
        tab.on(
            "console",
            lambda message: message.type == "error"
            and report.errors.append(f"console: {message.text} @ {message.location}"),
        )

        def only_local(route):
            if urlparse(route.request.url).hostname in LOCAL_HOSTS:
                route.continue_()
            else:
                report.blocked.append(route.request.url)
                route.abort()

        tab.route("**/*", only_local)
        tab.goto(report.url, wait_until="load")
        tab.wait_for_timeout(SETTLE_MS)  # let deferred scripts start what they load
        return tab, report

    @functools.cache
    def visit(self, page: str) -> PageReport:
        """Load a page once, wait for its figures and math, and report on it."""
        tab, report = self.open(page)
        try:
            report.math_elements = tab.locator(".math").count()
            if report.math_elements:
                tab.wait_for_selector("mjx-container", state="attached", timeout=PLOT_TIMEOUT_MS)
                tab.evaluate("() => window.MathJax.startup.promise")
                report.typeset_math = tab.locator("mjx-container").count()
            if tab.locator(".cell_output .plotly-graph-div").count():
                tab.wait_for_function(
                    "() => [...document.querySelectorAll('.cell_output .plotly-graph-div')]"
                    ".every(div => div.classList.contains('js-plotly-plot'))",
                    timeout=PLOT_TIMEOUT_MS,
                )
            report.figures = tab.evaluate(COLLECT_FIGURES_JS)
            report.colab_links = [
                link.get_attribute("href")
                for link in tab.locator('a[href*="colab.research.google.com"]').all()
            ]
        finally:
            tab.close()
        return report


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    missing = [path for path in bs.chapter_notebooks() if not path.exists()]
    if missing:
        numbers = ", ".join(str(bs.chapter_number(path)) for path in missing)
        pytest.skip(f"chapter {numbers} not written yet")
    book = bs.build_book()
    assert book.returncode == 0, book.log[-6000:]

    handler = functools.partial(_QuietHandler, directory=str(book.html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    profile = tmp_path_factory.mktemp("chromium-profile")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                str(profile),
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": 1280, "height": 900},
            )
            try:
                yield Site(f"http://127.0.0.1:{server.server_address[1]}", context)
            finally:
                context.close()
    finally:
        server.shutdown()
        server.server_close()


CHAPTERS = bs.chapter_notebooks()
CHAPTER_IDS = [path.stem for path in CHAPTERS]


def page_of(notebook: Path) -> str:
    return notebook.relative_to(bs.REPO_ROOT).with_suffix("").as_posix()


@pytest.mark.parametrize("page", bs.toc_files())
def test_page_loads_without_errors_or_network(site, page):
    report = site.visit(page)
    assert report.errors == [], f"{page}: JavaScript errors"
    assert report.blocked == [], f"{page}: tried to reach the network"
    assert report.typeset_math >= report.math_elements, f"{page}: math left untypeset"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=CHAPTER_IDS)
def test_chapter_shows_its_figures(site, notebook):
    expected = expected_figures(notebook)
    shown = site.visit(page_of(notebook)).figures
    assert shown["images"] >= expected["images"], f"images: {shown} vs stored {expected}"
    assert shown["plots"] >= expected["plots"], f"Plotly figures: {shown} vs stored {expected}"
    # An ipywidgets output cannot work without a kernel: book.css explains each one.
    assert shown["widgetNotes"] == expected["widgets"], f"widget notes: {shown} vs stored {expected}"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=CHAPTER_IDS)
def test_colab_button_opens_this_chapter(site, notebook):
    links = site.visit(page_of(notebook)).colab_links
    assert links == [bs.colab_url(bs.read_config(), notebook)]


def plotted_data(figure) -> str:
    return figure.evaluate("gd => JSON.stringify(gd.data)")


def test_chapter_one_mask_figure_responds_to_a_click(site):
    """The first Plotly figure of chapter 1 with buttons (or a slider) changes when clicked."""
    tab, report = site.open(page_of(CHAPTERS[0]))
    try:
        tab.wait_for_function(
            "() => [...document.querySelectorAll('.cell_output .plotly-graph-div')]"
            ".every(div => div.classList.contains('js-plotly-plot'))",
            timeout=PLOT_TIMEOUT_MS,
        )
        ARTIFACTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(ARTIFACTS / "chapter01_top.png"))
        figures = tab.locator(
            ".js-plotly-plot:has(.updatemenu-button), .js-plotly-plot:has(.slider-container)"
        )
        assert figures.count() >= 1, (
            "chapter 1 has no Plotly figure with updatemenus buttons or a slider "
            "(the kernel-free mask figure)"
        )
        figure = figures.first
        figure.scroll_into_view_if_needed()
        before = plotted_data(figure)
        after = before
        buttons = figure.locator(".updatemenu-button")
        if buttons.count():
            for index in range(buttons.count()):
                header = figure.locator(".updatemenu-header")
                if not buttons.nth(index).is_visible() and header.count():
                    header.first.click()  # a dropdown menu: open it first
                buttons.nth(index).click()
                tab.wait_for_timeout(300)
                after = plotted_data(figure)
                if after != before:
                    break
        else:
            rail = figure.locator(".slider-rail-touch-rect").first
            box = rail.bounding_box()
            tab.mouse.click(box["x"] + 0.95 * box["width"], box["y"] + box["height"] / 2)
            tab.wait_for_timeout(1000)
            after = plotted_data(figure)
        figure.screenshot(path=str(ARTIFACTS / "chapter01_mask_figure.png"))
        assert after != before, "clicking the figure's controls did not change its data"
        assert report.errors == []
        assert report.blocked == []
    finally:
        tab.close()
