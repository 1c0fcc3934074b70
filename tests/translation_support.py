"""Helpers the tests of the ONNX export (tests/apps) and of the live translator (tests/book) share.

``tests/`` is on ``sys.path`` whenever pytest runs a test below it (``tests/conftest.py``
puts it there), so each test file imports this module, and runs, alone.
"""

from __future__ import annotations

import unicodedata

from transformer_edu import data


def python_tokens(translator, sentence: str) -> list[str]:
    """The source tokens the Translator reads for ``sentence`` (before <eos>)."""
    if hasattr(translator, "source_tokens"):
        return translator.source_tokens(sentence)
    return sentence.split()


def natural_inputs(held_out_pairs) -> list[str]:
    """Sentences as a reader may type them: odd spaces, decomposed Hangul (NFD)."""
    sentences = [korean for korean, _ in held_out_pairs[:30]]
    if hasattr(data, "detokenize_korean"):  # the grammar stores tokens; readers write words
        sentences = [data.detokenize_korean(k) for k in sentences]
    odd = [f"  {k.replace(' ', chr(0x3000), 1)}\t" for k in sentences[:10]]
    decomposed = [unicodedata.normalize("NFD", k) for k in sentences[10:20]]
    return sentences + odd + decomposed + ["고양이가\u2003생선을\n먹었다", "나는 학교에 간다\u00a0"]
