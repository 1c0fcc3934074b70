"""Chapter 2, multi-head attention: the numbers its prose states."""

import transformer_edu as te

from .framework import Exempt, Number, output, package


def attention_parameters(bias: bool = True) -> int:
    """The parameters of the base model's attention layer, D = 512, H = 8."""
    return te.count_parameters(te.MultiHeadAttention(512, 8, bias=bias))


def key_bias_size() -> int:
    return te.MultiHeadAttention(512, 8).w_k.bias.numel()


NUMBERS = [
    # Table 3's rows (A), transcribed; the cell does the subtraction.
    Number("0.9 BLEU below", output(r"H =  1, d_k = 512: BLEU [\d.]+, (\d\.\d) below", template="{} BLEU below")),
    Number("4 · 512² = 1 048 576", package(lambda: attention_parameters(bias=False), fmt=",",
                                           template="4 · 512² = {}")),
    Number("4 · 512 = 2 048 parameters more, 1 050 624 in all",
           package(lambda: (attention_parameters() - attention_parameters(bias=False), attention_parameters()),
                   fmt=",", template="4 · 512 = {} parameters more, {} in all")),
    Number("its 512 numbers among the 1 050 624",
           package(lambda: (key_bias_size(), attention_parameters()), fmt=",",
                   template="its {} numbers among the {}")),
]

EXEMPT = [
    Exempt("no weight above 0.5", "the bound the cell asserts for the untrained heads, a threshold"),
]
