"""What the front-end tests share (test_jupyterlab.py, tests/colab/test_classic_notebook.py).

A Jupyter server started on localhost, Debian's Chromium driven by Playwright,
the chapters' stored outputs read for what a front end must show, the printed
lines of a live widget compared with the package's own state, and the
reader's moves on the controls of ipywidgets 7 and 8.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

CHROMIUM = bs.CHROMIUM
CHROMIUM_ARGS = bs.CHROMIUM_FLAGS
ARTIFACTS = bs.REPO_ROOT / "artifacts"
REDRAW_TIMEOUT_MS = 30_000  # a live widget: the kernel computes and draws
HTML_REDRAW_TIMEOUT_MS = 8_000  # a kernel-free explorer: the page's own script redraws
PLOTLY_CDN = "https://cdn.plot.ly/plotly-"
#: What a front end shows where it cannot draw a widget (JupyterLab; the
#: classic Notebook with ipywidgets 7).
PLACEHOLDERS = (
    "Loading widget",
    "Error displaying widget",
    "Failed to display Jupyter Widget",
    "A Jupyter widget could not be displayed",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def server(command: list[str], url: str, env: dict, cwd: Path, log_path: Path, what: str):
    """Start a Jupyter server; yield once ``url`` answers; stop it after."""
    import pytest

    log = log_path.open("w")
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(f"{what} did not start:\n" + log_path.read_text()[-3000:])
                time.sleep(0.5)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def offline_routes(context, base: str, plotly_js: str) -> None:
    """Let the page reach ``base`` only. A kernel-free explorer loads Plotly from
    its CDN in Jupyter: that one file is answered with ``plotly_js`` (the plotly
    package's own copy, the very file the CDN serves), as for a reader online."""

    def route(request_route):
        url = request_route.request.url
        if url.startswith(base):
            request_route.continue_()
        elif url.startswith(PLOTLY_CDN) and url.split("?")[0].endswith(".min.js"):
            # (the classic Notebook's RequireJS adds "?v=..." to the address)
            request_route.fulfill(status=200, content_type="text/javascript", body=plotly_js)
        else:
            request_route.abort()

    context.route("**/*", route)


# --------------------------------------------------------------------------- #
# The chapters' stored outputs                                                 #
# --------------------------------------------------------------------------- #

def stored_outputs(notebook: Path, mime: str):
    """(cell index, output, its ``mime`` text) for every stored output of the notebook."""
    for index, cell in enumerate(bs.read_notebook(notebook)["cells"]):
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get(mime, "")
            yield index, output, "".join(text) if isinstance(text, list) else text


def stored_explorers(notebook: Path) -> int:
    """How many ipywidgets explorers the stored outputs announce (scripts/execute_notebooks.py's texts)."""
    return sum(
        "execute_notebooks" in output.get("metadata", {}) and text.startswith("Interactive control")
        for _, output, text in stored_outputs(notebook, "text/plain")
    )


def stored_progress_bars(notebook: Path) -> list[tuple[int, str]]:
    """(cell index, the bar's final text) of every tqdm bar the stored outputs hold."""
    return [
        (index, text)
        for index, output, text in stored_outputs(notebook, "text/plain")
        if "execute_notebooks" in output.get("metadata", {}) and "|" in text
        and not text.startswith("Interactive control")
    ]


def stored_html_explorers(notebook: Path) -> int:
    """How many kernel-free explorers (``transformer_edu.figures``) the stored outputs hold."""
    return sum(html.count('class="tse-explorer"') for _, _, html in stored_outputs(notebook, "text/html"))


# --------------------------------------------------------------------------- #
# Live widgets: what they print, compared with the package's state             #
# --------------------------------------------------------------------------- #

NUMBER = re.compile(r"-?\d+\.\d+")


def same_printed(shown: str, expected: str, tolerance: float = 2e-3) -> bool:
    """The same lines, numbers equal to within ``tolerance`` (the kernel may
    run the reader's own attention, another thread count or another PyTorch)."""
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


def chapter_one_states():
    """Chapter 1's mask playground: (its text box's label, a sentence, state(sentence, causal))."""
    from transformer_edu import figures

    seed = int(os.environ.get("TRANSFORMER_EDU_SEED", "0"))
    return (
        "tokens",
        "a dog ran after the cat",
        lambda tokens, causal: figures.mask_state(tokens, 2, True, causal, seed=seed),
    )


def chapter_seven_states():
    """Chapter 7's sentence playground on the shipped translator."""
    from transformer_edu import figures
    from transformer_edu.translation.pretrained import pretrained_translator

    translator = pretrained_translator("cpu")
    return (
        "Korean",
        "개가 고양이를 쫓았다",
        lambda korean, causal: figures.translation_state(
            translator, korean, causal=causal, layer=translator.model.config.n_layers - 1
        ),
    )


#: Chapters whose live widgets the front-end tests drive like a reader (by number).
LIVE_STATES = {1: chapter_one_states, 7: chapter_seven_states}

#: An Output widget's element: ipywidgets 8, and ipywidgets 7 in the classic Notebook.
OUTPUT_WIDGET = ".widget-output, .jupyter-widgets-output-area"

# What a live widget shows: its printed lines and the address of its figure
# (a PNG data URL).
LIVE_SNAPSHOT_JS = f"""area => {{
  const output = area.querySelector('{OUTPUT_WIDGET}');
  const image = output && output.querySelector('img');
  return [output ? output.innerText : '', image ? image.src : ''];
}}"""


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


def drive_live_widget(page, area, text_label: str, sentence: str, state_of) -> list[str]:
    """Type ``sentence`` into the live widget's text box and press Enter, then
    switch its causal mask off and on; ``state_of(sentence, causal)`` is the
    package's state. The same moves in ipywidgets 7 and 8."""
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


# --------------------------------------------------------------------------- #
# ipywidgets explorers: change a control, see the output redraw                #
# --------------------------------------------------------------------------- #

#: The controls a reader changes, in the order they are tried: the ones whose
#: every change redraws first (ipywidgets 8's sliders are noUiSlider handles,
#: ipywidgets 7's jQuery UI's), a text box last.
CONTROL_KINDS = (
    "input[type=checkbox]",
    ".widget-toggle-buttons button",
    "select",
    ".noUi-handle, .ui-slider-handle",
    ".widget-text input, textarea",
)
DISPLAYS = f"{OUTPUT_WIDGET}, .widget-html, .widget-htmlmath, .widget-image"

# What an explorer shows: its display elements' HTML (controls left out).
SNAPSHOT_JS = f"""area => [...area.querySelectorAll('{DISPLAYS}')]
  .map(el => el.innerHTML).join('\\n')"""


def mark_explorers_js(outputs: str) -> str:
    """JavaScript that marks every explorer (an output with a control and a
    display element) among the ``outputs`` elements and returns their number.
    A tqdm bar has no control and is left out."""
    return f"""() => {{
  const controls = 'select, input, textarea, button, .noUi-handle, .ui-slider-handle';
  let count = 0;
  for (const old of document.querySelectorAll('[data-explorer]')) {{
    old.removeAttribute('data-explorer');
  }}
  for (const area of document.querySelectorAll('{outputs}')) {{
    if (!area.querySelector('.jupyter-widgets')) continue;
    if (!area.querySelector(controls) || !area.querySelector('{DISPLAYS}')) continue;
    area.setAttribute('data-explorer', String(count));
    count += 1;
  }}
  return count;
}}"""


def _slider_value(control) -> str:
    return control.evaluate(
        """el => el.getAttribute('aria-valuenow')
          || (el.closest('.widget-slider') || el.parentElement.parentElement)
               .querySelector('.widget-readout')?.innerText || el.style.left"""
    )


def change_control(control) -> str:
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
        if "mod-active" in classes or "active" in classes.split() or control.is_disabled():
            return ""
        control.click()
        return f"button {control.inner_text()!r} pressed"
    if "noUi-handle" in classes or "ui-slider-handle" in classes:
        before = _slider_value(control)
        control.focus()
        control.press("ArrowRight")
        if _slider_value(control) == before:
            control.press("ArrowLeft")
        return "" if _slider_value(control) == before else "slider moved"
    if kind in {"input", "textarea"} and control.get_attribute("type") in {None, "text"}:
        words = (control.input_value() or "").split()
        control.fill(" ".join(words + words[:1]) or "a")  # its first word again
        control.press("Enter")
        return "text edited"
    return ""


def exercise_explorer(page, index: int) -> str:
    """Change the explorer's controls one by one until its output redraws."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    area = page.locator(f'[data-explorer="{index}"]')
    area.scroll_into_view_if_needed()
    handle = area.element_handle()
    tried = []
    for kind in CONTROL_KINDS:
        controls = area.locator(kind)
        for number in range(controls.count()):
            before = handle.evaluate(SNAPSHOT_JS)
            action = change_control(controls.nth(number))
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
            except PlaywrightTimeout:
                continue
            return action
    raise AssertionError(f"explorer {index}: no redraw after {tried or 'no usable control'}")


# What a kernel-free explorer shows: its plots' SVG and its summary sentence.
HTML_SNAPSHOT_JS = """figure => [...figure.querySelectorAll('.tse-panels svg.main-svg, .tse-summary')]
  .map(el => el.outerHTML).join('\\n')"""


def exercise_html_explorer(page, figure, ident: str) -> str:
    """Draw a kernel-free explorer (``figure``, a locator), then press its
    controls one by one until the plots and summary change; return what was done."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

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
                timeout=HTML_REDRAW_TIMEOUT_MS,
            )
        except PlaywrightTimeout:
            continue
        return f"{ident}: {action}"
    raise AssertionError(f"kernel-free explorer {ident}: no redraw after {tried or 'no usable control'}")
