"""Chapter 1, scaled dot-product attention: the numbers its prose states."""

from .framework import Exempt, Number, output
from .stored import both, derived


def row(d_k: int, column: str) -> tuple[str, str]:
    """A column of cell 20's table (largest weight, the gradient that reaches
    the query) at one width: its pattern and group, ``column`` one of the
    groups below."""
    pattern = (
        rf"\n\s*{d_k}\s+(?P<largest_dot>\d\.\d\d)\s+(?P<largest_scaled>\d\.\d\d)"
        r"\s+(?P<median_dot>\de-\d\d)\s+(?P<median_scaled>\d\.\d\d)"
        r"\s+(?P<mean_dot>\d\.\d\d)\s+(?P<mean_scaled>\d\.\d\d)"
        r"\s+(?P<below_dot>\d+)%\s+(?P<below_scaled>\d+)%"
    )
    return pattern, column


NUMBERS = [
    # The worked example, as the cell computes it (the text's hand calculation
    # is exempt below: the cell asserts it against these).
    Number("[0.9, 0.8, 0.3]", output(r"scores:  (\[[^\]]+\])\nweights: [^\n]+\noutput:")),
    Number("[0.4076, 0.3688, 0.2237]", output(r"weights: (\[[^\]]+\])\noutput:")),
    Number("[0.5194, 0.4806]", output(r"output:  (\[[^\]]+\])")),
    # Why √d_k: cell 20's table, d_k = 1024 without and with the scaling.
    Number("97 % of the weight",
           output(row(1024, "largest_dot")[0], group="largest_dot", fmt=".0f", scale=100, template="{} % of the weight")),
    Number("a gradient of 5e-05", output(row(1024, "median_dot")[0], group="median_dot", template="a gradient of {}")),
    Number("against 0.30 with the scaling",
           output(row(1024, "median_scaled")[0], group="median_scaled", template="against {} with the scaling")),
    Number("in 58 % of the rows", output(row(1024, "below_dot")[0], group="below_dot", template="in {} % of the rows")),
    Number(
        "1.08 at d_k = 1024 against 0.53 at d_k = 4",
        derived("01", both, row(1024, "mean_dot"), row(4, "mean_dot"), fmt=".2f",
                template="{} at d_k = 1024 against {} at d_k = 4"),
    ),
    Number(
        "the same gradient, 0.25 to 0.30",
        derived("01", lambda *v: (min(v), max(v)),
                *(row(d, "median_scaled") for d in (4, 16, 64, 256, 1024)),
                fmt=".2f", template="the same gradient, {} to {}"),
    ),
    # Dropout: the largest row sum the cell finds, 1 / (1 − p).
    Number("≈ 1.11", output(r"row sums: mean [\d.]+, values: \[.*, (\d\.\d+)\]", fmt=".2f", template="≈ {}")),
    # The memory of the score matrix, computed from the tensors' sizes.
    Number("that would be 2 GiB", output(r"L =  8192: score matrix (\d+) GiB", template="that would be {} GiB")),
    Number(
        "2 GiB or 6 GiB per layer and per sentence, so 12 GiB or 36 GiB",
        derived(
            "01", lambda a, b, c, d: (a, b, c, d),
            r"without dropout: (\d+) GiB per layer", r"with dropout: (\d+) GiB per layer",
            r"without dropout: \d+ GiB per layer, (\d+) GiB", r"with dropout: \d+ GiB per layer, (\d+) GiB",
            fmt=".0f", template="{} GiB or {} GiB per layer and per sentence, so {} GiB or {} GiB",
        ),
    ),
    Number("2 GiB of scores per layer",
           output(r"L =  8192: score matrix (\d+) GiB", template="{} GiB of scores per layer")),
]

EXEMPT = [
    Exempt("k(the) = [1, 0.5, 0.8, 0], k(cat) = [0.6, 1, 1, 0], k(sat) = [0.2, 0, 0.4, 1]",
           "the worked example's keys: its input, chosen"),
    Exempt("q·k(the) = 1 + 0.8 = 1.8, q·k(cat) = 0.6 + 1 = 1.6 and q·k(sat) = 0.2 + 0.4 = 0.6",
           "the worked example by hand; cell 13 asserts the dot products [1.8, 1.6, 0.6]"),
    Exempt("e^0.9 = 2.4596, e^0.8 = 2.2255, e^0.3 = 1.3499; their sum is 6.0350",
           "the worked example by hand; cell 13 asserts each exponential and the sum"),
    Exempt("v(sat) = [0.5, 0.5]", "the worked example's values: its input, chosen"),
    Exempt("0.4076 · [1, 0] + 0.3688 · [0, 1] + 0.2237 · [0.5, 0.5]",
           "the worked example's weighted sum written out; its result is registered from cell 13's output"),
    Exempt("below 10⁻³", "the threshold the cell counts rows against: a choice of the measurement"),
    Exempt("less than 10⁻³", "the same threshold, a choice of the measurement"),
    Exempt("1e9", "the popular fill literal −1e9 the section discusses, not a measurement"),
    Exempt("Section 5.4", "a section of the paper"),
    Exempt("p = 0.1 for the base model", "the paper's dropout rate, a setting"),
    Exempt("0.1 from `transformer_base_v2` on", "tensor2tensor's setting, quoted"),
    Exempt("[0.5, 0.3, 0.2] dropped 100 000 times", "the row of weights the cell drops: its input"),
    Exempt("(0 to 3)", "the explorer's numbers of pads, a setting"),
    Exempt("inputs 40 to 49", "the positions the cell compares, a choice"),
    Exempt("[2.0, 1.0, 0.0]", "the exercise's score row, its input"),
    Exempt("more than 1 GiB", "the exercise's threshold, a choice"),
]
