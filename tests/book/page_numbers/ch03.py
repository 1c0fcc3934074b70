"""Chapter 3, positional encoding: the numbers its prose states."""

from .framework import Exempt, Number, output, package
from .stored import derived

SMALL_TABLE_ROW = r"\n {j}  {i}  {f}\(pos / 10000\^\(6/8\)\)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"


def slowest_turn(d_model: int) -> float:
    """How much faster than k/10000 radians the last pair turns at offset k:
    10000 · ω_last = 10000^(2/d_model)."""
    return 10000 * 10000 ** (-(d_model - 2) / d_model)


NUMBERS = [
    Number("off by 4 positions", output(r"guessing the middle is off by (\d+\.\d+)", fmt=".0f",
                                        template="off by {} positions")),
    # The printed table of d_model = 8: row 6 at position 1, row 7 at position 4.
    Number("grows by 0.001 per step", output(SMALL_TABLE_ROW.format(j=6, i=3, f="sin"), group=2, fmt=".3f",
                                             template="grows by {} per step")),
    Number("stays at 1.0000 to four decimals", output(SMALL_TABLE_ROW.format(j=7, i=3, f="cos"), group=5,
                                                      template="stays at {} to four decimals")),
    Number("about 0.044 for", output(r"RMS of embedding entries:\s+(\d\.\d+)", fmt=".3f", template="about {} for")),
    Number("16 to 1", derived("03", lambda emb, pe: pe / emb, r"RMS of embedding entries:\s+(\d\.\d+)",
                              r"RMS of positional encoding:\s+(\d\.\d+)", fmt=".0f", template="{} to 1")),
    # The slowest pair's turn, from the formula the explorer's cell asserts.
    Number("$3.2 \\times k/10000$ at $d_{model} = 16$, $1.8 \\times$ at 32, $1.3 \\times$ at 64 "
           "and $1.15 \\times$ at 128",
           package(lambda: tuple(f"{slowest_turn(d):.{2 if d == 128 else 1}f}" for d in (16, 32, 64, 128)),
                   template="${} \\times k/10000$ at $d_{{model}} = 16$, ${} \\times$ at 32, ${} \\times$ at 64 "
                            "and ${} \\times$ at 128")),
]

EXEMPT = [
    Exempt("positions 0 to 4", "the positions the small table shows, a choice"),
    Exempt("The 2 × 2 matrix", "the size of a rotation of one pair, a definition"),
    Exempt("offsets 1 to 40", "the exercise's offsets, its input"),
    Exempt("less than 0.1 radian (their sine moves by less than 0.1, their cosine by less than 0.005)",
           "the exercise's thresholds, definitions (the solution asserts sin 0.1 < 0.1 and 1 − cos 0.1 < 0.005)"),
]
