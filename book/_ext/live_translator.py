"""Sphinx extension: the live translator of Chapter 8, served from the built site.

``transformer_edu.translation.export.live_translator_html()`` writes the demo's
container (``<div id="live-translator" ...>``) into a notebook output. This
extension

* adds ``live-translator.js`` (deferred) and ``live-translator.css`` from
  ``book/_static`` to the pages holding that container, and to no other page;
  the script tag carries the sizes of what the demo will fetch
  (``data-runtime-bytes``, ``data-model-bytes``), which the page tells the
  reader before the first run;
* copies into ``_static/live-translator/`` of the built site what the demo
  fetches when the reader starts it, and not before:

  - ``ort/``: ONNX Runtime Web's WebAssembly-only build, used single-threaded
    (the site is not cross-origin isolated): ``ort.wasm.bundle.min.mjs``
    and ``ort-wasm-simd-threaded.wasm`` from ``node_modules/onnxruntime-web``
    (installed from the npm registry with ``npm ci``, pinned by
    ``package-lock.json``; the bundle carries its MIT licence header);
  - ``model/``: the exported translator, ``transformer_edu/assets/ko_en/onnx``
    (``encoder.onnx``, ``decoder.onnx``, ``vocab.json``).

Nothing comes from a CDN: the built site works offline.
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

CONTAINER = 'id="live-translator"'
SCRIPT = "live-translator.js"
STYLESHEET = "live-translator.css"
TARGET = Path("_static") / "live-translator"
RUNTIME_DIR = Path("node_modules") / "onnxruntime-web"
RUNTIME_FILES = ("dist/ort.wasm.bundle.min.mjs", "dist/ort-wasm-simd-threaded.wasm")
MODEL_DIR = Path("transformer_edu") / "assets" / "ko_en" / "onnx"
MODEL_FILES = ("encoder.onnx", "decoder.onnx", "vocab.json")


def site_files(srcdir: str | Path) -> dict[Path, Path]:
    """Map each file the demo needs (under ``_static/live-translator``) to its source in the repository."""
    srcdir = Path(srcdir)
    runtime = srcdir / RUNTIME_DIR
    files = {Path("ort") / Path(name).name: runtime / name for name in RUNTIME_FILES}
    files.update({Path("model") / name: srcdir / MODEL_DIR / name for name in MODEL_FILES})
    missing = [str(source) for source in files.values() if not source.is_file()]
    if missing:
        raise ExtensionError(
            "the live translator's files are missing: " + ", ".join(missing) + ". Install ONNX Runtime "
            "Web with `npm ci` at the repository root; the model files are made by "
            "`python -m transformer_edu.translation.pretrained --rebuild` (or `python -m transformer_edu.export "
            f"--out {MODEL_DIR}`)."
        )
    return files


def copy_site_files(srcdir: str | Path, outdir: str | Path) -> list[Path]:
    """Copy the demo's runtime and model into ``<outdir>/_static/live-translator/``."""
    written = []
    for relative, source in site_files(srcdir).items():
        target = Path(outdir) / TARGET / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or not filecmp.cmp(source, target, shallow=False):
            shutil.copyfile(source, target)
        written.append(target)
    return written


def _on_builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        site_files(app.srcdir)  # fail early, before the pages are written


def download_sizes(srcdir: str | Path) -> dict[str, int]:
    """Bytes the demo fetches when it starts: ``{"runtime": ..., "model": ...}``."""
    sizes = {"runtime": 0, "model": 0}
    for relative, source in site_files(srcdir).items():
        sizes["runtime" if relative.parts[0] == "ort" else "model"] += source.stat().st_size
    return sizes


def _add_page_files(app: Sphinx, pagename, templatename, context, doctree) -> None:
    if CONTAINER in context.get("body", ""):
        sizes = download_sizes(app.srcdir)  # the page tells the reader what the first run costs
        app.add_js_file(SCRIPT, loading_method="defer", **{
            "data-runtime-bytes": str(sizes["runtime"]), "data-model-bytes": str(sizes["model"]),
        })
        app.add_css_file(STYLESHEET)


def _on_build_finished(app: Sphinx, exception) -> None:
    if exception is None and app.builder.format == "html":
        copy_site_files(app.srcdir, app.outdir)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _on_builder_inited)
    # Before other handlers (priority 500) that may rebuild the page's script list.
    app.connect("html-page-context", _add_page_files, priority=400)
    app.connect("build-finished", _on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
