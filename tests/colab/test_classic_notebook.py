"""The chapters as Colab's front end runs them: ipywidgets 7's protocol, Colab's versions.

Colab's front end speaks the protocol of ipywidgets 7 (``@jupyter-widgets``
base 1.x, controls 1.5) and draws none of ipywidgets 8's core widgets
(googlecolab/colabtools issues 3020 and 4525); Colab's runtime has
ipywidgets 7.7.1. The nearest front end that runs here is the classic Jupyter
Notebook 6.5 with widgetsnbextension 3.6, the versions Colab's own package
list has (see :data:`FRONT_END_WIDGETS` for the one file it takes from 3.6.2
instead): this test starts it from the Colab stand-in (``colab_support``;
after the setup cell has installed the package there, ``test_colab_standin``)
on localhost, opens chapters in headless Chromium (Debian's, through
Playwright; nothing leaves localhost but Plotly's CDN file, answered with the
stand-in's own copy) and, for each:

* runs every cell with the Notebook's own "Run All" on a fresh kernel of the
  stand-in (Python 3.13, PyTorch 2.11, NumPy 2.1, ...) and checks that it
  completes with no error output and no cell left unrun: the chapter's every
  assert holds in Colab's versions (outputs are not compared, as with
  nbval-lax: they were stored with another PyTorch);
* checks that no widget shows a placeholder ("Failed to display Jupyter
  Widget", ...) and that every tqdm bar the stored outputs hold is drawn as a
  progress widget that reached its end;
* drives the live playground of Chapters 1 and 7 like a reader: types a
  sentence and presses Enter, switches the causal mask off and on, and checks
  after each step that the figure and the printed lines changed, and that the
  lines are the package's own for that state;
* changes a control of every ipywidgets explorer and checks that it redraws,
  and presses the controls of every kernel-free explorer until its plots change.

Chapter 1 and the Korean Chapter 1 run in every ``bash .ci/test`` (Chapter 7,
2 min 19 s here, left to the full run to keep the suite's time);
``TRANSFORMER_EDU_COLAB_CHAPTERS=all`` (``bash .ci/colab`` and the GitHub
workflow ``colab.yml``) runs every chapter so, the stand-in's counterpart of
nbval-lax. Screenshots of each chapter's live widget and progress bar go to
``artifacts/``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

if __package__:
    from . import colab_support as cs
else:
    import colab_support as cs

sys.path.insert(0, str(cs.REPO_ROOT / "tests" / "book"))
import frontend_support as fs  # noqa: E402

sync_api = pytest.importorskip("playwright.sync_api")

#: The classic Notebook's widget manager (widgetsnbextension's nbextension, a
#: JavaScript bundle) is served from this release. Colab's list has 3.6.10, but
#: Colab draws widgets with its own front end, never with this bundle; and the
#: bundles of 3.6.3 to 3.6.10 cannot make an Output widget in the classic
#: Notebook at all ("TypeError: n._deserialize_state is not a function": their
#: Output model extends an ES2015 class with Backbone's ``extend``, which drops
#: its static methods), so every live playground would show nothing, in every
#: chapter, whatever the package did. 3.6.2's bundle is the last that draws one,
#: and speaks the same protocol as Colab (widget protocol 2, controls 1.5.0,
#: output 1.0.0). Only the bundle: the stand-in's Python packages stay Colab's.
FRONT_END_WIDGETS = "3.6.2"
RUN_TIMEOUT_S = 900  # one chapter, all cells (Chapter 9 is the longest, about 2 min alone)
KOREAN = cs.REPO_ROOT / "locales" / "ko" / "notebooks"

# (notebook in the server's root, its file here). Every English chapter and the
# Korean Chapter 1.
ALL = [(f"notebooks/{path.name}", path) for path in cs.bs.chapter_notebooks() if path.exists()] + [
    ("ko/01_attention.ipynb", KOREAN / "01_attention.ipynb")
]
EVERY_RUN = {"notebooks/01_attention.ipynb", "ko/01_attention.ipynb"}


def selected() -> list[tuple[str, Path]]:
    """The notebooks this run drives: all with TRANSFORMER_EDU_COLAB_CHAPTERS=all."""
    if os.environ.get("TRANSFORMER_EDU_COLAB_CHAPTERS", "").strip() == "all":
        return ALL
    return [item for item in ALL if item[0] in EVERY_RUN]


pytestmark = pytest.mark.skipif(
    not fs.CHROMIUM.exists(), reason=f"Chromium not found at {fs.CHROMIUM} (set CHROMIUM)"
)

READY_JS = """() => Boolean(window.Jupyter && Jupyter.notebook && Jupyter.notebook._fully_loaded
  && Jupyter.notebook.kernel && Jupyter.notebook.kernel.is_connected()
  && document.querySelector('#kernel_indicator_icon.kernel_idle_icon')
  && window.require && require.defined('nbextensions/jupyter-js-widgets/extension'))"""

DONE_JS = """() => Jupyter.notebook.get_cells().every(
    cell => cell.cell_type !== 'code' || cell.input_prompt_number !== '*')
  && Boolean(document.querySelector('#kernel_indicator_icon.kernel_idle_icon'))"""

ERRORS_JS = """() => Jupyter.notebook.get_cells().flatMap((cell, index) =>
  cell.cell_type !== 'code' ? [] : cell.output_area.outputs
    .filter(output => output.output_type === 'error')
    .map(output => [index, output.ename, output.evalue]))"""

UNRUN_JS = """() => Jupyter.notebook.get_cells().flatMap((cell, index) =>
  cell.cell_type === 'code' && cell.get_text().trim()
    && typeof cell.input_prompt_number !== 'number' ? [index] : [])"""

# A tqdm bar of ipywidgets 7: an HBox of an HTML label, a FloatProgress and an HTML count.
PROGRESS_JS = """index => {
  const cell = Jupyter.notebook.get_cell(index);
  return [...cell.element[0].querySelectorAll('.widget-hbox')]
    .filter(box => box.querySelector('.widget-hprogress'))
    .map(box => ({text: box.innerText.replace(/\\s+/g, ' ').trim(),
                  width: box.querySelector('.progress-bar').style.width}));
}"""


@pytest.fixture(scope="module")
def widget_bundle(standin, tmp_path_factory) -> Path:
    """A Jupyter data folder holding widgetsnbextension FRONT_END_WIDGETS's
    nbextension (pip downloads the wheel, a registry package, from its cache
    after the first time); on JUPYTER_PATH it comes before the stand-in's own."""
    home = tmp_path_factory.mktemp("widget-bundle")
    got = subprocess.run(
        [str(standin.python), "-m", "pip", "download", "--quiet", "--no-deps",
         "--only-binary=:all:", f"widgetsnbextension=={FRONT_END_WIDGETS}", "-d", str(home)],
        capture_output=True, text=True, timeout=600,
    )
    assert got.returncode == 0, got.stderr[-3000:]
    (wheel,) = home.glob("widgetsnbextension-*.whl")
    prefix = f"widgetsnbextension-{FRONT_END_WIDGETS}.data/data/share/jupyter/"
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith(prefix + "nbextensions/"):
                target = home / "jupyter" / name.removeprefix(prefix)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(name))
    assert (home / "jupyter" / "nbextensions" / "jupyter-js-widgets" / "extension.js").is_file()
    return home / "jupyter"


@pytest.fixture(scope="module")
def notebook_server(standin, installed, widget_bundle, tmp_path_factory):
    """The classic Notebook of the stand-in, over copies of the notebooks; yields (base URL, token)."""
    home = tmp_path_factory.mktemp("classic")
    root = home / "root"
    for name, path in ALL:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, root / name)
    token = secrets.token_hex(16)
    port = fs.free_port()
    env = standin.env(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_PATH=str(widget_bundle),
        PYTHONHASHSEED="0",
    )
    command = [
        str(standin.python), "-m", "notebook", "--no-browser", "--allow-root",
        "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
        f"--NotebookApp.token={token}", f"--NotebookApp.notebook_dir={root}",
        "--NotebookApp.terminals_enabled=False",
    ]
    base = f"http://127.0.0.1:{port}"
    with fs.server(command, f"{base}/api/status?token={token}", env, home, home / "server.log",
                   "the classic Notebook"):
        yield base, token


@pytest.fixture(scope="module")
def browser(notebook_server, standin):
    base, _ = notebook_server
    plotly_js = next(standin.venv.glob("lib/python3*/site-packages/plotly/package_data/plotly.min.js"))
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(fs.CHROMIUM), args=fs.CHROMIUM_ARGS)
        context = chromium.new_context(viewport={"width": 1366, "height": 900})
        fs.offline_routes(context, base, plotly_js.read_text(encoding="utf-8"))
        try:
            yield context
        finally:
            chromium.close()


def wait_for_widget_manager(page, messages: list[str]) -> None:
    """Wait until the widget manager has asked the kernel for its widgets.

    On connecting, the manager of ipywidgets 7 asks the kernel for the
    widgets it already has (through the "jupyter.widget.control" comm, given
    up after 4 s or when the kernel, as ipywidgets 7.7.1's does, closes it;
    then through a comm_info request) and re-renders every widget output when
    the answer comes. Cells run before that may see their new widget output
    emptied by that re-rendering: a reader clicking Run All the moment the
    page opens could meet it too; Colab's front end has no such step.
    """
    deadline = time.monotonic() + 6  # the manager's own limit is 4 s
    while time.monotonic() < deadline and not any("jupyter.widget.control" in m for m in messages):
        page.wait_for_timeout(200)
    # A comm_info request answered after the manager's own: it has its answer too.
    page.evaluate("() => new Promise(done => Jupyter.notebook.kernel.comm_info('jupyter.widget', done))")
    page.wait_for_timeout(500)


def shot(element, name: str) -> None:
    fs.ARTIFACTS.mkdir(exist_ok=True)
    element.screenshot(path=str(fs.ARTIFACTS / name))


def check_progress_bars(page, notebook: Path, stem: str) -> list[str]:
    """Every tqdm bar of the stored outputs is drawn as an ipywidgets 7 progress bar
    that reached the end its stored text shows."""
    done = []
    for index, stored in fs.stored_progress_bars(notebook):
        bars = page.evaluate(PROGRESS_JS, index)
        assert bars, f"cell {index}: no progress widget (stored: {stored!r})"
        label = stored.split("|")[0].strip()  # "reverse task: 100%"
        count = stored.split("|")[-1].split("[")[0].strip()  # "12/12"
        assert any(label in bar["text"] and count in bar["text"] for bar in bars), (bars, stored)
        if "(stopped early)" not in stored:
            assert any(bar["width"] == "100%" for bar in bars), bars
        box = page.locator(".widget-hbox:has(.widget-hprogress)").first
        shot(box, f"classic-{stem}-progress.png")
        done.append(f"progress bar of cell {index}: {label} {count}")
    return done


@pytest.mark.parametrize("name,notebook", selected(), ids=[name for name, _ in selected()])
def test_chapter_runs_in_the_classic_notebook_with_colabs_versions(browser, notebook_server, name, notebook):
    base, token = notebook_server
    stem = name.replace("/", "-").removesuffix(".ipynb")
    page = browser.new_page()
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    try:
        start = time.monotonic()
        page.goto(f"{base}/notebooks/{name}?token={token}")
        page.wait_for_function(READY_JS, timeout=180_000)
        wait_for_widget_manager(page, messages)
        opened = time.monotonic() - start

        start = time.monotonic()
        page.evaluate("() => Jupyter.notebook.execute_all_cells()")
        page.wait_for_function(DONE_JS, timeout=RUN_TIMEOUT_S * 1000, polling=1000)
        seconds = time.monotonic() - start
        assert page.evaluate(ERRORS_JS) == [], "error outputs"
        assert page.evaluate(UNRUN_JS) == [], "cells left unrun"
        text = page.locator("#notebook").inner_text()
        assert not [p for p in fs.PLACEHOLDERS if p in text], "widget placeholders"

        ran = time.monotonic()
        actions = check_progress_bars(page, notebook, stem)
        states = fs.LIVE_STATES.get(cs.bs.chapter_number(notebook))
        if states is not None:  # first, before the explorers below change it
            area = page.locator("#notebook .tse-live").first
            actions += fs.drive_live_widget(page, area, *states())
            shot(area, f"classic-{stem}-live.png")
        explorers = page.evaluate(fs.mark_explorers_js("#notebook .output_area"))
        assert explorers >= fs.stored_explorers(notebook), "explorers missing from the page"
        actions += [fs.exercise_explorer(page, index) for index in range(explorers)]
        figures = page.locator("#notebook figure.tse-explorer")
        assert figures.count() >= fs.stored_html_explorers(notebook), "kernel-free explorers missing"
        for number in range(figures.count()):
            figure = figures.nth(number)
            actions.append(fs.exercise_html_explorer(page, figure, figure.get_attribute("id")))
        text = page.locator("#notebook").inner_text()
        assert not [p for p in fs.PLACEHOLDERS if p in text], "widget placeholders after the controls"
        print(
            f"{name}: opened in {opened:.0f} s, ran in {seconds:.0f} s, "
            f"widgets {time.monotonic() - ran:.0f} s: {actions}"
        )
    except BaseException:
        fs.ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(fs.ARTIFACTS / f"classic-{stem}-failure.png"))
        raise
    finally:
        page.evaluate("() => new Promise(done => Jupyter.notebook.session.delete(done, done))")
        page.close()
