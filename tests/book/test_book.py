"""The book builds without a warning, links to the right places and works offline.

The build (``jupyter-book build . --all -W -n --keep-going``) runs once per
session, in a torch-free environment made from ``requirements-book.txt`` as
``.ci/book`` would on a fresh machine (``book_support.build_book``), and is
shared with ``test_browser.py``.
"""

from __future__ import annotations

import filecmp
import importlib.util
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

if __package__:
    from . import book_support as bs
else:
    import book_support as bs


def missing_chapters() -> list[Path]:
    return [path for path in bs.chapter_notebooks() if not path.exists()]


@pytest.fixture(scope="session")
def built_book() -> bs.BookBuild:
    missing = missing_chapters()
    if missing:
        numbers = ", ".join(str(bs.chapter_number(path)) for path in missing)
        pytest.skip(f"chapter {numbers} not written yet")
    return bs.build_book()


def load_measure_costs():
    path = bs.REPO_ROOT / "scripts" / "measure_costs.py"
    spec = importlib.util.spec_from_file_location("measure_costs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Resources(HTMLParser):
    """Collects the scripts and stylesheets a page loads."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.stylesheets: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        if tag == "link" and "stylesheet" in (attrs.get("rel") or "") and attrs.get("href"):
            self.stylesheets.append(attrs["href"])


def page_resources(path: Path) -> _Resources:
    parser = _Resources()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def is_remote(url: str) -> bool:
    return url.startswith(("http://", "https://", "//"))


def built_pages(book: bs.BookBuild) -> list[Path]:
    pages = sorted(book.html_dir.rglob("*.html"))
    assert pages, "the build wrote no HTML page"
    return pages


# --------------------------------------------------------------------------- #
# The build                                                                    #
# --------------------------------------------------------------------------- #

def test_book_builds_without_warnings(built_book):
    assert built_book.returncode == 0, built_book.log[-6000:]
    assert "build succeeded" in built_book.log
    assert "WARNING" not in built_book.log, built_book.log[-6000:]


@pytest.mark.parametrize("page", bs.toc_files())
def test_every_toc_page_has_an_html_file(built_book, page):
    path = bs.html_path(page)
    assert path.is_file(), f"{page} is in _toc.yml but {path} was not built"
    assert "<article" in path.read_text(encoding="utf-8")


def test_toc_names_every_chapter_in_order():
    numbers = [bs.chapter_number(path) for path in bs.chapter_notebooks()]
    assert numbers == list(range(1, 11))  # Chapters 1 to 10


# --------------------------------------------------------------------------- #
# The repository address: one value in _config.yml and every setup cell        #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize(
    "notebook", bs.chapter_notebooks(), ids=lambda path: path.stem
)
def test_setup_cell_uses_the_books_repository(notebook):
    if not notebook.exists():
        pytest.skip(f"chapter {bs.chapter_number(notebook)} not written yet")
    cell = bs.setup_cell(bs.read_notebook(notebook))
    assert cell is not None, f"{notebook.name} has no setup cell (starting with {bs.SETUP_COMMENT!r})"
    assert bs.repo_url_in(cell) == bs.read_config()["repository"]["url"]
    assert "TRANSFORMER_EDU_SOURCE" in cell["source"]


def test_repository_url_is_the_one_the_launch_buttons_use():
    config = bs.read_config()
    assert config["repository"]["url"] == "https://github.com/transformer-step-by-step/book"
    assert config["repository"]["branch"] == "main"
    # The book sits at the repository root: a non-empty path would be put in
    # front of "notebooks/..." in every Colab and Binder link.
    assert config["repository"].get("path_to_book", "") == ""


@pytest.mark.parametrize("notebook", bs.chapter_notebooks(), ids=lambda path: path.stem)
def test_chapter_page_offers_its_notebook(built_book, notebook):
    page = bs.html_path(notebook.relative_to(bs.REPO_ROOT).with_suffix("").as_posix())
    html = page.read_text(encoding="utf-8")
    relative = notebook.relative_to(bs.REPO_ROOT).as_posix()
    download = f'href="../_sources/{relative}"'
    assert download in html, "no .ipynb download button"
    served = built_book.html_dir / "_sources" / relative
    assert served.read_bytes() == notebook.read_bytes()
    config = bs.read_config()
    assert bs.colab_url(config, notebook) in html
    binder = f"https://mybinder.org/v2/gh/transformer-step-by-step/book/main?urlpath=tree/{relative}"
    assert binder in html


# --------------------------------------------------------------------------- #
# Offline: Plotly and KaTeX come from the site                                 #
# --------------------------------------------------------------------------- #

def has_explorer(page: Path) -> bool:
    return 'class="tse-explorer"' in page.read_text(encoding="utf-8")


def test_only_pages_with_an_explorer_load_its_script_and_none_loads_plotly(built_book):
    """Plotly (1.5 MB) is never in a page's <head>: explorers.js loads it from
    the site, on pages with an explorer, once one comes near the view."""
    for page in built_pages(built_book):
        scripts = [s.split("?")[0] for s in page_resources(page).scripts]
        assert not [s for s in scripts if "plotly" in s.lower()], f"{page.name} loads Plotly in <head>"
        explorers = [s for s in scripts if s.endswith("_static/explorers.js")]
        styles = [s for s in page_resources(page).stylesheets if "explorers.css" in s]
        if has_explorer(page):
            assert len(explorers) == 1 and len(styles) == 1, page.name
            assert re.search(r'<script data-tse-explorers="1" defer="defer" src="[^"]*explorers\.js',
                             page.read_text(encoding="utf-8"))
        else:
            assert not explorers and not styles, f"{page.name} has no explorer but loads its script"
    # the inline copy each explorer carries for Jupyter is not in the book
    for page in built_pages(built_book):
        assert "data-tse-inline" not in page.read_text(encoding="utf-8")


def test_site_serves_plotly_from_npm_pinned_to_the_version_of_plotly_py(built_book):
    from plotly.offline import get_plotlyjs_version

    lock = json.loads((bs.REPO_ROOT / "package-lock.json").read_text(encoding="utf-8"))
    for package in ("plotly.js", "esbuild"):
        assert lock["packages"][f"node_modules/{package}"]["integrity"].startswith("sha512-"), package
    pinned = lock["packages"]["node_modules/plotly.js"]
    assert pinned["version"] == get_plotlyjs_version(), (
        "package.json pins plotly.js to another version than the plotly.js of the installed plotly package"
    )
    built = bs.REPO_ROOT / "node_modules" / ".book" / "plotly-cartesian.min.js"  # by .ci/npm
    served = built_book.html_dir / "_static" / "plotly-cartesian.min.js"
    assert filecmp.cmp(built, served, shallow=False)
    text = served.read_text(encoding="utf-8")
    assert f"v{get_plotlyjs_version()}" in text[:300]
    traces = re.findall(r'moduleType:"trace",name:"([a-z0-9]+)"', text)
    assert sorted(traces) == ["bar", "heatmap", "scatter"]  # what the explorers draw, and no more
    assert len(text.encode()) < 1_250_000  # Plotly's own cartesian bundle is 1.5 MB
    for name, source in (("explorers.js", "explorer.js"), ("explorers.css", "explorer.css")):
        package = bs.REPO_ROOT / "transformer_edu" / "assets" / "explorer" / source
        assert filecmp.cmp(package, built_book.html_dir / "_static" / name, shallow=False)


def test_no_page_loads_scripts_or_styles_from_the_network(built_book):
    for page in built_pages(built_book):
        resources = page_resources(page)
        remote = [u for u in resources.scripts + resources.stylesheets if is_remote(u)]
        assert not remote, f"{page.relative_to(built_book.html_dir)} loads {remote}"


def test_math_is_typeset_when_the_book_is_built(built_book):
    """KaTeX (book/_ext/katex_math.py) turns every formula into HTML and
    MathML during the build: no page loads a math script, and only pages with
    math load KaTeX's stylesheet, whose fonts the site serves."""
    lock = json.loads((bs.REPO_ROOT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"]["node_modules/katex"]["integrity"].startswith("sha512-")
    typeset = 0
    for page in built_pages(built_book):
        text = page.read_text(encoding="utf-8")
        resources = page_resources(page)
        name = page.relative_to(built_book.html_dir)
        assert not [s for s in resources.scripts if re.search(r"mathjax|katex", s, re.I)], name
        assert "math-error" not in text, f"{name}: a formula KaTeX could not typeset"
        spans = re.findall(r'<(?:span|div) class="math notranslate nohighlight"[^>]*>(.{0,200})', text, re.S)
        styles = [s for s in resources.stylesheets if s.split("?")[0].endswith("katex/katex.min.css")]
        assert len(styles) == (1 if spans else 0), f"{name}: {len(spans)} formulas, {styles}"
        for start in spans:  # typeset: KaTeX's HTML, with its MathML copy for screen readers
            assert re.match(r'\s*(<span class="eqno">.*)?<span class="katex', start, re.S), (name, start)
        assert text.count('<span class="katex-mathml">') >= len(spans), name
        typeset += len(spans)
    assert typeset >= 150  # Chapters 3 and 4 carry most of the book's formulas
    css = (built_book.html_dir / "_static" / "katex" / "katex.min.css").read_text(encoding="utf-8")
    fonts = re.findall(r"url\(([^)]+)\)", css)
    assert fonts and all(font.endswith(".woff2") for font in fonts)
    for font in fonts:
        assert (built_book.html_dir / "_static" / "katex" / font).is_file(), font


# --------------------------------------------------------------------------- #
# Generated and reference pages                                                #
# --------------------------------------------------------------------------- #

def test_costs_page_is_generated_from_costs_json():
    measure_costs = load_measure_costs()
    data = measure_costs.load_costs()
    page = (bs.REPO_ROOT / "book" / "costs.md").read_text(encoding="utf-8")
    assert page == measure_costs.render_markdown(data), (
        "book/costs.md differs from book/_data/costs.json: "
        "run `python scripts/measure_costs.py --render-only`"
    )
    for run in data["runs"]:
        assert run["device"] in measure_costs.DEVICE_NAMES
        assert {c["notebook"] for c in run["chapters"]} <= {
            p.relative_to(bs.REPO_ROOT).as_posix() for p in bs.chapter_notebooks()
        }


def test_costs_page_renders_a_measurement():
    measure_costs = load_measure_costs()
    run = {
        "device": "cpu", "date": "2025-01-01", "python": "3.11", "torch": "2.0",
        "machine": {"platform": "Linux", "cpu": "Some CPU", "cpu_count": 2, "gpu": None},
        "chapters": [
            {"notebook": "notebooks/01_attention.ipynb", "title": "t", "seconds": 75.0, "status": "ok"},
            {"notebook": "notebooks/02_multi_head_attention.ipynb", "title": "t", "seconds": 1.0, "status": "error"},
        ],
        "benchmarks": [
            {"script": "benchmarks/b.py", "description": "cache", "ratios": {"speed-up": 4.25}, "status": "ok"}
        ],
    }
    text = measure_costs.render_markdown({"runs": [run]})
    assert "| {doc}`/notebooks/01_attention` | 1 min 15 s |" in text
    assert "| {doc}`/notebooks/02_multi_head_attention` | failed |" in text
    assert "| **All chapters** | **1 min 15 s (1 of 2 chapters)** |" in text  # the failed one not counted
    assert "| `benchmarks/b.py`: cache | speed-up | 4.25× |" in text


def test_costs_page_gives_each_device_its_own_benchmark_table():
    measure_costs = load_measure_costs()

    def run(device, gpu, details):
        return {
            "device": device, "date": "2025-01-01", "python": "3.12", "torch": "2.0",
            "machine": {"platform": "Linux", "cpu": "Some CPU", "cpu_count": 16, "gpu": gpu},
            "chapters": [{"notebook": "notebooks/01_attention.ipynb", "title": "t", "seconds": 9.0, "status": "ok"}],
            "benchmarks": [{"script": "benchmarks/b.py", "description": f"on {device}", "ratios": {"speed-up": 2.0},
                            "status": "ok", "details": {"name": "b", "details": details}}],
        }

    gpu_details = {"peak_memory_mib": {"ours, float32": 2048.4},
                   "profile": {"setting": "d_model 512", "step_ms": 1.234, "reads_per_step": 0.125}}
    text = measure_costs.render_markdown({"runs": [run("cuda", "Some GPU", gpu_details), run("cpu", None, {})]})
    cpu, gpu = text.index("### CPU"), text.index("### GPU (CUDA): Some GPU")
    assert cpu < gpu  # the CPU first, whatever the order in the JSON
    assert "| `benchmarks/b.py`: on cpu | speed-up | 2× |" in text[cpu:gpu]
    assert "| `benchmarks/b.py`: on cuda | speed-up | 2× |" in text[gpu:]
    assert "- Peak GPU memory of decoding, ours, float32: 2,048 MiB." in text
    assert "1.23 ms per step, 0.12 reads of a value from the GPU per step" in text
    assert "| {doc}`/notebooks/01_attention` | 9.0 s | 9.0 s |" in text


def test_architecture_map_labels_every_chapter():
    svg = (bs.REPO_ROOT / "book" / "images" / "architecture.svg").read_text(encoding="utf-8")
    for number in range(1, 9):
        assert f"Ch. {number}" in svg, f"the architecture map has no box for chapter {number}"
    assert "images/architecture.svg" in (bs.REPO_ROOT / "book" / "intro.md").read_text(encoding="utf-8")


GLOSSARY = bs.REPO_ROOT / "book" / "glossary.md"
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def glossary_entries() -> dict[str, str]:
    """Return {first term line: definition} from the ``{glossary}`` directive."""
    text = GLOSSARY.read_text(encoding="utf-8")
    body = re.search(r"```\{glossary\}\n(.*?)\n```", text, re.DOTALL)
    assert body, "glossary.md has no {glossary} directive"
    entries: dict[str, str] = {}
    term = None
    for line in body.group(1).splitlines():
        if not line.strip() or line.startswith(":"):
            continue
        if line[0].isspace():
            entries[term] = (entries[term] + " " + line.strip()).strip()
        elif term is not None and entries[term] == "":
            continue  # an alias line of the same entry
        else:
            term = line.strip()
            entries[term] = ""
    return entries


def test_glossary_has_sixty_terms_each_with_a_korean_name():
    entries = glossary_entries()
    assert len(entries) >= 60
    for term, definition in entries.items():
        assert HANGUL.search(definition), f"glossary term {term!r} has no Korean name"
        assert len(definition) > 30, f"glossary term {term!r} has no definition"


# --------------------------------------------------------------------------- #
# Page fixes of the book's extension (book/_ext/book_assets.py)                #
# --------------------------------------------------------------------------- #

def load_book_assets():
    path = bs.REPO_ROOT / "book" / "_ext" / "book_assets.py"
    spec = importlib.util.spec_from_file_location("book_assets", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page, expected", [
    ("<p>cat 고양이가 생선을 먹었다.</p>", '<p>cat <span lang="ko">고양이가 생선을 먹었다</span>.</p>'),
    ("<td>고양이</td><td>개</td>", '<td><span lang="ko">고양이</span></td><td><span lang="ko">개</span></td>'),
    ('<a title="고양이" href="#">x</a>', '<a title="고양이" href="#">x</a>'),  # attributes untouched
    ("<script>var s = '고양이';</script>", "<script>var s = '고양이';</script>"),
    ("<style>p::before { content: '개'; }</style>", "<style>p::before { content: '개'; }</style>"),
    ("<title>고양이</title>", "<title>고양이</title>"),
    ("<option>고양이</option>", "<option>고양이</option>"),
    ('<span class="math">\\(\\text{개}\\)</span> 개',
     '<span class="math">\\(\\text{개}\\)</span> <span lang="ko">개</span>'),
    ('<p lang="ko">이미 <b>한국어</b></p>', '<p lang="ko">이미 <b>한국어</b></p>'),
    ("<svg><text>고양이</text></svg><br/>개", '<svg><text>고양이</text></svg><br/><span lang="ko">개</span>'),
    ("<!-- 고양이 --><p>plain</p>", "<!-- 고양이 --><p>plain</p>"),
])
def test_hangul_runs_are_wrapped_in_lang_ko(page, expected):
    assert load_book_assets().wrap_hangul(page) == expected


def test_head_scripts_are_deferred_and_inline_ones_kept():
    assets = load_book_assets()
    page = ('<head><script src="a.js"></script><script>var x = 1;</script>'
            '<script async src="b.js"></script><script type="module" src="c.js"></script></head>'
            '<body><script src="d.js"></script></body>')
    fixed = assets.defer_head_scripts(page)
    assert '<script defer src="a.js"></script><script>var x = 1;</script>' in fixed
    assert '<script async src="b.js">' in fixed and '<script type="module" src="c.js">' in fixed
    assert '<body><script src="d.js"></script>' in fixed  # only <head> is changed


class _Text(HTMLParser):
    """Text outside script/style/title, with whether a lang="ko" element encloses it."""

    SKIP = {"script", "style", "title", "textarea", "option", "svg"}
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
            "param", "source", "track", "wbr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.unmarked: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            attrs = dict(attrs)
            korean = (attrs.get("lang") or "").startswith("ko")
            math = "math" in (attrs.get("class") or "").split()
            self.stack.append((tag, korean or math or tag in self.SKIP))

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                break

    def handle_data(self, data):
        if HANGUL.search(data) and not any(marked for _, marked in self.stack):
            self.unmarked.append(data.strip()[:60])


def test_every_korean_text_of_every_page_is_marked_lang_ko(built_book):
    for page in built_pages(built_book):
        if "_static" in page.parts:
            continue
        parser = _Text()
        parser.feed(page.read_text(encoding="utf-8"))
        assert not parser.unmarked, f"{page.name}: Hangul without lang=ko: {parser.unmarked[:3]}"


def test_pages_drop_dead_weight_and_render_blocking_scripts(built_book):
    for page in built_pages(built_book):
        if "_static" in page.parts:
            continue
        html = page.read_text(encoding="utf-8")
        assert "fontawesome.js" not in html, page.name  # 1.5 MB; the theme's CSS draws the icons
        assert "widget-state+json" not in html, page.name  # no widget manager runs in the book
        head = html[: html.find("</head>")]
        blocking = re.findall(r"<script (?![^>]*\b(?:defer|async)\b)[^>]*\bsrc=[^>]*>", head)
        assert not blocking, f"{page.name}: scripts that hold back the first paint: {blocking}"


def test_hidden_cell_toggles_are_named_by_their_visible_text(built_book):
    for page in built_pages(built_book):
        html = page.read_text(encoding="utf-8")
        assert 'aria-label="Toggle hidden content"' not in html, page.name
        for summary in re.findall(r"<summary[^>]*>", html):
            assert "aria-label" not in summary, f"{page.name}: {summary}"


# --------------------------------------------------------------------------- #
# The book builds from requirements-book.txt alone (no torch)                  #
# --------------------------------------------------------------------------- #

def test_the_book_is_built_from_requirements_book_alone_without_torch(built_book):
    """What .ci/book installs is enough: the session's one build (which every
    test of the built book checks: no warning, every page, the browser test)
    ran in a new virtual environment with only requirements-book.txt
    (installed with uv), the ``jupyter-book`` command and no PYTHONPATH, and
    that environment has no torch."""
    import shutil
    import subprocess

    if shutil.which("uv") is None:
        pytest.skip("uv is not installed (pip install -r requirements.txt)")
    assert built_book.environment_error is None, built_book.environment_error
    assert built_book.python is not None
    for heavy in ("torch", "numpy", "matplotlib", "plotly"):
        found = subprocess.run([built_book.python, "-c", f"import {heavy}"], capture_output=True)
        assert found.returncode != 0, f"requirements-book.txt pulls in {heavy}"
    assert built_book.returncode == 0 and "build succeeded" in built_book.log


# --------------------------------------------------------------------------- #
# The API reference                                                            #
# --------------------------------------------------------------------------- #

def test_api_reference_documents_every_public_name_under_its_module(built_book):
    import transformer_edu as te
    import importlib

    html = bs.html_path("book/api").read_text(encoding="utf-8")
    missing = []
    parts = [importlib.import_module(f"transformer_edu.figures.{name}") for name in (
        "viz", "controls", "live", "explorer", "attention_figures", "position_figures",
        "translation_figures", "beam_figures", "language_model_figures")]
    for module, names in [(te, te.__all__)] + [(m, m.__all__) for m in parts]:
        for name in names:
            value = getattr(module, name)
            home = getattr(value, "__module__", None) or module.__name__
            if not home.startswith("transformer_edu"):
                home = module.__name__  # a constant: documented where it is defined
            anchor = f'id="{home}.{name}"'
            if anchor not in html:
                missing.append(f"{home}.{name}")
    assert not missing, f"not in book/api: {missing}"
    # the Shape sections come through as lists of literal shapes
    assert "<p class=\"rubric\">Shape</p>" in html
    assert "Parameters" in html and "Returns" in html


def test_api_reference_is_in_the_toc():
    assert "book/api" in bs.toc_files()
