"""What a reader sees in JupyterLab: the stored outputs, the Markdown, the widgets.

nbval already runs every chapter on a fresh kernel and compares its outputs;
what only a front end shows is checked here. The test starts JupyterLab on
localhost (a free port, a token, no browser, no news or update checks,
autosave off, every cell rendered: no windowing) over copies of the chapter
notebooks, English and Korean, signed as trusted (what a reader's "Trust
Notebook" or own run gives: the kernel-free explorers' scripts may run), and
opens them in headless Chromium through Playwright.

* Every notebook, as opened, before anything runs: every stored output of
  every code cell is drawn (none missing or empty; every image loaded), no
  widget placeholder ("Loading widget...", "Error displaying widget") shows,
  and no Markdown cell shows raw Markdown (``**``, link brackets, fences,
  ``$`` math that MathJax left untypeset). In the English chapters, every
  kernel-free explorer (``transformer_edu.figures``: HTML controls over
  Plotly, which it loads from Plotly's CDN in Jupyter; the test answers that
  one URL with the plotly package's own copy of the file, as for a reader who
  is online) draws and its controls change its plots and summary.
* Chapter 1, end to end: JupyterLab's own "Run All Cells" on a fresh kernel
  completes with no error output and no cell unrun; its live mask playground
  is driven like a reader (a sentence typed and Enter pressed, the causal mask
  switched off and on; after each step the figure and the printed lines
  change, and the lines are the package's own for that state); one control of
  every ipywidgets explorer is changed and its output must redraw; the
  kernel-free explorers, now drawn from the fresh run, are pressed again.
* Every live playground of the package (``figures.*_playground``, which
  Chapters 1, 2, 3, 6, 7 and 8 display) in one small notebook, with the
  shipped translator where one is needed, and a ``tqdm.auto`` bar: they run,
  the bar is drawn as a progress widget, each playground redraws when a control
  changes, and the sentence playground of Chapter 7 is driven like a reader.

Running every chapter here too would repeat nbval's work (several minutes of
the suite); the classic Notebook test (``tests/colab/test_classic_notebook.py``)
runs Chapters 1 and 7 and the Korean Chapter 1 through ipywidgets 7's
protocol, as Colab's front end draws them. Chromium is Debian's
(``/usr/bin/chromium``, or ``CHROMIUM``); requests that leave localhost are
blocked (JupyterLab works offline) but for Plotly's CDN file, answered locally.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import secrets
import sys
import time
from pathlib import Path

import nbformat
import pytest

if __package__:
    from . import book_support as bs
    from . import frontend_support as fs
else:
    import book_support as bs
    import frontend_support as fs

pytest.importorskip("jupyterlab", reason="JupyterLab is a test requirement (requirements.txt)")
sync_api = pytest.importorskip("playwright.sync_api")

CHAPTERS = [path for path in bs.chapter_notebooks() if path.exists()]
KOREAN = [bs.REPO_ROOT / "locales" / "ko" / "notebooks" / path.name for path in CHAPTERS]
# (path in the server's root, file here) of every notebook opened as stored
OPENED = [(f"notebooks/{p.name}", p) for p in CHAPTERS] + [
    (f"ko/{p.name}", p) for p in KOREAN if p.exists()
]
RUN_TIMEOUT_S = 600  # Chapter 1, all cells
PLAYGROUNDS = "playgrounds.ipynb"

pytestmark = pytest.mark.skipif(
    not fs.CHROMIUM.exists(), reason=f"Chromium not found at {fs.CHROMIUM} (set CHROMIUM)"
)

# The notebook panel JupyterLab shows (``expose_app_in_browser`` makes the app global).
CURRENT = "window.jupyterapp.shell.currentWidget"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

APP_READY_JS = """() => Boolean(window.jupyterapp && window.jupyterapp.commands
  && window.jupyterapp.commands.hasCommand('notebook:run-all-cells'))"""

OPEN_JS = """async path => {
  const panel = await window.jupyterapp.commands.execute(
    'docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  window.jupyterapp.shell.activateById(panel.id);
}"""

CLOSE_JS = f"""async () => {{
  const panel = {CURRENT};
  await panel.sessionContext.shutdown();
  panel.context.model.dirty = false;
  panel.dispose();
}}"""

KERNEL_IDLE_JS = f"""() => {{
  const panel = window.jupyterapp && {CURRENT};
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
    && panel.sessionContext.session.kernel;
  return Boolean(panel && panel.context.isReady && kernel && kernel.status === 'idle');
}}"""

RUN_ALL_JS = """() => {
  window.__runAll = undefined;
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    ok => { window.__runAll = {ok: Boolean(ok)}; },
    error => { window.__runAll = {ok: false, error: String(error)}; });
}"""

ERROR_OUTPUTS_JS = f"""() => {{
  const found = [];
  {CURRENT}.content.widgets.forEach((cell, index) => {{
    if (cell.model.type !== 'code') return;
    for (const output of cell.model.outputs.toJSON()) {{
      if (output.output_type === 'error') found.push([index, output.ename, output.evalue]);
    }}
  }});
  return found;
}}"""

UNRUN_CELLS_JS = f"""() => {{
  const found = [];
  {CURRENT}.content.widgets.forEach((cell, index) => {{
    if (cell.model.type === 'code' && cell.model.sharedModel.getSource().trim()
        && cell.model.executionCount === null) found.push(index);
  }});
  return found;
}}"""

# Every cell rendered (the notebook's own signal) and its outputs attached.
RENDERED_JS = f"""() => {{
  const panel = {CURRENT};
  return Boolean(panel && panel.context.isReady && panel.content.widgets.length
    && panel.content.widgets.every(cell => cell.isAttached && (cell.model.type !== 'markdown'
      || cell.rendered)));
}}"""

# For every code cell: how many outputs its model holds and how many the page
# draws with something in them (text, an image, an SVG, a table, a figure).
OUTPUTS_JS = f"""() => {{
  const found = [];
  {CURRENT}.content.widgets.forEach((cell, index) => {{
    if (cell.model.type !== 'code') return;
    const children = [...cell.node.querySelectorAll(
      ':scope .jp-Cell-outputArea > .jp-OutputArea-child')];
    const drawn = children.filter(child => {{
      const out = child.querySelector('.jp-OutputArea-output');
      return out && (out.innerText.trim() || out.querySelector('img, svg, table, figure, iframe'));
    }}).length;
    found.push([index, cell.model.outputs.length, drawn]);
  }});
  return found;
}}"""

IMAGES_JS = f"""() => [...{CURRENT}.node.querySelectorAll('.jp-OutputArea-output img')]
  .map(img => [img.complete && img.naturalWidth > 0, img.alt || img.src.slice(0, 40)])"""

# The text a reader sees in each rendered Markdown cell, without code, math
# typeset by MathJax, and scripts (whose text is not shown).
MARKDOWN_JS = f"""() => {{
  const found = [];
  {CURRENT}.content.widgets.forEach((cell, index) => {{
    if (cell.model.type !== 'markdown') return;
    const node = cell.node.querySelector('.jp-RenderedMarkdown');
    if (!node) {{ found.push([index, '<not rendered>', false, false]); return; }}
    const copy = node.cloneNode(true);
    copy.querySelectorAll('code, pre, mjx-container, .MathJax, script, style').forEach(el => el.remove());
    const source = cell.model.sharedModel.getSource();
    found.push([index, copy.textContent, node.querySelector('mjx-container') !== null,
                /\\$[^$\\s]/.test(source.replace(/`[^`]*`/g, ''))]);
  }});
  return found;
}}"""
RAW_MARKDOWN = re.compile(r"\*\*|\]\(|```|\$\$|\\\(|\\\[|^#{1,6} |<(?:img|div|span|a)\b", re.MULTILINE)


def write_json(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


def playgrounds_notebook() -> nbformat.NotebookNode:
    """Every live playground of the package, with the shipped translator, and a tqdm bar."""
    from transformer_edu import figures

    names = sorted(name for name in dir(figures) if name.endswith("_playground"))
    cells = [
        "from tqdm.auto import tqdm\n"
        "from transformer_edu import figures\n"
        "from transformer_edu.translation.pretrained import pretrained_translator\n"
        "\n"
        'translator = pretrained_translator("cpu")',
        'for _ in tqdm(range(3), desc="progress", unit="step"):\n    pass',
    ]
    for name in names:
        parameters = list(inspect.signature(getattr(figures, name)).parameters)
        cells.append(f"figures.{name}({'translator' if parameters[:1] == ['translator'] else ''})")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on localhost over trusted copies of the notebooks; yields (base URL, token)."""
    from nbformat.sign import NotebookNotary

    home = tmp_path_factory.mktemp("jupyterlab")
    root = home / "root"
    data = home / "data"
    data.mkdir(parents=True)
    notary = NotebookNotary(data_dir=str(data))
    for name, path in OPENED:
        notebook = nbformat.read(path, as_version=4)
        notary.sign(notebook)
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, root / name)
    nbformat.write(playgrounds_notebook(), root / PLAYGROUNDS)
    settings = home / "settings"
    write_json(
        settings / "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings",
        {"autosave": False},
    )
    write_json(
        settings / "@jupyterlab/apputils-extension/notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )
    # Every cell in the page, as the checks below read them (JupyterLab 4
    # leaves cells far outside the window out of it by default).
    write_json(
        settings / "@jupyterlab/notebook-extension/tracker.jupyterlab-settings",
        {"windowingMode": "none"},
    )
    token = secrets.token_hex(16)
    port = fs.free_port()
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join(p for p in [str(bs.REPO_ROOT), env.get("PYTHONPATH")] if p),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(data),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        PYTHONHASHSEED="0",
    )
    env.pop("MPLBACKEND", None)  # the kernel's inline backend draws the figures
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False", "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    base = f"http://127.0.0.1:{port}"
    with fs.server(command, f"{base}/api/status?token={token}", env, home, home / "server.log",
                   "JupyterLab"):
        yield base, token


@pytest.fixture(scope="module")
def page(lab):
    """One JupyterLab page in headless Chromium for every notebook (the app loads once)."""
    base, token = lab
    from plotly.offline import get_plotlyjs

    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(fs.CHROMIUM), args=fs.CHROMIUM_ARGS)
        context = chromium.new_context(viewport={"width": 1366, "height": 900})
        fs.offline_routes(context, base, get_plotlyjs())
        tab = context.new_page()
        try:
            tab.goto(f"{base}/lab/workspaces/test?token={token}")
            tab.wait_for_function(APP_READY_JS, timeout=180_000)
            yield tab
        finally:
            chromium.close()


def stored_images(notebook: Path) -> int:
    return sum(1 for _, _, data in fs.stored_outputs(notebook, "image/png") if data)


def opened(page, name: str):
    """Open a notebook of the server's root and wait until every cell is rendered."""
    page.evaluate(OPEN_JS, name)
    page.wait_for_function(RENDERED_JS, timeout=120_000)


def shot_on_failure(page, name: str) -> None:
    fs.ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(fs.ARTIFACTS / f"jupyterlab-{name.replace('/', '-')}.png"))


def run_all(page) -> float:
    """JupyterLab's "Run All Cells" on the notebook's fresh kernel; every cell ran, none failed."""
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    start = time.monotonic()
    page.evaluate(RUN_ALL_JS)
    page.wait_for_function("() => window.__runAll !== undefined", timeout=RUN_TIMEOUT_S * 1000,
                           polling=1000)
    result = page.evaluate("() => window.__runAll")
    assert page.evaluate(ERROR_OUTPUTS_JS) == [], "error outputs"
    assert result["ok"], f"Run All Cells did not complete: {result}"
    assert page.evaluate(UNRUN_CELLS_JS) == [], "cells left unrun"
    page.wait_for_function(KERNEL_IDLE_JS, timeout=60_000)
    return time.monotonic() - start


def no_placeholders(page, when: str) -> None:
    text = page.locator(f"{PANEL} .jp-Notebook").inner_text()
    assert not [p for p in fs.PLACEHOLDERS if p in text], f"widget placeholders {when}"


def exercise_html_explorers(page) -> list[str]:
    figures = page.locator(f"{PANEL} .jp-OutputArea-output figure.tse-explorer")
    return [
        fs.exercise_html_explorer(page, figures.nth(n), figures.nth(n).get_attribute("id"))
        for n in range(figures.count())
    ]


def test_chapter_one_announces_its_explorers():
    """Chapter 1's explorers (the mask explorer among them) are what the tests below change."""
    assert fs.stored_explorers(CHAPTERS[0]) + fs.stored_html_explorers(CHAPTERS[0]) >= 2


def test_live_printed_lines_compare_words_exactly_and_numbers_to_rounding():
    assert fs.same_printed("a 0.5001 b\nc", "a 0.5000 b\nc")
    assert not fs.same_printed("a 0.51 b", "a 0.50 b")
    assert not fs.same_printed("a 0.5 dog", "a 0.5 cat")
    assert not fs.same_printed("one line", "one line\ntwo lines")


def test_raw_markdown_pattern_finds_what_a_renderer_left():
    for raw in ("**bold**", "[a](http://x)", "```", "$$x$$", "## Heading", "<img src=x>"):
        assert RAW_MARKDOWN.search(raw), raw
    assert not RAW_MARKDOWN.search("softmax(QKᵀ / √d_k) V, 3 × 4 = 12 # not a heading")


@pytest.mark.parametrize("name,notebook", OPENED, ids=[name for name, _ in OPENED])
def test_stored_outputs_and_markdown_render(page, name, notebook):
    start = time.monotonic()
    opened(page, name)
    try:
        outputs = page.evaluate(OUTPUTS_JS)
        stored = sum(len(cell.get("outputs", [])) for cell in bs.read_notebook(notebook)["cells"])
        assert sum(count for _, count, _ in outputs) == stored, "outputs missing from the model"
        undrawn = [(index, count, drawn) for index, count, drawn in outputs if drawn != count]
        assert undrawn == [], f"(cell, outputs, drawn): {undrawn}"
        images = page.evaluate(IMAGES_JS)
        assert len(images) >= stored_images(notebook), "images missing"
        assert all(ok for ok, _ in images), [what for ok, what in images if not ok]
        no_placeholders(page, "in the stored outputs")

        raw, untypeset = [], []
        for index, text, typeset, has_math in page.evaluate(MARKDOWN_JS):
            found = RAW_MARKDOWN.search(text)
            if text == "<not rendered>" or found:
                raw.append((index, found.group() if found else text))
            if has_math and (not typeset or "$" in text):
                untypeset.append(index)
        assert raw == [], f"raw Markdown in cells (index, what): {raw}"
        assert untypeset == [], f"math not typeset in cells {untypeset}"

        actions = exercise_html_explorers(page) if name.startswith("notebooks/") else []
        figures = page.locator(f"{PANEL} figure.tse-explorer").count()
        assert figures >= fs.stored_html_explorers(notebook), "kernel-free explorers missing"
        print(f"{name}: {stored} outputs, {len(images)} images, checked in "
              f"{time.monotonic() - start:.0f} s; {actions}")
    except BaseException:
        shot_on_failure(page, name)
        raise
    finally:
        page.evaluate(CLOSE_JS)


def test_chapter_one_runs_end_to_end_and_its_widgets_answer(page):
    name, notebook = OPENED[0]
    assert bs.chapter_number(notebook) == 1
    opened(page, name)
    try:
        seconds = run_all(page)
        ran = time.monotonic()
        states = fs.LIVE_STATES[1]()
        actions = fs.drive_live_widget(page, page.locator(f"{PANEL} .tse-live").first, *states)
        explorers = page.evaluate(fs.mark_explorers_js(f"{PANEL} .jp-Notebook .jp-OutputArea-output"))
        assert explorers >= fs.stored_explorers(notebook), "explorers missing from the page"
        actions += [fs.exercise_explorer(page, index) for index in range(explorers)]
        actions += exercise_html_explorers(page)
        assert len(actions) >= 3 + fs.stored_explorers(notebook) + fs.stored_html_explorers(notebook)
        no_placeholders(page, "after running")
        print(f"{name}: ran in {seconds:.0f} s, widgets {time.monotonic() - ran:.0f} s: {actions}")
    except BaseException:
        shot_on_failure(page, "run-" + name)
        raise
    finally:
        page.evaluate(CLOSE_JS)


def test_every_playground_and_a_progress_bar_in_jupyterlab(page):
    opened(page, PLAYGROUNDS)
    try:
        seconds = run_all(page)
        bar = page.locator(f"{PANEL} .widget-hbox:has(.widget-hprogress, progress, .widget-progress)")
        assert bar.count() == 1, "the tqdm bar is not drawn as a progress widget"
        shown = bar.inner_text().replace("\u2007", " ")  # tqdm pads with figure spaces
        assert "3/3" in shown and "progress: 100%" in shown, shown
        ran = time.monotonic()
        live = page.locator(f"{PANEL} .tse-live")
        names = [name for name in dir(__import__("transformer_edu.figures").figures)
                 if name.endswith("_playground")]
        assert live.count() == len(names), f"{live.count()} playgrounds drawn of {names}"
        states = fs.LIVE_STATES[7]()
        # Chapter 7's sentence playground (figures.attention_playground) is the first
        # one named in alphabetical order.
        assert names[0] == "attention_playground"
        actions = fs.drive_live_widget(page, live.first, *states)
        explorers = page.evaluate(fs.mark_explorers_js(f"{PANEL} .jp-Notebook .jp-OutputArea-output"))
        assert explorers == len(names)
        actions += [fs.exercise_explorer(page, index) for index in range(explorers)]
        no_placeholders(page, "after running")
        print(f"playgrounds: ran in {seconds:.0f} s, widgets {time.monotonic() - ran:.0f} s: {actions}")
    except BaseException:
        shot_on_failure(page, PLAYGROUNDS)
        raise
    finally:
        page.evaluate(CLOSE_JS)
