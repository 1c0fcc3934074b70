"""The built book, as a reader's browser shows it.

Serves ``_build/html`` (the session's one build, ``book_support.build_book``)
on 127.0.0.1 and opens every page of the book in headless Chromium (Debian's
``/usr/bin/chromium``, driven by Playwright; set ``CHROMIUM`` to use another
binary) twice: on a desktop (1366 × 900; then switched to the dark theme as
the theme's switch does) and on a phone (390 × 844). Every host name but
localhost fails to resolve, and requests to other hosts are recorded: the
book must work offline. A one-page book of the package's explorers (built
from the same configuration) covers the explorers whatever the notebooks'
stored outputs hold.

Checks, on every page: no JavaScript error and no request off the machine;
at most 3 MB when the page has loaded (figures and Plotly load lazily, as the
reader scrolls to them), and still at most 3 MB after scrolling to the end,
every figure and the Plotly bundle included; no code block or output scrolls sideways at 1366 px;
nothing scrolls the page sideways at 390 px and every explorer control is
inside the phone's screen; figures are 2x images, shown large enough on a
phone for their smallest text to be 9 CSS px, and not dimmed in the dark
theme; every image has alt text (not a file name); axe-core finds no serious
or critical violation (see ``axe_violations``); every explorer control is
reached by Tab and changes the figure with Enter, Space or the arrow keys,
without moving the controls, and no stored Plotly figure has Plotly's own
(unfocusable) buttons or sliders; exercise solutions stay hidden, code and
output, until their toggle is opened.

A failure names the page, the notebook cell (index as nbformat counts, and
its first line of code) and the sizes in CSS px. Screenshots of every page
(desktop, phone, dark; the explorer page in full) and a report of each
page's bytes, first contentful paint and seconds per step are written to
``artifacts/`` (``browser-report.json``).
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest

from transformer_edu.figures import viz

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

CHROMIUM = bs.CHROMIUM
CHROMIUM_FLAGS = [*bs.CHROMIUM_FLAGS, bs.OFFLINE_FLAG]  # the book must work offline
ARTIFACTS = bs.REPO_ROOT / "artifacts"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
BUDGET_BYTES = 3_000_000
# Generous for a loaded 2-core machine; each wait ends as soon as its condition holds.
TIMEOUT_MS = 60_000
CHANGE_TIMEOUT_MS = 10_000  # a key press redraws an explorer
# A figure may be shrunk on a phone only as far as its smallest text
# (viz.MIN_FONT_PT points at viz.DPI) stays 9 CSS px tall.
MIN_FIGURE_SCALE = 9.0 / (viz.MIN_FONT_PT / 72 * viz.DPI)
PLOTLY_FILE = "plotly-cartesian.min.js"
SEVERE = {"serious", "critical"}

PlaywrightTimeout = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is a test requirement (requirements.txt)"
).TimeoutError

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM)",
)

# --------------------------------------------------------------------------- #
# What the page says about itself                                             #
# --------------------------------------------------------------------------- #

BYTES_JS = """
() => {
  const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
  const plotly = entries.filter(e => e.name.includes('%s')).reduce((s, e) => s + e.decodedBodySize, 0);
  const largest = [...entries].sort((a, b) => b.decodedBodySize - a.decodedBodySize).slice(0, 4)
    .map(e => `${e.name.split('/').pop().split('?')[0].slice(0, 40)} ${(e.decodedBodySize / 1e6).toFixed(2)} MB`);
  return {total: entries.reduce((s, e) => s + e.decodedBodySize, 0), plotly, largest, count: entries.length};
}
""" % PLOTLY_FILE

FCP_JS = "() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null"

# Where an element is, for failure messages: the code cell that holds it
# (its number among the page's code cells and its first line of code), or
# the nearest section heading.
WHERE_JS = """
const where = el => {
  const cell = el.closest('.cell');
  if (cell) {
    const cells = [...document.querySelectorAll('article .cell')];
    const first = c => (c.querySelector('.cell_input pre')?.textContent || '').trim().split('\\n')[0].trim();
    const number = cells.indexOf(cell) + 1, code = first(cell);
    // how many cells before this one start with the same line
    const occurrence = cells.slice(0, number - 1).filter(c => first(c) === code).length;
    return {cell: number, code: code.slice(0, 60), occurrence};
  }
  const section = el.closest('section');
  const heading = section?.querySelector('h1, h2, h3, h4');
  return {cell: null, code: null, section: heading ? heading.textContent.replace('#', '').trim().slice(0, 60) : null};
};
"""

SCROLLING_CODE_JS = """
() => { %s
  return [...document.querySelectorAll('article pre, article .cell_output .output')]
  .filter(box => box.getClientRects().length && box.scrollWidth > box.clientWidth + 1)
  .filter(box => !box.querySelector('.tse-explorer'))
  .map(box => ({
    ...where(box),
    what: box.closest('.cell_input') ? 'code' : box.closest('.cell_output') ? 'output' : 'code block',
    width: box.scrollWidth, column: box.clientWidth,
    text: box.textContent.trim().split('\\n')[0].slice(0, 50),
    box,
  }))
  .filter((item, _, all) => !all.some(other => other.box !== item.box && item.box.contains(other.box)))
  .map(({box, ...item}) => item);
}
""" % WHERE_JS

IMAGES_JS = """
() => { %s
  return [...document.querySelectorAll('article img')].map(img => ({
  ...where(img),
  src: img.getAttribute('src') || '',
  alt: img.getAttribute('alt'),
  output: !!img.closest('.cell_output'),
  loaded: img.complete && img.naturalWidth > 0,
  natural: img.naturalWidth,
  shown: img.clientWidth,
  drawn: parseFloat(img.style.width) || img.naturalWidth,
  filter: getComputedStyle(img).filter,
  }));
}
""" % WHERE_JS

# clientWidth, not innerWidth: a phone's browser (is_mobile) zooms a too-wide page out
# to fit, and then innerWidth grows with the page (the API page once measured 1 188 px
# wide with innerWidth 1 188, on a 390 px screen).
PAGE_WIDTH_JS = "() => ({scroll: document.documentElement.scrollWidth, view: document.documentElement.clientWidth})"

# The innermost elements that stick out of the phone's screen on the right,
# that is what makes the page scroll sideways.
WIDE_ELEMENTS_JS = """
() => { %s
  const view = document.documentElement.clientWidth;
  const inScroller = el => {  // clipped or scrolled by a box inside the screen, or off-canvas
    if (getComputedStyle(el).position === 'fixed') return true;
    for (let e = el.parentElement; e && e !== document.documentElement; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.position === 'fixed') return true;
      if (style.overflowX !== 'visible' && e.getBoundingClientRect().right <= view + 1) return true;
    }
    return false;
  };
  const wide = [...document.querySelectorAll('body *')].filter(el => {
    const box = el.getBoundingClientRect();
    return box.width && box.right > view + 1 && el.checkVisibility() && !inScroller(el);
  });
  return wide.filter(el => !wide.some(other => other !== el && el.contains(other))).slice(0, 8).map(el => ({
    ...where(el), element: el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).slice(0, 2).join('.') : ''),
    right: Math.round(el.getBoundingClientRect().right), text: el.textContent.trim().slice(0, 50),
  }));
}
""" % WHERE_JS

CONTROLS_OUTSIDE_JS = """
() => [...document.querySelectorAll('.tse-controls button, .tse-controls input, .tse-controls select')]
  .map(el => [el, el.getBoundingClientRect()])
  .filter(([el, box]) => box.left < 0 || box.right > window.innerWidth + 0.5)
  .map(([el, box]) => `${el.closest('.tse-explorer').id}: ${el.textContent || el.id} at ${Math.round(box.left)}–${Math.round(box.right)}`)
"""

SOLUTIONS_JS = """
() => { %s
  return [...document.querySelectorAll('.cell')]
  .filter(cell => (cell.querySelector('.cell_input pre')?.textContent || '').trimStart().startsWith('# Solution'))
  .map((cell, index) => {
    cell.dataset.solution = index;
    const shown = sel => [...cell.querySelectorAll(sel)].some(el => el.checkVisibility());
    return {...where(cell), index, code_shown: shown('.cell_input pre'), output_shown: shown('.cell_output'),
            toggle: !!cell.querySelector('details > summary')};
  });
}
""" % WHERE_JS

FIGURES_JS = """
() => {
  const shown = el => el.checkVisibility() && el.getBoundingClientRect().width > 0;
  const images = [...document.querySelectorAll('.cell_output img')];
  const widgets = [...document.querySelectorAll('.cell_output')].filter(out =>
    out.querySelector(':scope > script[type="application/vnd.jupyter.widget-view+json"]'));
  return {
    images: images.filter(img => img.complete && img.naturalWidth > 0 && shown(img)).length,
    explorers: document.querySelectorAll('.tse-explorer.tse-drawn').length,
    widgetNotes: widgets.filter(out => getComputedStyle(out, '::before').content.includes('widget')).length,
  };
}
"""

# Plotly figures stored as such (not explorers) whose buttons or sliders are
# Plotly's own SVG: no keyboard reaches them.
PLOTLY_CONTROLS_JS = """
() => { %s
  return [...document.querySelectorAll('article .cell_output script')]
    .filter(script => !script.closest('.tse-explorer') && script.textContent.includes('Plotly.newPlot'))
    .map(script => ({...where(script), controls: ['updatemenus', 'sliders']
      .filter(key => script.textContent.includes(`"${key}"`)).join(' and ')}))
    .filter(figure => figure.controls);
}
""" % WHERE_JS

SCROLL_TO_END_JS = """
async () => {
  const pause = ms => new Promise(resolve => setTimeout(resolve, ms));
  for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight) {
    window.scrollTo(0, y);
    await pause(25);
  }
  window.scrollTo(0, document.documentElement.scrollHeight);
  await pause(300);
}
"""

# Lazily loaded figures that scrolling past did not finish (a busy machine):
# each is brought into view, one frame apart so that the browser sees it, and
# awaited (at most 15 s), so the figure count and the bytes include them.
AWAIT_IMAGES_JS = """
async () => {
  const frame = () => new Promise(resolve => requestAnimationFrame(() => resolve()));
  const pending = [...document.querySelectorAll('.cell_output img')].filter(img => !img.complete);
  for (const img of pending) {
    img.scrollIntoView({block: 'center'});
    await frame();
  }
  await Promise.all(pending.map(img => img.complete ? null : new Promise(resolve => {
    img.addEventListener('load', resolve, {once: true});
    img.addEventListener('error', resolve, {once: true});
    setTimeout(resolve, 15000);
  })));
  return pending.length;
}
"""

# --------------------------------------------------------------------------- #
# Serving and visiting                                                        #
# --------------------------------------------------------------------------- #


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Server:
    """A directory served on 127.0.0.1 until ``close``."""

    def __init__(self, directory: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, page: str) -> str:
        return f"{self.base}/{page}.html"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Visit:
    """What happened while one page loaded, and the open tab."""

    tab: object
    errors: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)


def open_page(context, url: str, math: bool = True) -> Visit:
    tab = context.new_page()
    visit = Visit(tab)
    tab.on("pageerror", lambda error: visit.errors.append(f"pageerror: {error}"))
    tab.on(
        "console",
        lambda message: message.type == "error"
        and visit.errors.append(f"console: {message.text} @ {message.location}"),
    )

    tab.on(
        "requestfailed",
        lambda request: request.url.startswith("http")
        and urlparse(request.url).hostname not in LOCAL_HOSTS
        and visit.blocked.append(request.url),
    )
    tab.goto(url, wait_until="load")
    tab.wait_for_timeout(400)
    if math and tab.locator(".katex").count():
        # the math is typeset HTML already; wait for KaTeX's fonts to be in
        tab.evaluate("() => document.fonts.ready.then(() => true)")
    return visit


def slug(page: str) -> str:
    return page.replace("/", "_")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def book():
    missing = [path for path in bs.chapter_notebooks() if not path.exists()]
    if missing:
        numbers = ", ".join(str(bs.chapter_number(path)) for path in missing)
        pytest.skip(f"chapter {numbers} not written yet")
    built = bs.build_book()
    assert built.returncode == 0, built.log[-6000:]
    server = Server(built.html_dir)
    yield server
    server.close()


@pytest.fixture(scope="module")
def explorer_page(tmp_path_factory):
    built = bs.build_explorer_fixture(tmp_path_factory.mktemp("explorer-book"))
    assert built.returncode == 0 and "WARNING" not in built.log, built.log[-6000:]
    server = Server(built.html_dir)
    yield server
    server.close()


@pytest.fixture(scope="module")
def contexts(browser):
    made = {
        "desktop": browser.new_context(viewport=DESKTOP),
        "phone": browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True),
    }
    yield made
    for context in made.values():
        context.close()


REPORT: dict[str, dict] = {}


class Clock:
    """Seconds spent on each step of a page, for the report (not asserted)."""

    def __init__(self, page: str, screen: str) -> None:
        self.seconds = REPORT.setdefault(page, {}).setdefault("seconds", {}).setdefault(screen, {})
        self.last = time.perf_counter()

    def lap(self, step: str) -> None:
        now = time.perf_counter()
        self.seconds[step] = round(now - self.last, 2)
        self.last = now


@pytest.fixture(scope="module", autouse=True)
def _write_report():
    yield
    if REPORT:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "browser-report.json").write_text(json.dumps(REPORT, indent=1, sort_keys=True))


# --------------------------------------------------------------------------- #
# Each page, once per screen                                                   #
# --------------------------------------------------------------------------- #


# The colour behind an element: the first opaque background up its ancestors.
BACKGROUND_JS = """
const background = el => {
  for (let e = el; e; e = e.parentElement) {
    const c = getComputedStyle(e).backgroundColor;
    if (c !== 'transparent' && !/, 0\\)$/.test(c)) return c;
  }
  return 'rgb(255, 255, 255)';
};
"""

CODE_CONTRAST_JS = """
() => { %s
  const channel = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const luminance = c => { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map(channel);
                           return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const ratio = (a, b) => { const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
                            return (hi + 0.05) / (lo + 0.05); };
  const seen = new Map();
  for (const span of document.querySelectorAll('article pre span')) {
    if (!span.textContent.trim() || !span.checkVisibility()) continue;
    const color = getComputedStyle(span).color, back = background(span);
    if (!seen.has(color + back)) seen.set(color + back, {color, back, ratio: ratio(color, back),
                                                        text: span.textContent.trim().slice(0, 20)});
  }
  return [...seen.values()].filter(pair => pair.ratio < 4.5);
}
""" % BACKGROUND_JS


# One element per style of text (its colour, the background behind it, its
# size and weight) is marked for axe's colour-contrast rule: the rule's cost
# grows with the number of text elements (72 s for the API reference page's
# 10,000 elements on a busy machine), its verdict depends on the style.
CONTRAST_SAMPLES_JS = """
() => { %s
  const seen = new Set();
  let marked = 0;
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('div.highlight pre, .katex, script, style')) continue;
    const text = [...el.childNodes].some(n => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
    if (!text || !el.checkVisibility()) continue;
    const style = getComputedStyle(el);
    const key = [style.color, background(el), style.fontSize, style.fontWeight, style.opacity].join('|');
    if (seen.has(key)) continue;
    seen.add(key);
    el.dataset.axeSample = '1';
    marked += 1;
  }
  return marked;
}
""" % BACKGROUND_JS


# axe's scrollable-region-focusable rule for the code blocks axe skips: a
# block that scrolls must be focusable or hold something focusable.
UNREACHABLE_CODE_BOXES_JS = """
() => [...document.querySelectorAll('div.highlight pre')]
  .filter(pre => pre.checkVisibility() && ['auto', 'scroll'].includes(getComputedStyle(pre).overflowX)
                 && pre.scrollWidth > pre.clientWidth + 1)
  .filter(pre => pre.tabIndex < 0 && !pre.querySelector('a[href], button, input, select, textarea, [tabindex]'))
  .map(pre => pre.textContent.trim().split('\\n')[0].slice(0, 60))
"""


def axe_violations(tab) -> list[dict]:
    """Serious and critical axe-core violations of the page.

    axe-core runs every rule but colour contrast on the whole page except its
    highlighted code blocks and typeset math (thousands of token spans took
    it ten to twenty seconds a page on a busy machine); the code blocks get
    the rule that concerns them as boxes (a scrollable region must be
    reachable by keyboard, UNREACHABLE_CODE_BOXES_JS). Colour contrast: axe's rule checks one element
    per style of text (CONTRAST_SAMPLES_JS), and the colours of the code
    tokens are checked with axe's WCAG formula, once per pair of text and
    background colours (CODE_CONTRAST_JS).
    """
    from axe_playwright_python.sync_playwright import Axe

    # No CSSOM preload: axe would fetch the theme's stylesheets itself and
    # resolve their @import "../basic.css" against the page, a request that
    # 404s (only the css-orientation-lock rule needs it).
    options = {"resultTypes": ["violations"], "preload": False}
    skip = [["div.highlight pre"], [".katex"]]
    axe = Axe()
    page = axe.run(tab, context={"exclude": skip},
                   options={**options, "rules": {"color-contrast": {"enabled": False}}})
    violations = page.response["violations"]
    for box in tab.evaluate(UNREACHABLE_CODE_BOXES_JS):
        violations.append({
            "id": "scrollable-region-focusable (code)", "impact": "serious",
            "help": "a code block that scrolls cannot be reached by keyboard",
            "nodes": [{"target": [box]}],
        })
    if tab.evaluate(CONTRAST_SAMPLES_JS):
        contrast = axe.run(tab, context={"include": [["[data-axe-sample]"]], "exclude": skip},
                           options={**options, "runOnly": {"type": "rule", "values": ["color-contrast"]}})
        violations += contrast.response["violations"]
    for pair in tab.evaluate(CODE_CONTRAST_JS):
        violations.append({
            "id": "color-contrast (code)", "impact": "serious",
            "help": f"code text {pair['color']} on {pair['back']}: contrast {pair['ratio']:.2f} < 4.5",
            "nodes": [{"target": [pair["text"]]}],
        })
    return [v for v in violations if v.get("impact") in SEVERE]


@functools.cache
def desktop_report(server: Server, contexts_id: int, page: str) -> dict:
    context = _CONTEXTS[contexts_id]["desktop"]
    clock = Clock(page, "desktop")
    visit = open_page(context, server.url(page))
    clock.lap("load")
    tab = visit.tab
    try:
        ARTIFACTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(ARTIFACTS / f"{slug(page)}-desktop.png"))
        report = {
            "bytes_at_load": tab.evaluate(BYTES_JS),
            "first_contentful_paint_ms": tab.evaluate(FCP_JS),
            "scrolling_code": tab.evaluate(SCROLLING_CODE_JS),
            "axe": [
                {"id": v["id"], "impact": v["impact"], "help": v["help"],
                 "nodes": [n["target"] for n in v["nodes"]][:5]}
                for v in axe_violations(tab)
            ],
        }
        clock.lap("axe")
        solutions = tab.evaluate(SOLUTIONS_JS)
        report["solutions_shown"] = [s for s in solutions if s["code_shown"] or s["output_shown"]]
        tab.evaluate(SCROLL_TO_END_JS)
        for root in tab.locator(".tse-explorer").all():
            root.scroll_into_view_if_needed()
            tab.wait_for_function("el => el.classList.contains('tse-drawn') || el.classList.contains('tse-failed')",
                                  arg=root.element_handle(), timeout=TIMEOUT_MS)
        tab.wait_for_timeout(300)
        tab.evaluate(AWAIT_IMAGES_JS)
        clock.lap("scroll and draw")
        report["bytes_after_scrolling"] = tab.evaluate(BYTES_JS)
        report["images"] = tab.evaluate(IMAGES_JS)
        report["figures"] = tab.evaluate(FIGURES_JS)
        report["colab_links"] = [
            link.get_attribute("href") for link in tab.locator('a[href*="colab.research.google.com"]').all()
        ]
        if page == bs.FIXTURE_PAGE:
            tab.screenshot(path=str(ARTIFACTS / "explorers-desktop-full.png"), full_page=True)
        report["errors"], report["blocked"] = list(visit.errors), list(visit.blocked)
        report["explorers"], report["keyboard"] = explorer_keyboard_problems(tab)
        report["keyboard"] += [
            f"{place(page, figure)}: a Plotly figure with its own {figure['controls']}, which Tab "
            "cannot reach (draw it with transformer_edu.figures' HTML controls)"
            for figure in tab.evaluate(PLOTLY_CONTROLS_JS)
        ]
        clock.lap("keyboard")
        report["solutions_opening"] = solution_problems(tab, solutions)
        clock.lap("solutions")
        report["dark"] = dark_checks(tab, page)
        clock.lap("dark")
    finally:
        tab.close()
    REPORT.setdefault(page, {}).update(
        {key: report[key] for key in ("bytes_at_load", "bytes_after_scrolling", "first_contentful_paint_ms")}
    )
    return report


def wait_for_explorers(tab) -> None:
    for root in tab.locator(".tse-explorer").all():
        root.scroll_into_view_if_needed()
        tab.wait_for_function("el => el.classList.contains('tse-drawn')",
                              arg=root.element_handle(), timeout=TIMEOUT_MS)


@functools.cache
def phone_report(server: Server, contexts_id: int, page: str) -> dict:
    clock = Clock(page, "phone")
    visit = open_page(_CONTEXTS[contexts_id]["phone"], server.url(page))
    tab = visit.tab
    try:
        tab.screenshot(path=str(ARTIFACTS / f"{slug(page)}-phone.png"))
        tab.evaluate(SCROLL_TO_END_JS)
        wait_for_explorers(tab)  # drawn plots take their phone layout
        if page == bs.FIXTURE_PAGE:
            tab.screenshot(path=str(ARTIFACTS / "explorers-phone-full.png"), full_page=True)
        return {
            "width": tab.evaluate(PAGE_WIDTH_JS),
            "wide": tab.evaluate(WIDE_ELEMENTS_JS),
            "unreachable_code": tab.evaluate(UNREACHABLE_CODE_BOXES_JS),
            "controls_outside": tab.evaluate(CONTROLS_OUTSIDE_JS),
            "images": tab.evaluate(IMAGES_JS),
            "errors": visit.errors,
        }
    finally:
        tab.close()
        clock.lap("all")


DARK_JS = """
() => { // what the theme's switch does to the page (pydata-sphinx-theme's setMode),
  // without storing the choice: the next page opens in the light theme again
  document.documentElement.dataset.mode = 'dark';
  document.documentElement.dataset.theme = 'dark';
  window.scrollTo(0, 0);
}
"""


def dark_checks(tab, page: str) -> dict:
    """Switch the open desktop tab to the dark theme, as its switch does."""
    tab.evaluate(DARK_JS)
    tab.wait_for_timeout(200)
    tab.screenshot(path=str(ARTIFACTS / f"{slug(page)}-dark.png"))
    if page == bs.FIXTURE_PAGE:
        tab.screenshot(path=str(ARTIFACTS / "explorers-dark-full.png"), full_page=True)
    return {"images": tab.evaluate(IMAGES_JS)}


def dark_report(server: Server, contexts_id: int, page: str) -> dict:
    return desktop_report(server, contexts_id, page)["dark"]


_CONTEXTS: dict[int, dict] = {}


@pytest.fixture(scope="module")
def screens(contexts):
    _CONTEXTS[id(contexts)] = contexts
    return id(contexts)


PAGES = bs.toc_files()
# The Korean edition (_build/html/ko/): every page, under the same budgets.
KOREAN_PAGES = [f"ko/{page}" for page in PAGES]
CHAPTERS = bs.chapter_notebooks()
CHAPTER_IDS = [path.stem for path in CHAPTERS]


def page_of(notebook: Path) -> str:
    return notebook.relative_to(bs.REPO_ROOT).with_suffix("").as_posix()


def all_pages(request) -> tuple[Server, str]:
    """(server, page) for a parameter: a page of the book or the explorer page."""
    page = request.param
    if page == bs.FIXTURE_PAGE:
        return request.getfixturevalue("explorer_page"), page
    return request.getfixturevalue("book"), page


@pytest.fixture(params=PAGES + KOREAN_PAGES + [bs.FIXTURE_PAGE])
def site_page(request):
    return all_pages(request)


# --------------------------------------------------------------------------- #
# Every page                                                                   #
# --------------------------------------------------------------------------- #


@functools.cache
def notebook_code_cells(page: str) -> tuple[tuple[int, str], ...]:
    """(index among all cells, first line of code) of a notebook page's code cells."""
    path = bs.REPO_ROOT / f"{page}.ipynb"
    if not path.exists():
        return ()
    return tuple(
        (index, cell["source"].strip().split("\n")[0].strip())
        for index, cell in enumerate(bs.read_notebook(path)["cells"])
        if cell["cell_type"] == "code"
    )


def place(page: str, item: dict) -> str:
    """Where on a page something is, as a chapter engineer finds it: the
    notebook's cell index (as nbformat counts, from 0) and its first line."""
    if item.get("cell"):
        code = (item.get("code") or "").strip()
        matches = [index for index, first in notebook_code_cells(page) if code and first[:60] == code[:60]]
        occurrence = item.get("occurrence", 0)
        cell = f"cell {matches[occurrence]}" if occurrence < len(matches) else f"code cell {item['cell']} of the page"
        return f"{cell} `{code}`"
    if item.get("section"):
        return f"section {item['section']!r}"
    return "the page"


def problems(page: str, found: list[str], what: str) -> str:
    listed = "\n  ".join(found[:12]) + (f"\n  ... and {len(found) - 12} more" if len(found) > 12 else "")
    return f"{page}: {len(found)} {what}:\n  {listed}"


def test_page_loads_without_errors_or_network(site_page, screens):
    server, page = site_page
    report = desktop_report(server, screens, page)
    assert report["errors"] == [], problems(page, report["errors"], "JavaScript errors")
    assert report["blocked"] == [], problems(page, report["blocked"], "requests off the machine (blocked)")


def test_page_weight(site_page, screens):
    server, page = site_page
    report = desktop_report(server, screens, page)
    at_load = report["bytes_at_load"]["total"]
    assert at_load <= BUDGET_BYTES, (
        f"{page}: {at_load / 1e6:.2f} MB when loaded (budget {BUDGET_BYTES / 1e6:.0f} MB): "
        f"{report['bytes_at_load']['largest']}"
    )
    scrolled = report["bytes_after_scrolling"]
    assert scrolled["total"] <= BUDGET_BYTES, (
        f"{page}: {scrolled['total'] / 1e6:.2f} MB after scrolling to the end, Plotly's "
        f"{scrolled['plotly'] / 1e6:.2f} MB included (budget {BUDGET_BYTES / 1e6:.0f} MB): {scrolled['largest']}"
    )


def test_no_code_or_output_scrolls_sideways_on_a_desktop(site_page, screens):
    server, page = site_page
    found = [
        f"{place(page, box)}: {box['what']} {box['width']} px wide in a {box['column']} px column "
        f"(+{box['width'] - box['column']} px), first line {box['text']!r}"
        for box in desktop_report(server, screens, page)["scrolling_code"]
    ]
    assert not found, problems(page, found, "code blocks or outputs scroll sideways at 1366 px")


def test_axe_finds_no_serious_violation(site_page, screens):
    server, page = site_page
    found = [
        f"{v['impact']} {v['id']}: {v['help']} at {v['nodes']}"
        for v in desktop_report(server, screens, page)["axe"]
    ]
    assert not found, problems(page, found, "serious or critical axe-core violations")


FILE_NAME = re.compile(r"\.(png|jpe?g|svg|gif)$|/|^[0-9a-f]{16,}", re.IGNORECASE)


def test_every_image_has_alt_text(site_page, screens):
    server, page = site_page
    found = [
        f"{place(page, image)}: alt={image['alt']!r} ({image['src'].rsplit('/', 1)[-1][:24]})"
        for image in desktop_report(server, screens, page)["images"]
        if not (image["alt"] or "").strip() or FILE_NAME.search(image["alt"].strip())
    ]
    assert not found, problems(
        page, found, "images without a meaningful alt text (metadata.mystnb.image.alt)"
    )


def test_figures_are_sharp(site_page, screens):
    """A raster figure has at least two image pixels per CSS pixel it is
    shown at on a desktop (a 2x PNG), so it stays crisp on dense screens."""
    server, page = site_page
    found = [
        f"{place(page, image)}: {image['natural']} px shown {image['shown']} px wide "
        f"({image['natural'] / image['shown']:.2f} pixels per CSS px)"
        for image in desktop_report(server, screens, page)["images"]
        if image["output"] and image["loaded"] and image["shown"]
        and not image["src"].lower().endswith(".svg")
        and image["natural"] < 2 * image["shown"] - 2
    ]
    assert not found, problems(page, found, "blurry figures (not 2x; viz.use_book_style() makes 2x PNGs)")


def test_phone_has_no_sideways_scroll_and_reaches_every_control(site_page, screens):
    server, page = site_page
    report = phone_report(server, screens, page)
    width = report["width"]
    wide = [
        f"{place(page, el)}: <{el['element']}> reaches {el['right']} px: {el['text']!r}"
        for el in report["wide"]
    ]
    assert width["scroll"] <= width["view"], problems(
        page, wide, f"elements push the page {width['scroll']} px wide on a {width['view']} px phone"
    )
    assert not report["unreachable_code"], problems(
        page, report["unreachable_code"], "code blocks that scroll on a phone but cannot be reached by keyboard"
    )
    assert not report["controls_outside"], problems(
        page, report["controls_outside"], f"explorer controls outside the {PHONE['width']} px screen"
    )


def test_figures_stay_readable_on_a_phone(site_page, screens):
    server, page = site_page
    found = [
        f"{place(page, image)}: shown at {image['shown'] / image['drawn']:.2f} of its size"
        for image in phone_report(server, screens, page)["images"]
        if image["output"] and image["loaded"] and image["shown"] < MIN_FIGURE_SCALE * image["drawn"] - 1
    ]
    assert not found, problems(
        page, found,
        f"figures shrunk below {MIN_FIGURE_SCALE:.2f} on a phone, so their text is under 9 px "
        "(draw them at most viz.BOOK_WIDTH wide)",
    )


def test_dark_theme_does_not_dim_figures(site_page, screens):
    server, page = site_page
    found = [
        f"{place(page, image)}: filter {image['filter']}"
        for image in dark_report(server, screens, page)["images"]
        if image["filter"] not in ("none", "")
    ]
    assert not found, problems(page, found, "figures dimmed in the dark theme")


def test_explorers_work_from_the_keyboard(site_page, screens):
    server, page = site_page
    report = desktop_report(server, screens, page)
    assert not report["keyboard"], problems(page, report["keyboard"], "keyboard problems in explorers")
    if page == bs.FIXTURE_PAGE:
        assert report["explorers"] == 4


def test_solutions_stay_hidden_until_their_toggle_is_opened(site_page, screens):
    server, page = site_page
    report = desktop_report(server, screens, page)
    shown = [
        f"{place(page, s)}: " + " and ".join(part for part in ("code", "output") if s[part + "_shown"])
        + " visible (tag the cell hide-cell)"
        for s in report["solutions_shown"]
    ]
    assert not shown, problems(page, shown, "exercise solutions visible before their toggle is opened")
    assert not report["solutions_opening"], problems(
        page, report["solutions_opening"], "solutions that their toggle does not show"
    )


# --------------------------------------------------------------------------- #
# Chapters                                                                     #
# --------------------------------------------------------------------------- #


def stored_counts(notebook: Path) -> dict:
    """What the book must show for a notebook's stored outputs (each output
    as its highest-priority MIME type in myst-nb's HTML order)."""
    from myst_nb.core.render import base_render_priority

    priority = base_render_priority()["html"]
    counts = {"images": 0, "explorers": 0, "widgets": 0}
    for cell in bs.read_notebook(notebook)["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] != "code" or tags & {"remove-output", "remove-cell"}:
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
                counts["images"] += 0 if tags & {"hide-output", "hide-cell"} else 1
            elif mime == "application/vnd.jupyter.widget-view+json":
                counts["widgets"] += 1
            elif mime == "text/html":
                counts["explorers"] += content.count('class="tse-explorer"')
    return counts


@pytest.mark.parametrize("notebook", CHAPTERS, ids=CHAPTER_IDS)
def test_chapter_shows_its_figures(book, screens, notebook):
    expected = stored_counts(notebook)
    shown = desktop_report(book, screens, page_of(notebook))["figures"]
    assert shown["images"] >= expected["images"], f"images: {shown} vs stored {expected}"
    assert shown["explorers"] == expected["explorers"], f"explorers drawn: {shown} vs stored {expected}"
    # A stored ipywidgets output cannot work without a kernel: book.css explains each one.
    assert shown["widgetNotes"] == expected["widgets"], f"widget notes: {shown} vs stored {expected}"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=CHAPTER_IDS)
def test_colab_button_opens_this_chapter(book, screens, notebook):
    links = desktop_report(book, screens, page_of(notebook))["colab_links"]
    assert links == [bs.colab_url(bs.read_config(), notebook)]


SIDEBAR_SHOWN_JS = """
() => { const modal = document.querySelector('#pst-primary-sidebar-modal');
        if (modal && modal.open) return true;  // a phone: the navigation opens as a dialog
        const nav = document.querySelector('.bd-sidebar-primary');
        const box = nav.getBoundingClientRect();
        return getComputedStyle(nav).visibility !== 'hidden' && box.right > 0 && box.width > 0; }
"""


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_the_navigation_toggle_and_search_work(book, contexts, viewport):
    """The article header's buttons are the page's only sidebar toggles and
    search button (book/_templates/layout.html drops the theme's second
    navbar, whose hidden toggles the theme's script bound instead): the
    toggle hides the site navigation on a desktop and opens it on a phone,
    and search opens the search dialog."""
    visit = open_page(contexts[viewport], book.url("notebooks/02_multi_head_attention"), math=False)
    tab = visit.tab
    try:
        assert tab.locator("#pst-header").is_hidden() and tab.locator("#pst-header *").count() == 0
        assert tab.locator(".primary-toggle").count() == 1
        shown = tab.evaluate(SIDEBAR_SHOWN_JS)
        assert shown is (viewport == "desktop")
        tab.locator(".bd-header-article .primary-toggle").click()
        tab.wait_for_timeout(500)
        assert tab.evaluate(SIDEBAR_SHOWN_JS) is not shown, f"the toggle did not {'hide' if shown else 'show'} the navigation"
        tab.keyboard.press("Escape")
        tab.wait_for_timeout(300)
        search = tab.locator(".bd-header-article .search-button") if viewport == "phone" else \
            tab.locator(".bd-sidebar-primary .search-button-field")
        if viewport == "desktop":
            tab.locator(".bd-header-article .primary-toggle").click()  # the navigation back
            tab.wait_for_timeout(500)
        search.first.click()
        tab.wait_for_selector("#pst-search-dialog[open]", timeout=TIMEOUT_MS)
        assert visit.errors == []
    finally:
        tab.close()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_the_edition_switch_leads_to_the_same_page_in_the_other_language(book, contexts, viewport):
    """The header's 한국어 link opens the Korean page, whose English link comes back."""
    page = "notebooks/03_positional_encoding"
    visit = open_page(contexts[viewport], book.url(page), math=False)
    tab = visit.tab
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        link = tab.locator(".bd-header-article a.edition-switch")
        assert link.is_visible() and link.get_attribute("hreflang") == "ko"
        with tab.expect_navigation(wait_until="load"):
            link.click()
        assert tab.url == book.url(f"ko/{page}")
        assert tab.get_attribute("html", "lang") == "ko"
        back = tab.locator(".bd-header-article a.edition-switch")
        assert back.is_visible() and back.text_content().strip() == "English"
        back.focus()
        with tab.expect_navigation(wait_until="load"):
            tab.keyboard.press("Enter")  # from the keyboard
        assert tab.url == book.url(page)
        assert visit.errors == []
    finally:
        tab.close()


@pytest.mark.parametrize(
    ("query", "page"),
    [("어텐션", "notebooks/01_attention"), ("빔 서치를", "notebooks/08_beam_search"),
     ("층 정규화의", "notebooks/04_layer_norm_and_residuals")],
)
def test_korean_search_finds_a_term_with_its_particles(book, contexts, query, page):
    """The Korean search page (its JavaScript stemmer, book/_ext/editions.py) finds the
    chapter whose text has the term with particles attached (어텐션을, 어텐션의, ...)."""
    from urllib.parse import quote

    visit = open_page(contexts["desktop"], f"{book.base}/ko/search.html?q={quote(query)}", math=False)
    tab = visit.tab
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        tab.wait_for_selector("#search-results ul.search li a", timeout=TIMEOUT_MS)
        tab.wait_for_function(
            "() => !document.querySelector('#search-progress')?.textContent.includes('…')"
            " && document.querySelector('#search-results p.search-summary')",
            timeout=TIMEOUT_MS,
        )
        found = tab.eval_on_selector_all(
            "#search-results ul.search li a:first-child", "links => links.map(a => a.getAttribute('href'))"
        )
        assert any(href.split("?")[0].split("#")[0] == f"{page}.html" for href in found), found[:10]
        assert visit.errors == []
    finally:
        tab.close()


# --------------------------------------------------------------------------- #
# Explorers from the keyboard                                                  #
# --------------------------------------------------------------------------- #

EXPLORER_STATE_JS = """
root => JSON.stringify({
  summary: root.querySelector('.tse-summary').textContent,
  titles: [...root.querySelectorAll('.tse-panel-title')].map(t => t.textContent),
  plots: [...root.querySelectorAll('.tse-plot')].map(gd => [gd.data, gd.layout && gd.layout.shapes,
                                                               gd.layout && gd.layout.annotations]),
})
"""
CONTROL_BOXES_JS = """
root => [...root.querySelectorAll('.tse-controls button, .tse-controls input, .tse-controls select')]
  .map(el => { const b = el.getBoundingClientRect(); return [Math.round(b.x), Math.round(b.y), Math.round(b.width)]; })
"""
ACTIVE_JS = """
() => { const el = document.activeElement;
  return {control: el.dataset.tseControl ?? null, index: el.dataset.tseIndex ?? null, tag: el.tagName,
          outline: getComputedStyle(el).outlineStyle, pressed: el.getAttribute('aria-pressed'),
          value: el.value ?? null, max: el.max ?? null, options: el.options ? el.options.length : null}; }
"""


def explorer_keyboard_problems(tab) -> tuple[int, list[str]]:
    """Tab through every explorer's controls and change each with a key.

    Returns the number of explorers and what went wrong (empty: nothing).
    """
    problems = []
    roots = tab.locator(".tse-explorer").all()
    for root in roots:
        handle = root.element_handle()
        ident = root.get_attribute("id")
        # Scrolled by the page's own scrollIntoView: Playwright's scroll_into_view_if_needed
        # first waits for the element to hold one position for two frames, and once, in a
        # full CI run, it waited out its 30 s on the first explorer of a page (Korean
        # Chapter 3) that passed on every rerun, loaded or not. The checks below are the same.
        root.evaluate("el => el.scrollIntoView({block: 'center'})")
        tab.wait_for_function("el => el.classList.contains('tse-drawn')", arg=handle, timeout=TIMEOUT_MS)
        controls = root.locator(".tse-controls button, .tse-controls input, .tse-controls select")
        expected = [
            (c.get_attribute("data-tse-control"), c.get_attribute("data-tse-index"))
            for c in controls.all()
        ]
        if not expected:
            problems.append(f"{ident}: no controls")
            continue
        # Tab from just before the explorer visits every control in order.
        tab.evaluate("el => { const probe = document.createElement('button'); probe.id = 'tse-probe';"
                     " probe.textContent = 'probe'; el.before(probe); probe.focus(); }", handle)
        reached = []
        for _ in expected:
            tab.keyboard.press("Tab")
            active = tab.evaluate(ACTIVE_JS)
            if active["outline"] == "none":
                problems.append(f"{ident}: no visible focus on {active}")
            reached.append((active["control"], active["index"]))
        tab.evaluate("() => document.getElementById('tse-probe').remove()")
        if reached != expected:
            problems.append(f"{ident}: Tab reaches {reached}, expected {expected}")
        # Each kind of control changes the figure from the keyboard.
        boxes = tab.evaluate(CONTROL_BOXES_JS, handle)
        seen_groups = set()
        for control in controls.all():
            tag = control.evaluate("el => el.tagName")
            group = control.get_attribute("data-tse-control")
            if tag == "BUTTON":
                if group in seen_groups or control.get_attribute("aria-pressed") == "true":
                    continue
                key = "Enter" if len(seen_groups) % 2 == 0 else " "
                seen_groups.add(group)
            elif tag == "INPUT":
                key = "ArrowLeft" if control.input_value() == control.get_attribute("max") else "ArrowRight"
            else:
                last = control.evaluate("el => el.selectedIndex === el.options.length - 1")
                key = "ArrowUp" if last else "ArrowDown"
            before = tab.evaluate(EXPLORER_STATE_JS, handle)
            control.focus()
            tab.keyboard.press(key)
            try:
                tab.wait_for_function(
                    f"([root, before]) => ({EXPLORER_STATE_JS})(root) !== before",
                    arg=[handle, before], timeout=CHANGE_TIMEOUT_MS,
                )
            except PlaywrightTimeout:
                problems.append(f"{ident}: {key!r} on {tag} {group} did not change the figure "
                                f"within {CHANGE_TIMEOUT_MS / 1000:g} s")
            if tag == "BUTTON" and control.get_attribute("aria-pressed") != "true":
                problems.append(f"{ident}: {key!r} did not press {control.text_content()!r}")
            if tab.evaluate(CONTROL_BOXES_JS, handle) != boxes:
                problems.append(f"{ident}: controls moved after {key!r} on {tag} {group}")
    return len(roots), problems


def solution_problems(tab, solutions: list[dict]) -> list[str]:
    """Open each hidden solution's toggle: its code and output must show."""
    problems = []
    for solution in solutions:
        if not solution["toggle"]:
            problems.append(f"solution {solution['index']} has no toggle")
            continue
        summary = tab.locator(f'[data-solution="{solution["index"]}"] details > summary').first
        summary.scroll_into_view_if_needed()
        summary.click()
        opened = tab.evaluate(
            "i => { const cell = document.querySelector(`[data-solution=\"${i}\"]`);"
            " return [...cell.querySelectorAll('.cell_input pre, .cell_output')]"
            ".every(el => el.checkVisibility()); }",
            solution["index"],
        )
        if not opened:
            problems.append(f"solution {solution['index']} does not open")
    return problems


# --------------------------------------------------------------------------- #
# The same explorer HTML outside the book (Jupyter, Colab)                     #
# --------------------------------------------------------------------------- #


def test_explorer_html_alone_draws_with_a_page_plotly_and_falls_back_offline(tmp_path, contexts):
    """In Jupyter the explorer's own script draws it (here with the page's
    Plotly); with no Plotly reachable (offline, CDN blocked) it shows its
    fallback text instead of a blank box."""
    from transformer_edu import figures as ix

    explorer = ix.mask_explorer(max_pad=1, start_pad=1)
    plotly = bs.REPO_ROOT / "node_modules" / ".book" / PLOTLY_FILE  # bundled by .ci/npm
    (tmp_path / PLOTLY_FILE).write_bytes(plotly.read_bytes())
    head = f'<meta charset="utf-8"><link rel="icon" href="data:,"><script src="{PLOTLY_FILE}"></script>'
    (tmp_path / "jupyter.html").write_text(f"<!doctype html><html><head>{head}</head><body>{explorer.html()}</body></html>")
    (tmp_path / "offline.html").write_text(
        f'<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head>'
        f"<body>{explorer.html()}</body></html>"
    )
    server = Server(tmp_path)
    try:
        visit = open_page(contexts["desktop"], server.url("jupyter"))
        tab = visit.tab
        tab.wait_for_function("() => document.querySelector('.tse-explorer').classList.contains('tse-drawn')",
                              timeout=TIMEOUT_MS)
        assert tab.locator(".tse-fallback").is_hidden()
        before = tab.locator(".tse-summary").text_content()
        tab.get_by_role("button", name="0 pads").click()
        assert tab.locator(".tse-summary").text_content() != before
        assert visit.errors == [] and visit.blocked == []
        tab.close()

        visit = open_page(contexts["desktop"], server.url("offline"))
        tab = visit.tab
        tab.wait_for_function("() => document.querySelector('.tse-explorer').classList.contains('tse-failed')",
                              timeout=TIMEOUT_MS)
        fallback = tab.locator(".tse-fallback")
        assert fallback.is_visible() and "needs JavaScript" in fallback.text_content()
        assert tab.locator(".tse-controls").is_hidden()
        assert visit.blocked and all("cdn.plot.ly" in url for url in visit.blocked)
        tab.close()
    finally:
        server.close()
