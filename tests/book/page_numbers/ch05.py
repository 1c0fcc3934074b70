"""Chapter 5, the encoder: the numbers its prose states."""

import torch

import transformer_edu as te

from .framework import Exempt, Number, output, package
from .stored import derived

OURS = r"N\(0, 1/D\), ours\s+(?P<std>\S+)\s+(?P<ratio>\S+)\s+(?P<cosine>\S+)\s+(?P<recovered>\S+)%"
XAVIER = OURS.replace(r"N\(0, 1/D\), ours", "Xavier uniform")
ENCODER = r"base encoder: ([\d,]+) parameters"


def embedding_table() -> int:
    """The base model's embedding table, 37 000 × 512 (on the meta device)."""
    with torch.device("meta"):
        model = te.Transformer(te.TransformerConfig.base(37000))
    return model.src_embed.weight.numel()


NUMBERS = [
    # Cell 7: the sizes of one token's numbers.
    Number("about 0.044", output(r"embedding\s+shape \(1, 7, 512\)\s+rms (\d\.\d+)", template="about {}")),
    Number("≈ 0.707", output(r"positional encoding\s+shape \(7, 512\)\s+rms (\d\.\d+)", template="≈ {}")),
    # Cell 9: N(0, 1/D) against Xavier at the base model's size.
    Number("it is 0.0073", output(XAVIER, group="std", template="it is {}")),
    Number("1.4 times the position's", output(OURS, group="ratio", fmt=".1f", template="{} times the position's")),
    Number("cosine 0.95", output(XAVIER, group="cosine", template="cosine {}")),
    Number("84.9 % of the tokens", output(XAVIER, group="recovered", template="{} % of the tokens")),
    # Cells 42 and 44: the base encoder's parameters, and the embedding table.
    Number("the 18.9 million", derived("05", float, ENCODER, fmt=".1f", scale=1e-6, template="the {} million")),
    Number("another 18.9 million", package(embedding_table, fmt=".1f", scale=1e-6, template="another {} million")),
    Number("18.9 million parameters", derived("05", float, ENCODER, fmt=".1f", scale=1e-6,
                                              template="{} million parameters")),
]

EXEMPT = [
    Exempt("set both to 0.1", "the dropout rates a codebase sets: settings"),
    Exempt("Section 5.4", "a section of the paper"),
    Exempt("Section 3.4", "a section of the paper"),
    Exempt("P_drop = 0.1", "the paper's dropout rate, a setting"),
    Exempt("37,000 × 512", "the base model's embedding table: the paper's vocabulary times d_model"),
    Exempt("positions 0 … 99 to 1,000 random tokens", "the experiment's sizes, a choice"),
    Exempt("dropout 0.1 on the sublayer outputs", "tensor2tensor's setting, quoted"),
    Exempt("| P_drop | 0.1 |", "the paper's dropout rate, a setting"),
    Exempt("from 0 to 8", "the numbers of pads the figure shows, a setting"),
]
