"""Chapter 6, the decoder and the whole model: the numbers its prose states."""

import torch

import transformer_edu as te

from .framework import Exempt, Number, output, package
from .stored import printed, thousands

#: Table 3 of the paper: the base model's and the big model's parameters.
PAPER = {"base": 65e6, "big": 213e6}
#: A row of cell 35's table: the vocabularies that give one of Table 3's counts.
WINDOW = r"\n{row}\s+\S+M\s+\d+M\s+([\d,]+) to\s+([\d,]+)"
BASE_SIZED = ["base", "N = 2", "N = 4", "N = 8", "d_model = 256", "d_model = 1024", "d_ff = 1024", "d_ff = 4096",
              "d_k = 16", "d_k = 32"]


def count(name: str) -> int:
    """The parameters of ``TransformerConfig.base(37000)`` or ``.big(37000)``."""
    with torch.device("meta"):
        return te.count_parameters(te.Transformer(getattr(te.TransformerConfig, name)(37000)))


def gap(name: str) -> tuple[str, str]:
    """How far the package's count is from Table 3's: millions and per cent."""
    difference = abs(count(name) - PAPER[name])
    return f"{difference / 1e6:.1f}", f"{100 * difference / PAPER[name]:.1f}"


def window(row: str) -> tuple[float, float]:
    """The vocabulary window of one row of Table 3, as cell 35 prints it."""
    pattern = WINDOW.format(row=row.replace("(", r"\(").replace(")", r"\)"))
    return tuple(float(printed("06", pattern, group).replace(",", "")) for group in (1, 2))


def common_window() -> tuple[float, float]:
    """The vocabularies that give every base-sized row of Table 3."""
    windows = [window(row) for row in BASE_SIZED]
    return max(low for low, _ in windows), min(high for _, high in windows)


NUMBERS = [
    Number("1.9 million (2.9 %) smaller", package(lambda: gap("base"), template="{} million ({} %) smaller")),
    Number("1.3 million (0.6 %) larger", package(lambda: gap("big"), template="{} million ({} %) larger")),
    Number("about 40,900 to 41,100 tokens",
           package(lambda: tuple(thousands(v) for v in common_window()), template="about {} to {} tokens")),
    Number("The big model needs 35,300 to 36,200 tokens",
           package(lambda: tuple(thousands(v) for v in window("big")),
                   template="The big model needs {} to {} tokens")),
    Number("from step 10 on in this run", output(r"loss below 0.1 from step (\d+) on",
                                                  template="from step {} on in this run")),
    Number("its loss is still 2.3", output(r"shifted: (\d\.\d) after 15 steps", template="its loss is still {}")),
    Number("63.1 and 214.3 million",
           package(lambda: (count("base"), count("big")), fmt=".1f", scale=1e-6, template="{} and {} million")),
    Number("about 41,000 tokens",
           package(lambda: thousands(sum(common_window()) / 2, step=1000), template="about {} tokens")),
    Number("only 35,300 to 36,200 tokens",
           package(lambda: tuple(thousands(v) for v in window("big")), template="only {} to {} tokens")),
]

EXEMPT = [
    Exempt("standard deviation d_model^−0.5", "the initialisation's formula: an exponent, not a measurement"),
    Exempt("dropout 0.3", "the paper's setting for the big model"),
    Exempt("collapses below 0.1 within 15 steps", "the bound the cell asserts"),
    Exempt("a collapse below 0.1 within 15 steps and a shifted loss above 1.5", "the bounds the cell asserts"),
    Exempt("ln 10 ≈ 2.30", "the loss of a uniform guess among 10 digits: a formula"),
]
