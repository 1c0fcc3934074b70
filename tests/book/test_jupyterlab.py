"""Every chapter runs in a real JupyterLab, and its widget explorers answer their controls.

The test starts JupyterLab on localhost (a free port, a token, no browser, no
news or update checks, autosave off) over copies of the chapters, opens each
chapter in headless Chromium through Playwright, and:

* before running anything, checks that the stored outputs show no
  "Loading widget..." or "Error displaying widget" placeholder;
* runs all cells with JupyterLab's own "Run All Cells" command on the
  chapter's fresh kernel and checks that it completes with no error output;
* finds every ipywidgets explorer on the page (an output with at least one
  control and something it draws into), changes one control (a dropdown, a
  checkbox, toggle buttons, a slider by keyboard, a text box; the next one if
  a change draws the same picture), and checks that its output redraws;
* drives the live widgets of Chapters 1 and 7 (``transformer_edu.figures``)
  like a reader, before anything else changes them: types a sentence and
  presses Enter, switches the causal mask off and on again, and checks after
  each step that the figure (a PNG) and the printed lines changed, and that
  the printed lines are those of the same state computed here with the
  package (numbers to within rounding);
* draws every kernel-free explorer (``transformer_edu.figures``: HTML
  controls over Plotly, which it loads from Plotly's CDN in Jupyter; the test
  answers that one URL with the plotly package's own copy of the file, as for
  a reader who is online) and presses its controls until its plots and its
  summary change.

Nothing here knows the chapters' cells: the controls are found in the page
after the run, so rewritten chapters keep being tested. Chromium is Debian's
(``/usr/bin/chromium``, or ``CHROMIUM``); requests that leave localhost are
blocked (JupyterLab works offline; only the kernel-free explorers want
Plotly from its CDN, answered locally as said above).
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

pytest.importorskip("jupyterlab", reason="JupyterLab is a test requirement (requirements.txt)")
sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = bs.CHROMIUM
CHAPTERS = [path for path in bs.chapter_notebooks() if path.exists()]
RUN_TIMEOUT_S = 600  # one chapter, all cells (Chapter 7 trains for about a minute)
REDRAW_TIMEOUT_MS = 30_000
ARTIFACTS = bs.REPO_ROOT / "artifacts"
PLACEHOLDERS = ("Loading widget", "Error displaying widget")
PLOTLY_CDN = "https://cdn.plot.ly/plotly-"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"Chromium not found at {CHROMIUM} (set CHROMIUM)"
)

# The notebook panel JupyterLab shows (``expose_app_in_browser`` makes the app global).
CURRENT = "window.jupyterapp.shell.currentWidget"

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

# Marks every explorer (an output with a control and a display element) and
# returns how many there are. A tqdm bar has no control and is left out.
MARK_EXPLORERS_JS = """() => {
  const controls = 'select, input, textarea, button, .noUi-handle';
  const displays = '.widget-output, .widget-html, .widget-htmlmath, .widget-image';
  let count = 0;
  for (const old of document.querySelectorAll('[data-explorer]')) {
    old.removeAttribute('data-explorer');
  }
  const panel = window.jupyterapp.shell.currentWidget.node;
  for (const area of panel.querySelectorAll('.jp-Notebook .jp-OutputArea-output')) {
    if (!area.querySelector('.jupyter-widgets')) continue;
    if (!area.querySelector(controls) || !area.querySelector(displays)) continue;
    area.setAttribute('data-explorer', String(count));
    count += 1;
  }
  return count;
}"""

# What an explorer shows: its display elements' HTML (controls left out).
SNAPSHOT_JS = """area => [...area.querySelectorAll(
    '.widget-output, .widget-html, .widget-htmlmath, .widget-image')]
  .map(el => el.innerHTML).join('\\n')"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_json(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on localhost over copies of the chapters; yields (base URL, token)."""
    home = tmp_path_factory.mktemp("jupyterlab")
    root = home / "root"
    (root / "notebooks").mkdir(parents=True)
    for chapter in CHAPTERS:
        shutil.copy(chapter, root / "notebooks" / chapter.name)
    settings = home / "settings"
    write_json(
        settings / "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings",
        {"autosave": False},
    )
    write_json(
        settings / "@jupyterlab/apputils-extension/notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )
    token = secrets.token_hex(16)
    port = free_port()
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join(p for p in [str(bs.REPO_ROOT), env.get("PYTHONPATH")] if p),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        PYTHONHASHSEED="0",
    )
    env.pop("MPLBACKEND", None)  # the kernel's inline backend draws the figures
    log = (home / "server.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--port-retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--LabApp.extension_manager=readonly",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        cwd=home,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(
                        "JupyterLab did not start:\n" + (home / "server.log").read_text()[-3000:]
                    )
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def page(lab):
    """One JupyterLab page in headless Chromium for all chapters (the app loads once)."""
    base, token = lab
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=bs.CHROMIUM_FLAGS)
        context = chromium.new_context(viewport={"width": 1366, "height": 900})

        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()

        def only_localhost(route):
            url = route.request.url
            if url.startswith(base):
                route.continue_()
            elif url.startswith(PLOTLY_CDN) and url.endswith(".min.js"):
                # A kernel-free explorer loads Plotly from its CDN in Jupyter:
                # answered with the very file the CDN serves (plotly's own
                # copy), as for a reader who is online; nothing else leaves.
                route.fulfill(status=200, content_type="text/javascript", body=plotly_js)
            else:
                route.abort()

        context.route("**/*", only_localhost)
        tab = context.new_page()
        try:
            tab.goto(f"{base}/lab/workspaces/test/tree/notebooks?token={token}")
            tab.wait_for_function(APP_READY_JS, timeout=180_000)
            yield tab
        finally:
            chromium.close()


def stored_outputs(notebook: Path, mime: str):
    """(output, its ``mime`` text) for every stored output of the notebook."""
    for cell in bs.read_notebook(notebook)["cells"]:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get(mime, "")
            yield output, "".join(text) if isinstance(text, list) else text


def stored_explorers(notebook: Path) -> int:
    """How many ipywidgets explorers the stored outputs announce (scripts/execute_notebooks.py's texts)."""
    return sum(
        "execute_notebooks" in output.get("metadata", {}) and text.startswith("Interactive control")
        for output, text in stored_outputs(notebook, "text/plain")
    )


def stored_html_explorers(notebook: Path) -> int:
    """How many kernel-free explorers (``transformer_edu.figures``) the stored outputs hold."""
    return sum(html.count('class="tse-explorer"') for _, html in stored_outputs(notebook, "text/html"))


def test_chapter_one_announces_its_explorers():
    """Chapter 1's explorers (the mask explorer among them) are what the test below changes."""
    assert stored_explorers(CHAPTERS[0]) + stored_html_explorers(CHAPTERS[0]) >= 2


def change_control(area, control) -> str:
    """Change one control inside an explorer; return what was done ('' if nothing)."""
    kind = control.evaluate("el => el.tagName.toLowerCase()")
    classes = control.get_attribute("class") or ""
    if kind == "select":
        options = control.evaluate("el => [...el.options].map(o => o.value)")
        current = control.evaluate("el => el.selectedIndex")
        if len(options) < 2:
            return ""
        target = 1 if current == 0 else 0
        control.select_option(index=target)
        return f"dropdown -> option {target}"
    if kind == "input" and control.get_attribute("type") == "checkbox":
        control.click()
        return "checkbox toggled"
    if kind == "button":
        if "mod-active" in classes or control.is_disabled():
            return ""
        control.click()
        return f"button {control.inner_text()!r} pressed"
    if "noUi-handle" in classes:
        before = control.get_attribute("aria-valuenow")
        control.focus()
        control.press("ArrowRight")
        if control.get_attribute("aria-valuenow") == before:
            control.press("ArrowLeft")
        return "" if control.get_attribute("aria-valuenow") == before else "slider moved"
    if kind in {"input", "textarea"} and control.get_attribute("type") in {None, "text"}:
        control.fill((control.input_value() or "") + " ")
        control.press("Enter")
        return "text edited"
    return ""


HTML_EXPLORERS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget.node;
  return [...panel.querySelectorAll('.jp-Notebook .jp-OutputArea-output figure.tse-explorer')]
    .map(figure => figure.id);
}"""

# What a kernel-free explorer shows: its plots' SVG and its summary sentence.
HTML_SNAPSHOT_JS = """figure => [...figure.querySelectorAll('.tse-panels svg.main-svg, .tse-summary')]
  .map(el => el.outerHTML).join('\\n')"""


def exercise_html_explorer(page, ident: str) -> str:
    """Draw a kernel-free explorer in JupyterLab, then press its controls one
    by one until the plots and summary change; return what was done."""
    figure = page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) figure.tse-explorer#{ident}")
    figure.scroll_into_view_if_needed()
    figure.locator(".tse-controls:not([hidden])").wait_for(timeout=REDRAW_TIMEOUT_MS)
    handle = figure.element_handle()
    page.wait_for_function(
        "figure => figure.querySelectorAll('.tse-panels svg.main-svg').length > 0",
        arg=handle,
        timeout=REDRAW_TIMEOUT_MS,
    )
    tried = []
    controls = figure.locator(".tse-controls button[aria-pressed=false], .tse-controls select, "
                              ".tse-controls input[type=range]")
    for number in range(controls.count()):
        control = controls.nth(number)
        before = handle.evaluate(HTML_SNAPSHOT_JS)
        kind = control.evaluate("el => el.tagName.toLowerCase()")
        if kind == "button":
            control.click()
            action = f"button {control.inner_text()!r}"
        elif kind == "select":
            options = control.evaluate("el => el.options.length")
            if options < 2:
                continue
            target = 1 if control.evaluate("el => el.selectedIndex") == 0 else 0
            control.select_option(index=target)
            action = f"select -> option {target}"
        else:
            control.focus()
            control.press("ArrowRight")
            action = "slider ArrowRight"
        tried.append(action)
        try:
            page.wait_for_function(
                f"([figure, before]) => ({HTML_SNAPSHOT_JS})(figure) !== before",
                arg=[handle, before],
                timeout=REDRAW_TIMEOUT_MS,
            )
        except sync_api.TimeoutError:
            continue
        return f"{ident}: {action}"
    raise AssertionError(f"kernel-free explorer {ident}: no redraw after {tried or 'no usable control'}")


# What a live widget (``transformer_edu.figures``) shows: its printed
# lines and the address of its figure (a PNG data URL).
LIVE_SNAPSHOT_JS = """area => {
  const output = area.querySelector('.widget-output');
  const image = output && output.querySelector('img');
  return [output ? output.innerText : '', image ? image.src : ''];
}"""
NUMBER = re.compile(r"-?\d+\.\d+")


def same_printed(shown: str, expected: str, tolerance: float = 2e-3) -> bool:
    """The same lines, numbers equal to within ``tolerance`` (the kernel may
    run the reader's own attention, or another thread count)."""
    shown_lines = [line.rstrip() for line in shown.strip().splitlines() if line.strip()]
    expected_lines = [line.rstrip() for line in expected.strip().splitlines() if line.strip()]
    if len(shown_lines) != len(expected_lines):
        return False
    for a, b in zip(shown_lines, expected_lines):
        if NUMBER.sub("#", a).split() != NUMBER.sub("#", b).split():
            return False
        numbers = [(float(x), float(y)) for x, y in zip(NUMBER.findall(a), NUMBER.findall(b))]
        if any(abs(x - y) > tolerance for x, y in numbers):
            return False
    return True


def printed(state) -> str:
    """What a live widget prints for a state (figures.LiveExplorer)."""
    return "\n".join([state.summary] + ([state.details] if state.details else []))


def live_step(page, area, action, expected_state, what: str) -> str:
    """Do ``action``; wait until the live widget redraws; check its printed
    lines against ``expected_state`` (computed here) and that its figure changed."""
    handle = area.element_handle()
    before = handle.evaluate(LIVE_SNAPSHOT_JS)
    action()
    page.wait_for_function(
        f"([area, before]) => {{ const now = ({LIVE_SNAPSHOT_JS})(area);"
        # the printed lines arrive after the image: wait for both, not for a cleared output
        " return now[0] !== before[0] && now[0].trim() !== '' && now[1] !== '' && now[1] !== before[1]; }",
        arg=[handle, before],
        timeout=REDRAW_TIMEOUT_MS,
    )
    text, image = handle.evaluate(LIVE_SNAPSHOT_JS)
    assert image.startswith("data:image/png"), f"{what}: no figure drawn"
    assert image != before[1], f"{what}: the figure did not change"
    expected = printed(expected_state)
    assert same_printed(text, expected), f"{what}: shown\n{text}\nexpected\n{expected}"
    return what


def drive_live_widget(page, text_label: str, sentence: str, state_of) -> list[str]:
    """Type ``sentence`` into the live widget's text box, then switch its
    causal mask off and on; ``state_of(sentence, causal)`` is the package's state."""
    area = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .tse-live").first
    area.scroll_into_view_if_needed()
    box = area.locator(f".widget-text:has(label:text-is('{text_label}')) input")
    causal = area.locator(".widget-checkbox:has-text('causal mask') input[type=checkbox]")
    causal_now = causal.is_checked()

    def typed():
        box.fill(sentence)
        box.press("Enter")

    done = [live_step(page, area, typed, state_of(sentence, causal_now), f"typed {sentence!r}")]
    for value in (not causal_now, causal_now):
        done.append(
            live_step(page, area, causal.click, state_of(sentence, value), f"causal mask {value}")
        )
    return done


def chapter_one_live(page) -> list[str]:
    from transformer_edu import figures

    seed = int(os.environ.get("TRANSFORMER_EDU_SEED", "0"))
    return drive_live_widget(
        page,
        "tokens",
        "a dog ran after the cat",
        lambda tokens, causal: figures.mask_state(tokens, 2, True, causal, seed=seed),
    )


@functools.cache
def shipped_translator():
    from transformer_edu.translation.pretrained import pretrained_translator

    return pretrained_translator("cpu")


def chapter_seven_live(page) -> list[str]:
    from transformer_edu import figures

    translator = shipped_translator()
    return drive_live_widget(
        page,
        "Korean",
        "개가 고양이를 쫓았다",
        lambda korean, causal: figures.translation_state(
            translator, korean, causal=causal, layer=translator.model.config.n_layers - 1
        ),
    )


#: Chapters whose live widgets the test drives like a reader (by number).
LIVE_DRIVERS = {1: chapter_one_live, 7: chapter_seven_live}


def test_live_printed_lines_compare_words_exactly_and_numbers_to_rounding():
    assert same_printed("a 0.5001 b\nc", "a 0.5000 b\nc")
    assert not same_printed("a 0.51 b", "a 0.50 b")
    assert not same_printed("a 0.5 dog", "a 0.5 cat")
    assert not same_printed("one line", "one line\ntwo lines")


def exercise_explorer(page, index: int) -> str:
    """Change the explorer's controls one by one until its output redraws."""
    area = page.locator(f'[data-explorer="{index}"]')
    area.scroll_into_view_if_needed()
    handle = area.element_handle()
    controls = area.locator(
        "select, input[type=checkbox], .widget-toggle-buttons button, .noUi-handle, "
        ".widget-text input, textarea"
    )
    tried = []
    for number in range(controls.count()):
        before = handle.evaluate(SNAPSHOT_JS)
        action = change_control(area, controls.nth(number))
        if not action:
            continue
        tried.append(action)
        try:
            page.wait_for_function(
                f"([area, before]) => {{ const now = ({SNAPSHOT_JS})(area);"
                " return now !== before && now.trim() !== ''; }",
                arg=[handle, before],
                timeout=REDRAW_TIMEOUT_MS,
            )
        except sync_api.TimeoutError:
            continue
        return action
    raise AssertionError(f"explorer {index}: no redraw after {tried or 'no usable control'}")


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda path: path.stem)
def test_chapter_runs_in_jupyterlab_and_its_explorers_redraw(page, notebook):
    start = time.monotonic()
    page.evaluate(OPEN_JS, f"notebooks/{notebook.name}")
    try:
        page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
        opened = time.monotonic() - start
        text = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").inner_text()
        assert not [p for p in PLACEHOLDERS if p in text], "placeholders before running"

        start = time.monotonic()
        page.evaluate(RUN_ALL_JS)
        page.wait_for_function(
            "() => window.__runAll !== undefined", timeout=RUN_TIMEOUT_S * 1000, polling=1000
        )
        result = page.evaluate("() => window.__runAll")
        seconds = time.monotonic() - start
        assert page.evaluate(ERROR_OUTPUTS_JS) == [], "error outputs"
        assert result["ok"], f"Run All Cells did not complete: {result}"
        assert page.evaluate(UNRUN_CELLS_JS) == [], "cells left unrun"
        page.wait_for_function(KERNEL_IDLE_JS, timeout=60_000)

        ran = time.monotonic()
        actions = []
        driver = LIVE_DRIVERS.get(bs.chapter_number(notebook))
        if driver is not None:  # first, before the explorers below change it
            actions += driver(page)
        explorers = page.evaluate(MARK_EXPLORERS_JS)
        assert explorers >= stored_explorers(notebook), "explorers missing from the page"
        actions += [exercise_explorer(page, index) for index in range(explorers)]
        figures = page.evaluate(HTML_EXPLORERS_JS)
        assert len(figures) >= stored_html_explorers(notebook), "kernel-free explorers missing"
        actions += [exercise_html_explorer(page, ident) for ident in figures]
        text = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").inner_text()
        assert not [p for p in PLACEHOLDERS if p in text], "widget placeholders after running"
        print(
            f"{notebook.stem}: opened in {opened:.0f} s, ran in {seconds:.0f} s, "
            f"explorers {time.monotonic() - ran:.0f} s: {actions}"
        )
    except BaseException:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"jupyterlab-{notebook.stem}.png"))
        raise
    finally:
        page.evaluate(CLOSE_JS)
