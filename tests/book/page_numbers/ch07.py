"""Chapter 7, training a Korean → English translator: the numbers of its prose.

The short runs' numbers are ranges over the seed sweep's ten runs (five seeds,
two sets of CPU kernels); the shipped model's and the grammar's come from the
stored outputs of the chapter or from the package.
"""

from __future__ import annotations

from collections import Counter

from .framework import BOTH, Exempt, Number, output, package, sweep, sweep_values, _sweep_file


def _reverse_runs() -> str:
    """The reverse task over the ten runs: the nine best, and the one that stalled."""
    runs = [(name, int(seed), _sweep_file(name)["runs"][seed]["numbers"]["ch7.reverse.exact_match"])
            for name in BOTH for seed in _sweep_file(name)["runs"]]  # fmt: skip
    stalled = min(runs, key=lambda run: run[2])
    rest = [value for run in runs if run is not stalled for value in [run[2]]]
    kernels = "AVX2" if stalled[0] == "avx2" else "default"
    return (f"nine got {100 * min(rest):.1f}–{100 * max(rest):.0f} % of the test sequences exactly right, "
            f"and one, seed {stalled[1]} on the {kernels} kernels, stalled at {100 * stalled[2]:.0f} %")


def _bag_of_words_limit() -> str:
    """The most test sentences a bag-of-words model can get right: per bag, the commonest translation."""
    from transformer_edu import data

    test = data.toy_translation_splits(0)["test"]
    by_bag: dict[tuple, Counter] = {}
    for korean, english in test:
        by_bag.setdefault(data.bag_of_tokens(korean), Counter())[english] += 1
    best = sum(translations.most_common(1)[0][1] for translations in by_bag.values())
    return f"{best} of its {len(test)}"


def _smoothed_peak() -> float:
    from transformer_edu import data

    splits = data.toy_translation_splits(0)
    vocab = data.Vocab.build([english for _, english in splits["train"]])
    return 1 - 0.1 + 0.1 / len(vocab)


NUMBERS = [
    Number("(20 % of all clauses, measured", output(r"object first in (\d+)%", template="({} % of all clauses, measured")),
    Number("(35 % of all clauses)", output(r"은/는 in (\d+)%", template="({} % of all clauses)")),
    Number("(86 of the 114 such combinations", output(r"(\d+ of the \d+) with a person", template="({} such combinations")),
    Number("nine got 98.0–100 % of the test sequences exactly right, and one, seed 1 on the AVX2 kernels, "
           "stalled at 58 %", package(_reverse_runs)),
    Number("(at 0.84 to 0.90 of ln 14", sweep("ch7.warmup.post_over_ln_V", fmt=".2f", sep=" to ",
                                             template="(at {} of ln 14")),
    Number("its loss is 0.8 to 1.1 lower", sweep("ch7.warmup.post_minus_pre", fmt=".1f", sep=" to ",
                                                template="its loss is {} lower")),
    Number("(0.4 to 0.6 lower than without", sweep("ch7.warmup.post_minus_warmed", fmt=".1f", sep=" to ",
                                                  template="({} lower than without")),
    Number("100 % on held-out compositions",
           output(r"exact match on the \d+ held-out test sentences: (\d+\.\d)%", fmt=".0f",
                  template="{} % on held-out compositions")),
    Number("(the 100 % above)", output(r"exact match on the \d+ held-out test sentences: (\d+\.\d)%", fmt=".0f",
                                       template="(the {} % above)")),
    Number("The model's 100 % depends on order",
           output(r"exact match on the \d+ held-out test sentences: (\d+\.\d)%", fmt=".0f",
                  template="The model's {} % depends on order")),
    Number("(47–56 % over the five shuffles", sweep("ch7.shuffled.two_animates", files="default", scale=100,
                                                   template="({} % over the five shuffles")),
    Number("the other way round (49–66 %)", sweep("ch7.shuffled.role_swap_share", files="default", scale=100,
                                                 template="the other way round ({} %)")),
    Number("299 of its 300", package(_bag_of_words_limit)),
    Number("the recipe scored 31–54 % on the test split", sweep("ch7.recipe.test_exact", scale=100,
                                                               template="the recipe scored {} % on the test split")),
    Number("the model without source positions 32–47 %", sweep("ch7.no_src_pos.test_exact", scale=100,
                                                              template="the model without source positions {} %")),
    Number("from −7 to +16 points on the test split", sweep("ch7.src_pos_gain.test", scale=100, fmt="+.0f", sep=" to ",
                                                           template="from {} points on the test split")),
    Number("from −19 to +4", sweep("ch7.src_pos_gain.swap", scale=100, fmt="+.0f", sep=" to ", template="from {}")),
    Number("it gets 97 % of the split right", output(r"same_verb split (\d+\.\d)%", fmt=".0f",
                                                    template="it gets {} % of the split right")),
    Number("both sentences of 94 % of the swapped pairs", output(r"swapped,\n\s+both right (\d+\.\d)%", fmt=".0f",
                                                                template="both sentences of {} % of the swapped pairs")),
    Number("98.9 % of all their verbs", output(r"both verbs in the right sense (\d+\.\d)%",
                                              template="{} % of all their verbs")),
    Number("the recipe gets 4 to 15 % of the split right", sweep("ch7.recipe.same_verb_exact", scale=100, sep=" to ",
                                                                template="the recipe gets {} % of the split right")),
    Number("(from 0.4 points below the unsmoothed run to 3.6 above it",
           sweep("ch7.smoothing.accuracy_gain", lambda v: (-min(v), max(v)), scale=100, fmt=".1f",
                 sep=" points below the unsmoothed run to ", template="(from {} above it")),
    Number("(by 0.08 to 0.11 in every run)", sweep("ch7.smoothing.confidence_drop", fmt=".2f", sep=" to ",
                                                  template="(by {} in every run)")),
    Number("(by 0.09 to 0.17 for the short run", sweep("ch7.smoothing.underconfidence", fmt=".2f", sep=" to ",
                                                      template="(by {} for the short run")),
    Number("averages about 0.91", output(r"ε = 0\.1, shipped\s+confidence (\d\.\d+)", fmt=".2f",
                                        template="averages about {}")),
    Number("≈ 0.90 the smoothed target asks for", package(_smoothed_peak, fmt=".2f",
                                                         template="≈ {} the smoothed target asks for")),
    Number("(0.01–0.05 against 0.09–0.17 over the ten runs)",
           package(lambda: (sweep("ch7.no_smoothing.ece", fmt=".2f").render("07"),
                            sweep("ch7.recipe.ece", fmt=".2f").render("07")),
                   template="({} against {} over the ten runs)")),
    Number("they get 0.49 of its weight, 1.5 times an even spread",
           output(r"from the 4th position on: (\d\.\d+)\n.*?(\d\.\d) times as much", group=(1, 2),
                  template="they get {} of its weight, {} times an even spread")),
]

EXEMPT = [
    Exempt("ε = 0.1 ([Vaswani et al., 2017]", "the paper's label smoothing: a setting"),
    Exempt("(the smoothed target asks for about 0.9)", "1 − ε + ε/V for ε = 0.1, rounded: arithmetic on a setting"),
    Exempt("with β₁ = 0.9, β₂ = 0.98 and ε = 10⁻⁹ (β₂ lower than the usual 0.999",
           "Adam's settings, the paper's and the usual ones"),
    Exempt("(d_model · warmup)^−0.5", "the formula's exponent"),
    Exempt("a base rate of 1.0", "a setting of the package"),
    Exempt("a constant rate of 3 · 10⁻³", "the experiment's learning rate: a setting"),
    Exempt("The ten runs are seeds 0 to 4", "the seeds of the sweep: a definition"),
    Exempt("(with a threshold of 1.0, as our recipe does)", "the recipe's clipping threshold: a setting"),
    Exempt("ends below 1.2", "the bound the cell under it asserts (math.exp(valid_nll) < 1.2)"),
    Exempt("where the paper uses 0.1", "the paper's dropout: a setting"),
    Exempt("on a scale of 0 to 100", "BLEU's scale: a definition"),
    Exempt("base 12 hours, big 3.5 days", "the paper's training times, cited"),
    Exempt("Adam, β = (0.9, 0.98), ε = 10⁻⁹", "the paper's optimizer settings"),
    Exempt("rate × 0.5", "the recipe's lr_factor: a setting (asserted from RECIPES)"),
    Exempt("dropout 0.1 (big En→Fr 0.1, En→De 0.3), ε_ls = 0.1", "the paper's regularization settings"),
    Exempt("no dropout, ε_ls = 0.1", "the recipe's settings (asserted from RECIPES)"),
    Exempt("total norm 1.0", "the recipe's clipping threshold: a setting"),
    Exempt("written every 10 min", "the paper's checkpoint interval, cited"),
    Exempt("beam 4, length penalty α = 0.6", "the paper's decoding settings"),
    Exempt("beam 4 and α = 0.6 in Chapter 8", "the decoding settings of Chapter 8"),
    Exempt("BLEU En→De 27.3 / 28.4, En→Fr 38.1 / 41.8", "the paper's results, cited"),
    Exempt("A base learning rate other than 1.0", "a setting of the package"),
    Exempt("the rate fall below 10⁻⁴", "the exercise's threshold"),
    Exempt("label smoothing with ε = 0.1", "the paper's label smoothing: a setting"),
    Exempt("Adam with β = (0.9, 0.98), ε = 10⁻⁹", "the paper's optimizer settings"),
]
