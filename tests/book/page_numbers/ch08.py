"""Chapter 8, decoding and beam search: the numbers of its prose.

The young model's numbers are ranges over the seed sweep's ten runs (five seeds,
two sets of CPU kernels); the shipped model's and the data's come from the
package.
"""

from __future__ import annotations

from .framework import Exempt, Number, package, sweep, sweep_values


def _lowest_share() -> str:
    """The run in which search errors were the smallest share of the beam-only sentences."""
    runs = zip(sweep_values("ch8.search_errors"), sweep_values("ch8.beam_only"))
    errors, beam_only = min(runs, key=lambda run: run[0] / run[1])
    return f"the lowest share was {errors:.0f} of {beam_only:.0f}"


def _reference_length() -> float:
    from transformer_edu import data

    references = [english for _, english in data.toy_translation_splits(0)["test"]]
    return sum(len(r.split()) for r in references) / len(references)


def _d_model() -> str:
    from transformer_edu.training.recipes import RECIPES

    d = RECIPES["ko-en"].model.d_model
    return f"8 rows times {d} × {d} weights"


NUMBERS = [
    Number("got 0 to 7 points more sentences exactly right",
           sweep("ch8.beam_minus_greedy.exact", scale=100, sep=" to ",
                 template="got {} points more sentences exactly right")),
    Number("went from −0.5 to 8.6 above greedy's",
           sweep("ch8.beam_minus_greedy.bleu", fmt=".1f", sep=" to ", template="went from {} above greedy's")),
    Number("greedy decoding misses (6 to 20)", sweep("ch8.beam_only", sep=" to ", template="greedy decoding misses ({})")),
    Number("beam search misses (0 to 7)", sweep("ch8.greedy_only", sep=" to ", template="beam search misses ({})")),
    Number("the lowest share was 16 of 20", package(_lowest_share)),
    Number("(by 0.13 to 0.24)", sweep("ch8.curse.score_gain_K1_K4", fmt=".2f", sep=" to ", template="(by {})")),
    Number("exact match moves by at most 1.0 points",
           sweep("ch8.curse.exact_spread_K2_16", "max", scale=100, fmt=".1f",
                 template="exact match moves by at most {} points")),
    Number("beyond K = 4 BLEU by at most 2.3",
           sweep("ch8.curse.bleu_spread_K4_16", "max", fmt=".1f", template="beyond K = 4 BLEU by at most {}")),
    Number("BLEU at K = 16 was 0.1 to 3.0 below its best K",
           sweep("ch8.curse.bleu_below_best", fmt=".1f", sep=" to ", template="BLEU at K = 16 was {} below its best K")),
    Number("within 0.7 words of the references' length",
           sweep("ch8.curse.K1_above_reference", lambda v: max(-min(v), max(v)), fmt=".1f",
                 template="within {} words of the references' length")),
    Number("which average 7.3 words", package(_reference_length, fmt=".1f", template="which average {} words")),
    Number("K = 16's outputs are 0.4 to 1.4 words shorter than the references",
           sweep("ch8.curse.K16_below_reference", fmt=".1f", sep=" to ",
                 template="K = 16's outputs are {} words shorter than the references")),
    Number("it still writes 99.6 % or more",
           sweep("ch8.exposure.shipped_wrong.later_words", "min", scale=100, fmt=".1f",
                 template="it still writes {} % or more")),
    Number("2 to 5 points fewer of its later words",
           sweep("ch8.exposure.later_words_drop", scale=100, sep=" to ", template="{} points fewer of its later words")),
    Number("its next word 14 to 22 points fewer",
           sweep("ch8.exposure.next_word_drop", scale=100, sep=" to ", template="its next word {} points fewer")),
    Number("sends 50.5 times as many positions",
           package(lambda: (100 * 101 / 2) / 100, template="sends {} times as many positions")),
    Number("8 rows times 64 × 64 weights", package(_d_model)),
    Number("it happened on 3 to 16 of the 800",
           sweep("ch8.early_stop.worse", sep=" to ", template="it happened on {} of the 800")),
    Number("beam search's lead was 0 to 7 points on exact match and −0.5 to 8.6 on BLEU",
           package(lambda: (sweep("ch8.beam_minus_greedy.exact", scale=100, sep=" to ").render("08"),
                            sweep("ch8.beam_minus_greedy.bleu", fmt=".1f", sep=" to ").render("08")),
                   template="beam search's lead was {} points on exact match and {} on BLEU")),
]

EXEMPT = [
    Exempt("(K = 4, α = 0.6, introduced below)", "the paper's beam size and length penalty: settings"),
    Exempt("The ten runs are seeds 0 to 4", "the seeds of the sweep: a definition"),
    Exempt("from K = 1 to 4 and again from 4 to 16", "beam sizes of the table: settings"),
    Exempt("which the paper uses with K = 4 and α = 0.6", "the paper's settings"),
    Exempt("beam search (α = 0.6) disagrees", "the paper's length penalty: a setting"),
    Exempt("α ∈ {0, 0.6, 1}", "the explorer's settings"),
    Exempt("beyond a beam of 5 to 10", "Koehn and Knowles (2017)'s finding, cited"),
    Exempt("for K from 1 to 16", "the beam sizes the experiment tries: settings"),
    Exempt("with α = 0 and with α = 0.6", "the two settings compared"),
    Exempt("with p = 0.9", "the exercise's nucleus size: a setting"),
    Exempt("even with α = 0.6", "the paper's length penalty: a setting"),
]
