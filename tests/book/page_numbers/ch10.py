"""Chapter 10, from the 2017 translator to today's language models: the numbers its prose states.

The chapter's measured claims are worded without numbers where a number would
only repeat a spread the cells print from the seed sweep; the numbers left in
the prose are computed by the package (the key/value cache of real models,
LLaMA 7B's parameters), printed by a cell, or settings and cited figures.
"""

import torch

from transformer_edu.figures import cache_bytes
from transformer_edu.language_model import LanguageModel, LanguageModelConfig, swiglu_width

from .framework import Exempt, Number, output, package


def llama_7b(tie_output: bool = False) -> int:
    """The parameters of LLaMA 7B's configuration, counted by the package on the meta device."""
    config = LanguageModelConfig.llama(32000, d_model=4096, n_heads=32, n_layers=32, max_len=2048,
                                       d_ff=swiglu_width(4 * 4096, multiple_of=256), tie_output=tie_output)
    with torch.device("meta"):
        return sum(p.numel() for p in LanguageModel(config).parameters())


NUMBERS = [
    # Llama 2 70B (80 layers, 8 key/value heads of 128) with a key/value head per query head (64)
    Number("10 GiB", package(lambda: cache_bytes(80, 64, 128, 4096) / 2**30, fmt=".0f", template="{} GiB")),
    # ... and with its 8 key/value heads
    Number("with 8 key/value heads it needs 1.25",
           package(lambda: cache_bytes(80, 8, 128, 4096) / 2**30, fmt=".2f",
                   template="with 8 key/value heads it needs {}")),
    # an untied output layer of 32 000 × 4 096, against LLaMA 7B's parameters
    Number("2 % of the 7B model",
           package(lambda: 100 * 32000 * 4096 / llama_7b(), fmt=".0f", template="{} % of the 7B model")),
    Number("LLaMA 7B's 6.7 billion", package(lambda: llama_7b() / 1e9, fmt=".1f", template="LLaMA 7B's {} billion")),
    # the tied-embeddings cell prints the untied model's extra share
    Number("untying adds 8 %", output(r"(\d+)% of the tied model", template="untying adds {} %")),
]

EXEMPT = [
    Exempt("positions 0 to 5", "the positions before the changed token of the causality check: the example's setting"),
    Exempt("label smoothing 0.1", "the paper's and Chapter 7's recipe: a setting"),
    Exempt("3 · 10⁻³", "the learning rate of the warm-up experiment (Chapter 7's): a setting"),
    Exempt("positions 64 to 127", "the far half of the windows four times the trained length: a setting"),
    Exempt("T = 1.5", "a sampling temperature: a setting"),
    Exempt("7–64 %", "Zhang and Sennrich (2019)'s measured speed-ups, cited, not measured here"),
    Exempt("not 4×", "the windows four times the trained length: a setting"),
    Exempt("40 GiB", "the memory budget of Exercise 2: a setting"),
]
