"""Chapter 4, layer norm, residuals and the feed-forward block: the numbers its prose states."""

from .framework import Exempt, Number
from .stored import both, derived

XAVIER = r"Xavier × 5/3, without residuals\s+(\S+) to (\S+)"
PRE_LN = r"pre-LN, with residuals\s+6\s+(\d\.\d\d)[^\n]*\n[^\n]*\n[^\n]*\n\s+48\s+(\d\.\d\d)"

NUMBERS = [
    # Cell 17: the first layer's gradient over the last's, Xavier × 5/3, over 8 draws.
    Number("10 to 22 times", derived("04", both, (XAVIER, 1), (XAVIER, 2), fmt=".0f", template="{} to {} times")),
    Number("1.08 to 1.11 times per layer",
           derived("04", both, r"grows (\d\.\d\d) to", r"grows \d\.\d\d to (\d\.\d\d) times per layer", fmt=".2f",
                   template="{} to {} times per layer")),
    # Cell 42: pre-LN with residuals, the median of the 8 draws' ratios.
    Number("0.54 at 6 layers and 0.15 at 48",
           derived("04", both, (PRE_LN, 1), (PRE_LN, 2), fmt=".2f", template="{} at 6 layers and {} at 48")),
]

EXEMPT = [
    Exempt("for seeds 0 to 9 alike", "the seeds for which the chapter's asserts were run, a statement of coverage"),
    Exempt("a spread of 0.001", "an input spread the cell chooses"),
    Exempt("From 2 to 32 layers", "the depths measured, a choice"),
    Exempt("more than 1.5 times the last layer's gradient", "the bound the cell asserts for every draw"),
    Exempt("Section 5.4", "a section of the paper"),
    Exempt("`relu_dropout` to 0.1", "tensor2tensor's setting, quoted"),
]
