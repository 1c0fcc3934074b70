"""The live translator of Chapter 8 in a real browser, and the Sphinx extension that serves it.

Builds the book (once per test session, shared with the other book tests),
serves ``_build/html`` on 127.0.0.1 and drives the demo in headless Chromium
(Debian's ``/usr/bin/chromium`` through Playwright; ``CHROMIUM`` overrides
it). Requests to any other host are blocked and recorded. The page's
translations and attention weights are compared with PyTorch's for the same
inputs, and its verdict on whether a sentence lies inside the grammar the model
learned, message included, with ``data.grammar_problem``'s. The measured sizes
and times are printed and written to ``artifacts/live_translator.json``.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest
import torch

import transformer_edu as te
from transformer_edu import data
from transformer_edu.translation import export
from transformer_edu.translation.pretrained import pretrained_translator
from transformer_edu.translation.translator import OutsideGrammarWarning

if __package__:
    from . import book_support as bs
    from ..translation_support import natural_inputs, python_tokens
else:
    import book_support as bs
    from translation_support import natural_inputs, python_tokens

sys.path.insert(0, str(bs.REPO_ROOT / "book" / "_ext"))
import live_translator as extension  # noqa: E402  (the book's Sphinx extension)

CHROMIUM = bs.CHROMIUM
CHROMIUM_FLAGS = bs.CHROMIUM_FLAGS
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
PAGE = "notebooks/08_beam_search.html"
PAGE_BUDGET = 3_000_000  # bytes a page may transfer before the reader starts anything
DEMO_SCRIPTS_BUDGET = 60_000  # the demo's own script and stylesheet
LOAD_TIMEOUT_MS = 120_000  # the first run compiles 14 MB of WebAssembly on a busy 2-core machine
RUN_TIMEOUT_MS = 30_000
ARTIFACTS = bs.REPO_ROOT / "artifacts"
RUNNING = [korean for korean, _ in data.RUNNING_EXAMPLES]
UNKNOWN = "기린이 생선을 먹었다"  # 기린 (giraffe) is not in the grammar

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM)"
)


# ----------------------------------------------------------------- the extension, without a browser


def test_site_files_name_the_runtime_and_the_model():
    files = extension.site_files(bs.REPO_ROOT)
    assert sorted(p.as_posix() for p in files) == [
        "model/decoder.onnx", "model/encoder.onnx", "model/vocab.json",
        "ort/ort-wasm-simd-threaded.wasm", "ort/ort.wasm.bundle.min.mjs",
    ]
    assert files[Path("model/vocab.json")] == export.ONNX_DIR / export.VOCAB_FILE
    lock = json.loads((bs.REPO_ROOT / "package-lock.json").read_text(encoding="utf-8"))
    pinned = lock["packages"]["node_modules/onnxruntime-web"]
    assert pinned["version"] == json.loads(
        (bs.REPO_ROOT / "package.json").read_text(encoding="utf-8"))["dependencies"]["onnxruntime-web"]
    assert pinned["integrity"].startswith("sha512-")
    installed = json.loads((bs.REPO_ROOT / extension.RUNTIME_DIR / "package.json").read_text(encoding="utf-8"))
    assert installed["version"] == pinned["version"], "node_modules differs from the lockfile: run npm ci"


def test_missing_runtime_says_how_to_install_it(tmp_path):
    from sphinx.errors import ExtensionError

    with pytest.raises(ExtensionError, match="npm ci"):
        extension.site_files(tmp_path)


def test_copy_site_files(tmp_path):
    written = extension.copy_site_files(bs.REPO_ROOT, tmp_path)
    assert {p.relative_to(tmp_path / extension.TARGET).as_posix() for p in written} == {
        p.as_posix() for p in extension.site_files(bs.REPO_ROOT)}
    sizes = extension.download_sizes(bs.REPO_ROOT)
    assert sizes["model"] == sum(
        (export.ONNX_DIR / n).stat().st_size for n in (export.ENCODER_FILE, export.DECODER_FILE, export.VOCAB_FILE))


def test_costs_page_renders_the_live_translator_measurement():
    import importlib.util

    spec = importlib.util.spec_from_file_location("measure_costs", bs.REPO_ROOT / "scripts" / "measure_costs.py")
    measure_costs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure_costs)
    live = {
        "date": "2026-01-01", "browser": "Chromium 140.0", "onnxruntime_web": "1.30.0",
        "machine": {"platform": "Linux", "cpu": "Some CPU", "cpu_count": 2, "gpu": None},
        "page_bytes_before_start": 2_673_237, "demo_script_and_css_bytes": 28_422,
        "runtime_bytes": 14_312_951, "runtime_gzip_bytes": 3_400_000, "model_bytes": 1_055_572,
        "first_translation_s_wall": 4.25, "runtime_and_model_load_s": 3.5, "sentences": 24,
        "per_sentence_ms_median": 61.4, "per_sentence_ms_max": 120.0,
    }
    text = measure_costs.render_markdown({"runs": [], "live_translator": live})
    assert "## The live translator in the browser" in text and "headless Chromium 140.0" in text
    assert "| Chapter 8's page before the demo starts (all it transfers) | 2.67 MB |" in text
    assert "(JavaScript and WebAssembly), fetched by the first translation | 14.31 MB (3.40 MB gzipped) |" in text
    assert "| time to the first translation (click to English, loading included) | 4.2 s |" in text
    assert "(median of 23) | 61 ms |" in text
    assert "## The live translator" not in measure_costs.render_markdown({"runs": []})


# ----------------------------------------------------------------------------- the built site


@dataclass
class Visit:
    """What one page did: errors, blocked requests, and every response with its size."""

    errors: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    responses: list[tuple[str, int]] = field(default_factory=list)

    def bytes(self, part: str = "") -> int:
        return sum(size for url, size in self.responses if part in url)

    def urls(self) -> list[str]:
        return [url for url, _ in self.responses]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site():
    """The built book, served on a free port of 127.0.0.1, and a Chromium to visit it."""
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    book = bs.build_book()
    assert book.returncode == 0, book.log[-6000:]
    handler = functools.partial(_QuietHandler, directory=str(book.html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
            try:
                root = f"http://127.0.0.1:{server.server_address[1]}"
                yield {"browser": browser, "url": f"{root}/{PAGE}", "url_ko": f"{root}/ko/{PAGE}",
                       "html_dir": book.html_dir}
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def translator():
    torch.set_num_threads(1)
    return pretrained_translator("cpu")


@pytest.fixture(scope="module")
def metrics():
    measured: dict = {}
    yield measured
    if measured:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "live_translator.json").write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
        print("\nlive translator, measured:", json.dumps(measured, indent=1))


def open_page(site, viewport=(1280, 900), url=None):
    """A fresh browser context (empty cache) on the chapter page (or ``url``), recording what it does."""
    context = site["browser"].new_context(viewport={"width": viewport[0], "height": viewport[1]})
    tab = context.new_page()
    visit = Visit()
    tab.on("pageerror", lambda error: visit.errors.append(f"pageerror: {error}"))
    tab.on("console", lambda message: message.type == "error"
           and visit.errors.append(f"console: {message.text} @ {message.location}"))

    def finished(request):
        sizes = request.sizes()
        visit.responses.append((request.url, sizes["responseBodySize"] + sizes["responseHeadersSize"]))

    tab.on("requestfinished", finished)

    def only_local(route):
        if urlparse(route.request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            visit.blocked.append(route.request.url)
            route.abort()

    tab.route("**/*", only_local)
    tab.goto(url or site["url"], wait_until="load")
    tab.wait_for_selector("#live-translator-run", timeout=RUN_TIMEOUT_MS)
    return context, tab, visit


def runs_done(tab) -> int:
    return int(tab.get_attribute("#live-translator", "data-runs") or 0)


def translate(tab, sentence: str, *, press_enter: bool = True, timeout: int = RUN_TIMEOUT_MS) -> str:
    """Type a sentence, run it (Enter or the button) and return the state the page ends in."""
    before = runs_done(tab)
    tab.fill("#live-translator-input", sentence)
    if press_enter:
        tab.press("#live-translator-input", "Enter")
    else:
        tab.click("#live-translator-run")
    tab.wait_for_function(
        """([before]) => {
             const root = document.getElementById('live-translator');
             const state = window.liveTranslator && window.liveTranslator.state;
             return state && !state.busy && state.pending === false
               && (Number(root.dataset.runs || 0) > before || ['unknown', 'too-long', 'failed']
                   .includes(root.dataset.state));
           }""",
        arg=[before], timeout=timeout)
    return tab.get_attribute("#live-translator", "data-state")


def switch(tab, box: str, on: bool) -> None:
    """Set a mask switch and wait for the page to recompute."""
    before = runs_done(tab)
    (tab.check if on else tab.uncheck)(f"#live-translator-{box}")
    tab.wait_for_function(
        "([before]) => Number(document.getElementById('live-translator').dataset.runs) > before"
        " && !window.liveTranslator.state.busy", arg=[before], timeout=RUN_TIMEOUT_MS)


def last_run(tab) -> dict:
    """The numbers behind what the page shows (typed arrays as lists)."""
    return tab.evaluate("""() => {
      const run = window.liveTranslator.state.lastRun;
      const plain = (t) => ({dims: t.dims, data: Array.from(t.data)});
      return {english: run.english, maskedEnglish: run.maskedEnglish, predictions: run.predictions,
              sourceTokens: run.sourceTokens, targetTokens: run.targetTokens,
              encoder: plain(run.encoderAttention), decoder: plain(run.decoderAttention),
              cross: plain(run.crossAttention)};
    }""")


def as_tensor(plain: dict) -> torch.Tensor:
    return torch.tensor(plain["data"], dtype=torch.float32).reshape(plain["dims"])


STALE_PLOTLY = "https://cdn.plot.ly/"
"""Where Plotly outputs stored before the book served Plotly itself load it from."""


def assert_clean(visit: Visit) -> None:
    """No console error and no request off this machine; ends the test as xfail when the only ones
    come from a chapter output stored before the book served Plotly itself (re-executing the
    chapter removes them; tests/book/test_browser.py fails on them for every page)."""
    stale = [url for url in visit.blocked if url.startswith(STALE_PLOTLY)]
    errors = list(visit.errors)
    if stale:  # each blocked script: a failed resource, and requirejs's error event
        errors = [e for e in errors if f"'url': '{STALE_PLOTLY}" not in e]
        for _ in stale:
            if "pageerror: Event" in errors:
                errors.remove("pageerror: Event")
    assert errors == [], "console errors on the page"
    assert [url for url in visit.blocked if url not in stale] == [], "the page tried to reach the network"
    if stale:
        pytest.xfail(f"the page's stored Plotly output loads {stale[0]} (a chapter output stored before "
                     "the book served Plotly itself; re-executing the chapter removes it)")


@torch.no_grad()
def pytorch_page_run(translator, korean: str, padding: bool, causal: bool) -> dict:
    """What the page computes, in PyTorch: the padded source, greedy, then the teacher-forced re-run."""
    model, pad = translator.model, data.Vocab.pad_id
    ids = translator.encode_source(korean)  # written Korean tokenized, <eos> last
    src = torch.tensor([ids + [pad] * export.PAD_EXTRA])  # (1, S)
    src_mask = te.padding_mask(src, pad) if padding else torch.ones(1, 1, 1, src.shape[1], dtype=torch.bool)
    steps = translator.output_limit(len(ids))
    out = te.greedy_decode(model, src, src_mask=src_mask, max_len=steps, bos_id=1, eos_id=2, unk_id=3)[0]
    english = translator.tgt_vocab.decode(out)
    tgt = torch.tensor([[data.Vocab.bos_id] + translator.tgt_vocab.encode(english, add_eos=False)])  # (1, T)
    T = tgt.shape[1]
    tgt_mask = te.causal_mask(T) if causal else torch.ones(1, 1, T, T, dtype=torch.bool)
    with te.record_attention(model) as maps:
        logits = model.decode(tgt, model.encode(src, src_mask), src_mask, tgt_mask)  # (1, T, V)
    logits[..., [0, 1, 3]] = float("-inf")  # never generated
    layers = range(model.config.n_layers)
    return {
        "english": english,
        "predictions": [translator.tgt_vocab.itos[i] for i in logits[0].argmax(-1).tolist()],
        "encoder": torch.stack([maps[f"encoder.layers.{i}.self_attn"] for i in layers], 1),
        "decoder": torch.stack([maps[f"decoder.layers.{i}.self_attn"] for i in layers], 1),
        "cross": torch.stack([maps[f"decoder.layers.{i}.cross_attn"] for i in layers], 1),
    }


def assert_page_matches(page: dict, expected: dict) -> None:
    assert page["english"] == expected["english"]
    assert page["predictions"] == expected["predictions"]
    for name in ("encoder", "decoder", "cross"):
        got = as_tensor(page[name])
        assert got.shape == expected[name].shape, name
        assert (got - expected[name]).abs().max().item() <= 1e-4, name


# ----------------------------------------------------------------------------------- the tests


@needs_chromium
def test_only_the_demo_page_carries_the_demo(site):
    # The script tag, not the name: the API page mentions the script in a docstring.
    script_tag = re.compile(r'<script[^>]*\ssrc="[^"]*' + re.escape(extension.SCRIPT))
    pages = sorted(p.relative_to(site["html_dir"]).as_posix() for p in site["html_dir"].rglob("*.html")
                   if script_tag.search(p.read_text(encoding="utf-8")))
    assert pages == sorted([PAGE, f"ko/{PAGE}"])  # the chapter, in each edition
    for edition in (site["html_dir"], site["html_dir"] / "ko"):
        served = edition / extension.TARGET
        for relative, source in extension.site_files(bs.REPO_ROOT).items():
            assert (served / relative).read_bytes() == source.read_bytes(), relative


@needs_chromium
def test_page_stays_light_until_the_demo_starts(site, metrics):
    context, tab, visit = open_page(site)
    try:
        tab.wait_for_timeout(1500)  # let deferred scripts fetch whatever they fetch
        urls = visit.urls()
        assert any(url.split("?")[0].endswith(extension.SCRIPT) for url in urls)
        assert not [u for u in urls if "/live-translator/" in u], "runtime or model fetched before the start"
        demo_own = visit.bytes(extension.SCRIPT) + visit.bytes(extension.STYLESHEET)
        assert 0 < demo_own <= DEMO_SCRIPTS_BUDGET
        before = visit.bytes()
        loaded_before = list(visit.responses)
        note = tab.text_content("#live-translator-note")
        sizes = extension.download_sizes(bs.REPO_ROOT)
        assert f"{sizes['runtime'] / 1e6:.1f} MB" in note and f"{sizes['model'] / 1e6:.1f} MB" in note

        assert translate(tab, RUNNING[1], press_enter=False, timeout=LOAD_TIMEOUT_MS) == "done"
        after = visit.bytes()
        fetched = {u.split("/live-translator/")[1] for u in visit.urls() if "/live-translator/" in u}
        assert fetched == {p.as_posix() for p in extension.site_files(bs.REPO_ROOT)}
        metrics.update({
            "page_bytes_before_start": before, "demo_script_and_css_bytes": demo_own,
            "bytes_fetched_by_the_first_run": after - before,
            "runtime_bytes": sizes["runtime"], "model_bytes": sizes["model"],
            "runtime_files": [Path(name).name for name in extension.RUNTIME_FILES],
            "browser": f"Chromium {site['browser'].version}",
        })
        heaviest = ", ".join(f"{url.split('/')[-1].split('?')[0]} {size:,}"
                             for url, size in sorted(loaded_before, key=lambda r: -r[1])[:3])
        assert before <= PAGE_BUDGET, f"{before:,} bytes before the demo starts (heaviest: {heaviest})"
        assert_clean(visit)
    finally:
        context.close()


@needs_chromium
def test_translations_equal_the_translator(site, translator, metrics):
    # As a reader writes them (고양이가, not the grammar's tokens 고양이 가): the page tokenizes.
    sources = RUNNING + [data.detokenize_korean(k) for k, _ in data.toy_translation_splits(0)["test"][2:24]]
    expected = translator.translate(sources, beam_size=1)
    context, tab, visit = open_page(site)
    try:
        start = time.perf_counter()
        assert translate(tab, sources[0], press_enter=False, timeout=LOAD_TIMEOUT_MS) == "done"
        first = time.perf_counter() - start
        outputs = [tab.text_content("#live-translator-output")]
        for i, sentence in enumerate(sources[1:]):
            assert translate(tab, sentence, press_enter=i % 2 == 0) == "done", sentence
            outputs.append(tab.text_content("#live-translator-output"))
        assert outputs == expected
        timings = tab.evaluate("window.liveTranslator.state.timings")
        per_sentence = timings["runs"][1:]
        metrics.update({
            "sentences": len(sources),
            "first_translation_s_wall": round(first, 2),
            "first_translation_s_page": round(timings["firstTranslationMs"] / 1000, 2),
            "runtime_and_model_load_s": round(timings["loadMs"] / 1000, 2),
            "per_sentence_ms_median": round(statistics.median(per_sentence), 1),
            "per_sentence_ms_max": round(max(per_sentence), 1),
        })
        assert_clean(visit)
    finally:
        context.close()


@needs_chromium
def test_the_korean_edition_runs_the_demo_too(site, translator):
    """The Korean chapter's demo loads its own copy of the runtime and the model and translates."""
    sources = RUNNING[:2]
    expected = translator.translate(sources, beam_size=1)
    context, tab, visit = open_page(site, url=site["url_ko"])
    try:
        assert tab.get_attribute("html", "lang") == "ko"
        # its own words in Korean, the same elements as in English
        assert tab.text_content("#live-translator-run") == "번역"
        assert tab.text_content("label[for=live-translator-input]") == "한국어 문장"
        outputs = []
        for sentence in sources:
            assert translate(tab, sentence, timeout=LOAD_TIMEOUT_MS) == "done", sentence
            outputs.append(tab.text_content("#live-translator-output"))
        assert outputs == expected
        assert "번역했습니다" in tab.text_content("#live-translator-status")
        assert_clean(visit)
    finally:
        context.close()


@needs_chromium
def test_mask_switches_recompute_what_pytorch_predicts(site, translator):
    # A test sentence whose greedy translation changes without the padding mask (found in PyTorch).
    changes = next(k for k, _ in data.toy_translation_splits(0)["test"]
                   if pytorch_page_run(translator, k, False, True)["english"]
                   != translator.translate(k, beam_size=1))
    context, tab, visit = open_page(site)
    try:
        assert translate(tab, RUNNING[1], timeout=LOAD_TIMEOUT_MS) == "done"
        masked = last_run(tab)
        assert_page_matches(masked, pytorch_page_run(translator, RUNNING[1], True, True))
        assert masked["predictions"] == masked["english"].split() + ["<eos>"]

        switch(tab, "causal", False)
        unmasked = last_run(tab)
        expected = pytorch_page_run(translator, RUNNING[1], True, False)
        assert_page_matches(unmasked, expected)
        assert unmasked["predictions"] != masked["predictions"]  # the model never learned to see ahead
        assert "✗" in tab.text_content("#live-translator-teacher")
        # The map shown (layer 1, head 1) has weights above the diagonal now, none blocked.
        cells = tab.locator("#live-translator-map-decoder rect")
        T = len(unmasked["targetTokens"])
        assert cells.count() == T * T
        above = [cells.nth(r * T + c) for r in range(T) for c in range(r + 1, T)]
        assert all(cell.get_attribute("data-blocked") == "false" for cell in above)
        weights = [float(cell.get_attribute("data-weight")) for cell in above]
        assert abs(sum(weights) - expected["decoder"][0, 0, 0].triu(1).sum().item()) <= 1e-4
        switch(tab, "causal", True)
        assert last_run(tab)["predictions"] == masked["predictions"]

        assert translate(tab, changes) == "done"
        switch(tab, "padding", False)
        page = last_run(tab)
        expected = pytorch_page_run(translator, changes, False, True)
        assert_page_matches(page, expected)
        assert page["english"] != page["maskedEnglish"] == translator.translate(changes, beam_size=1)
        assert tab.text_content("#live-translator-output") == expected["english"]
        assert page["maskedEnglish"] in tab.text_content("#live-translator-effect")
        pads = tab.locator("#live-translator-map-encoder rect[data-col='%d']" % (len(page["sourceTokens"]) - 1))
        assert all(pads.nth(i).get_attribute("data-blocked") == "false" for i in range(pads.count()))
        assert_clean(visit)
    finally:
        context.close()


@needs_chromium
def test_page_tokenizes_as_python_does(site, translator):
    test = data.toy_translation_splits(0)["test"]
    sentences = [korean for korean, _ in test] + natural_inputs(test)
    context, tab, visit = open_page(site)
    try:
        assert translate(tab, RUNNING[0], timeout=LOAD_TIMEOUT_MS) == "done"
        got = tab.evaluate("(texts) => texts.map((t) => window.liveTranslator.tokenize(t))", sentences)
        for sentence, tokens in zip(sentences, got):
            assert tokens == python_tokens(translator, sentence), repr(sentence)
        # Natural input goes all the way through: the page does what the Translator does.
        for sentence in natural_inputs(test)[-4:]:
            try:
                expected = translator.translate(sentence, beam_size=1)
            except ValueError:  # the Translator refuses it: the page names the unknown word
                assert translate(tab, sentence) == "unknown", repr(sentence)
                continue
            assert translate(tab, sentence) == "done", repr(sentence)
            assert tab.text_content("#live-translator-output") == expected
        assert_clean(visit)
    finally:
        context.close()


@needs_chromium
def test_unknown_word_gets_a_message(site):
    context, tab, visit = open_page(site)
    try:
        assert translate(tab, UNKNOWN, timeout=LOAD_TIMEOUT_MS) == "unknown"
        message = tab.text_content("#live-translator-status")
        assert "기린이" in message and "Unknown word" in message
        vocab = json.loads((export.ONNX_DIR / export.VOCAB_FILE).read_text(encoding="utf-8"))
        known = [t for t in vocab["src_itos"] if not t.startswith("<")]
        assert sum(word in message for word in known) >= 5, message  # a few words the model knows
        assert tab.text_content("#live-translator-output") == ""
        assert tab.is_hidden(".lt-result")
        # The rule's hint where there is one (data.word_hint): 너가 → 네가, polite speech → the plain form
        for sentence, word, fix in (("너가 생선을 먹었다", "너가", "write '네가'"),
                                    ("고양이가 생선을 먹었어요", "먹었어요", "polite speech (-요)"),
                                    ("나는 학교에 갑니다", "갑니다", "write '간다'")):
            assert translate(tab, sentence) == "unknown", sentence
            message = tab.text_content("#live-translator-status")
            assert f"“{word}” ({data.word_hint(word)})" in message and fix in message, message
        assert translate(tab, RUNNING[0]) == "done"  # not frozen
        assert tab.text_content("#live-translator-output") == data.RUNNING_EXAMPLES[0][1]
        assert_clean(visit)
    finally:
        context.close()


@needs_chromium
def test_keyboard_and_phone(site):
    context, tab, visit = open_page(site, viewport=(390, 844))
    try:
        box = tab.locator("#live-translator-input")
        assert box.get_attribute("lang") == "ko"
        for control in ("input", "padding", "causal", "layer", "head"):
            label = tab.locator(f"label[for='live-translator-{control}'], label:has(#live-translator-{control})")
            assert label.count() == 1, f"#live-translator-{control} has no label"
        box.focus()
        tab.keyboard.press("Tab")
        assert tab.evaluate("document.activeElement.id") == "live-translator-run"
        tab.keyboard.press("Tab")
        assert tab.evaluate("document.activeElement.id") == "live-translator-padding"
        tab.keyboard.press("Tab")
        assert tab.evaluate("document.activeElement.id") == "live-translator-causal"
        box.focus()
        tab.keyboard.press("Enter")  # Enter runs
        tab.wait_for_function("document.getElementById('live-translator').dataset.state === 'done'",
                              timeout=LOAD_TIMEOUT_MS)
        tab.focus("#live-translator-head")
        tab.keyboard.press("ArrowDown")  # the next head, from the keyboard
        tab.wait_for_function("document.querySelector('#live-translator-map-encoder figcaption')"
                              ".textContent.includes('head 2')")
        width = tab.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1], f"the page scrolls sideways at 390 px: {width}"
        demo = tab.locator("#live-translator").bounding_box()
        assert demo["x"] >= 0 and demo["x"] + demo["width"] <= 390
        for selector in ("#live-translator-run", "#live-translator-padding", "#live-translator-causal",
                         "#live-translator-layer", "#live-translator-head"):
            control = tab.locator(selector).bounding_box()
            assert control["x"] >= 0 and control["x"] + control["width"] <= 390, selector
        ARTIFACTS.mkdir(exist_ok=True)
        tab.locator("#live-translator").screenshot(path=str(ARTIFACTS / "live_translator_phone.png"))
        assert_clean(visit)
    finally:
        context.close()


# ------------------------------------------------------------------- the grammar the model learned


def _role_of(word: str) -> str | None:
    """The particle pair a written word carries (고양이가 → '이/가'), or None."""
    split = data.KOREAN_TOKENIZER.splits.get(word)
    return next((pair for pair in data.PARTICLES if split and split[1] in pair.split("/")), None)


def _broken(sentence: str, rng: random.Random) -> list[str]:
    """``sentence`` broken in the ways a learner breaks it, one way per variant."""
    words = sentence.split()
    subject = next((i for i, w in enumerate(words) if _role_of(w) in ("이/가", "은/는")), 0)
    obj = next((i for i, w in enumerate(words) if _role_of(w) == "을/를"), len(words) - 2)
    noun, particle = data.KOREAN_TOKENIZER.splits.get(words[subject], (words[subject], "가"))
    pair = _role_of(words[subject]) or "이/가"
    other = next(form for form in pair.split("/") if form != particle) if "/" in pair else particle
    polite = [p for p, plain in data.lexicon._POLITE.items() if plain == words[-1]]
    connective = {v.past: v.connective for v in data.TRANSITIVE_VERBS + data.MOTION_VERBS}
    connective.update({v.present: v.connective for v in data.TRANSITIVE_VERBS + data.MOTION_VERBS})
    at = rng.randrange(len(words) - 1)

    def replace(i: int, *new: str) -> str:
        return " ".join(words[:i] + list(new) + words[i + 1:])

    return [
        replace(subject), replace(obj),                      # a dropped subject, a dropped object
        replace(subject, noun, other), replace(subject, noun + other),  # the other form of the particle
        replace(len(words) - 1, rng.choice(polite or ["먹었어요"])), replace(len(words) - 1, words[-1] + "요"),
        replace(subject, "너가"), replace(subject, "나가"),
        *(f"{time} {sentence}" for time in ("어제", "오늘", "매일", "밤에")),  # tenses that may not fit
        replace(obj, "집에서", words[obj]), replace(obj, "집에서", "집을"),
        replace(subject, "그", words[subject]),              # the determiner 그
        f"{sentence} {rng.choice(['고양이가', '안', '그리고', '기린', '생선을', '어제', '갔다'])}",
        " ".join(reversed(words)), replace(at, words[at + 1], words[at]) if len(words) > 1 else sentence,
        " ".join(rng.sample(words, len(words))), " ".join([words[-1]] + words[:-1]),
        replace(len(words) - 1, connective.get(words[-1], words[-1])),  # ends with -고
        replace(obj, rng.choice(["책을", "사과를", "학교에", "개를", "모자를", "밤에", "공원을"])),
        replace(subject, words[subject], words[subject]),     # the subject twice
        f"안 {sentence}", " ".join(data.tokenize_korean(sentence)),  # as tokens: the parser reads those too
    ]


GRAMMAR_CASES_BY_HAND = [
    "그 고양이가 생선을 먹었다", "생선을 먹었다", "고양이가 먹었다", "너가 생선을 먹었다", "나가 학교에 간다",
    "고양이가 생선을 먹었어요", "고양이가 생선을 먹었습니다", "나는 학교에 갑니다", "민수가 집에서 집을 지었다",
    "고양이가 생선을 먹고 고양이가 물을 마셨다", "고양이가 생선을 먹었다 그리고 물을 마셨다",
    "고양이는 생선을 먹고 개는 물을 마셨다", "생선을 고양이는 먹었다", "나 이 개를 쫓았다", "밤 가 생선을 먹었다",
    "밤에 고양이가 생선을 먹었다", "고양이가 밤을 먹었다", "학교가 간다", "고양이가 생선에 먹었다",
    "고양이가 책을 읽었다", "내가 나를 보았다", "우리가 나를 봤다", "곰이 우유를 어제 좋아했다",
    "공원에서 고양이가 우유를 좋아했다", "개가 학교에서 학교에 갔다", "오늘 나는 학교에 간다",
    # Python's repr() in the messages: quotes, escapes, characters that are not printable
    "", "  \t ", "고양이가\u3000생선을", "고양이가\t생선을\n", "고양이가'", "고양'이\"가 먹었다", "고양이가 생선을'",
    "고양이가\u200b 먹었다", "고\\양이가", "\u1100\u1161\u11a8 먹었다", "고양이가 생선을 먹었다 😺", "\u00a0고양이가\u0085",
    "개가 고양이 에 갔다", "개가 학교 를 먹었다",  # a noun with a particle its kind never takes
]


def grammar_cases() -> list[str]:
    """Sentences of the grammar (test, same_verb and ood splits, as written) and each of them broken."""
    splits = data.toy_translation_splits(0)
    pairs = splits["test"][:40] + splits["same_verb"][:12] + splits["ood"][:12]
    rng = random.Random(0)
    cases = []
    for korean, _ in pairs:
        sentence = data.detokenize_korean(korean)
        cases += [sentence, *_broken(sentence, rng)]
    return list(dict.fromkeys(cases + GRAMMAR_CASES_BY_HAND))


CHECKS = (  # a phrase of each message data.parse_sentence can give, so that every check is compared
    "the sentence is empty", "is not a word of the toy grammar", "write '네가'", "write '내가'", "is polite speech (-요)",
    "is polite speech (-습니다)", "such as '먹었다')", "does not join clauses", "the determiner 그", "needs a particle",
    "only people and animals are subjects", "is not a place of the grammar", "is not an object of the grammar",
    "has the wrong form of", "the sentence must end with a verb", "no verb in", "ends the sentence, but more follows",
    "joins two clauses", "needs an object with 을/를", "needs a place with 에", "needs a subject such as",
    "cannot come here", "does not go with", "after the fronted object", "repeats the previous clause's subject",
    "only people go with", "cannot be subject and object", "is a state", "names the place twice",
    "tense in this grammar", "does not take 'today'", "\\u3000", '"고양이가\'"',
)


NOTE_COLOURS = """() => {
  // The colours of the outside-the-grammar note as seen: each background painted over the ones below it.
  const note = document.getElementById('live-translator-grammar');
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const pen = canvas.getContext('2d', { willReadFrequently: true });
  const paint = (...colours) => {
    pen.fillStyle = '#ffffff';
    pen.fillRect(0, 0, 1, 1);
    for (const colour of colours) { pen.fillStyle = colour; pen.fillRect(0, 0, 1, 1); }
    return Array.from(pen.getImageData(0, 0, 1, 1).data.slice(0, 3));
  };
  const backgrounds = [];
  for (let node = note; node; node = node.parentElement) backgrounds.unshift(getComputedStyle(node).backgroundColor);
  const theme = (name) => {  // a colour of the theme, resolved
    const probe = document.createElement('span');
    probe.style.color = `var(--pst-color-${name})`;
    note.parentElement.append(probe);
    const colour = getComputedStyle(probe).color;
    probe.remove();
    return paint(colour);
  };
  const style = getComputedStyle(note);
  return { background: paint(...backgrounds), around: paint(...backgrounds.slice(0, -1)),
           text: paint(...backgrounds, style.color), bar: paint(style.borderLeftColor),
           warning: theme('warning'), danger: theme('danger') };
}"""


def contrast(a: list[int], b: list[int]) -> float:
    """WCAG contrast ratio of two sRGB colours."""
    def luminance(rgb):
        linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@needs_chromium
def test_page_checks_the_grammar_as_python_does(site):
    cases = grammar_cases()
    expected = [data.grammar_problem(sentence) for sentence in cases]
    assert sum(problem is None for problem in expected) >= 60  # the grammar's own sentences are read
    missing = [check for check in CHECKS if not any(check in (problem or "") for problem in expected)]
    assert missing == [], "no case reaches these messages"
    context, tab, visit = open_page(site)
    try:
        got = tab.evaluate("""async (sentences) => {
          const page = window.liveTranslator;
          const vocab = await page.loadVocab();  // vocab.json alone: no runtime, no model
          return sentences.map((sentence) => page.grammarProblem(vocab, sentence));
        }""", cases)
        wrong = [(sentence, python, page) for sentence, python, page in zip(cases, expected, got) if python != page]
        assert wrong == [], f"{len(wrong)} of {len(cases)} differ, e.g. (sentence, Python, page): {wrong[:3]}"
        assert_clean(visit)
    finally:
        context.close()


@needs_chromium
def test_outside_the_grammar_is_said_and_still_translated(site, translator):
    outside = "고양이가 먹었다"  # 먹다 needs an object
    problem = data.grammar_problem(outside)
    with pytest.warns(OutsideGrammarWarning):
        expected = translator.translate(outside, beam_size=1)
    context, tab, visit = open_page(site, viewport=(390, 844))
    note = tab.locator("#live-translator-grammar")
    try:
        assert translate(tab, outside, timeout=LOAD_TIMEOUT_MS) == "done"
        assert note.get_attribute("role") == "status" and note.get_attribute("aria-live") == "polite"
        assert note.is_visible()
        assert note.text_content() == (f"Outside the grammar the model learned: {problem}. It is translated "
                                       "anyway, but nothing the model learned covers it, so the translation "
                                       "below is a guess.")
        assert tab.text_content("#live-translator-output") == expected != ""  # the model's guess, shown
        assert tab.locator("#live-translator-map-cross rect").count() > 0  # and its attention maps
        assert tab.get_attribute("#live-translator-status", "data-kind") != "error"
        box = note.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        width = tab.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1], f"the page scrolls sideways at 390 px: {width}"
        ARTIFACTS.mkdir(exist_ok=True)
        demo = tab.locator("#live-translator")
        light = tab.evaluate(NOTE_COLOURS)
        demo.screenshot(path=str(ARTIFACTS / "live_translator_outside_grammar.png"))
        tab.evaluate("document.documentElement.dataset.theme = 'dark'")
        dark = tab.evaluate(NOTE_COLOURS)
        demo.screenshot(path=str(ARTIFACTS / "live_translator_outside_grammar_dark.png"))
        for mode in (light, dark):  # readable text on a faint amber tint, an amber bar: a warning, not an error
            assert contrast(mode["text"], mode["background"]) >= 4.5, mode
            assert mode["bar"] == mode["warning"] != mode["danger"] and mode["background"] != mode["around"], mode

        assert translate(tab, "너가 생선을 먹었다") == "unknown"  # an unknown word: its message, and no note
        assert "write '네가'" in tab.text_content("#live-translator-status") and note.text_content() == ""

        assert translate(tab, RUNNING[1]) == "done"  # in the grammar: no note, and it takes no room
        assert note.text_content() == "" and note.bounding_box()["height"] == 0
        assert_clean(visit)
    finally:
        context.close()
