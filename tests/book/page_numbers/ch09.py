"""Chapter 9, beyond the toy: the numbers of its prose.

This run's numbers come from the chapter's stored outputs; the ranges are over
the seed sweep's ten runs (five seeds, two sets of CPU kernels); the arithmetic
of the Colab recipe is computed here.
"""

from __future__ import annotations

from .framework import Exempt, Number, format_number, output, package, sweep, sweep_values

#: A row of the vocabulary-size table: N, then three "low to high" columns.
_ROW = r"^\s*{n}\s+(\S+) to\s+(\S+)\s+(\S+)% to\s+(\S+)%\s+(\S+)% to\s+(\S+)%"
#: A row of the halves table: batch, weighted, plain.
_HALVES = r"^\s+\d+\s+\S+e-\d+\s+(\S+e-\d+)$"


def _plain_mean() -> str:
    low = output(_HALVES, stat="min", scale=100, fmt=".1f").render("09")
    high = output(_HALVES, stat="max", scale=100, fmt=".0f").render("09")
    return f"the plain mean is off by {low} to {high} % of the largest entry"


def _noise_to_step() -> str:
    """How much larger Adam's step is than plain gradient descent's (lr · g), at the least."""
    ratios = [step / size for step, size in zip(sweep_values("ch9.key_bias.adam_step"),
                                                sweep_values("ch9.key_bias.gradient_size"))]  # fmt: skip
    return f"some {format_number(min(ratios), '10^')} times what plain gradient descent would make of it"


def _opus_epoch() -> str:
    pairs, batch, steps = 1_000_000, 128, 20_000  # OPUS-100's pairs, the tsv recipe's batch, the command's steps
    per_epoch = pairs / batch
    return (f"make about {format_number(round(per_epoch, -2), ',.0f')} updates per epoch, so 20 000 updates are "
            f"about {steps / per_epoch:.1f} epochs")


def _d(key: str, stat: str = "range", **kw):
    return sweep(f"ch9.{key}", stat, **kw)


NUMBERS = [
    Number("(a sentence is 13–14 pieces)", output(_ROW.format(n=400), group=(1, 2), fmt=".0f",
                                                 template="(a sentence is {}–{} pieces)")),
    Number("(59–64 % of them at N = 450)", output(_ROW.format(n=450), group=(5, 6),
                                                 template="({}–{} % of them at N = 450)")),
    Number("(4.6–4.9 pieces per sentence", output(_ROW.format(n=650), group=(1, 2), fmt=".1f",
                                                 template="({}–{} pieces per sentence")),
    Number("its validation BLEU is 14.9 here", output(r"valid BLEU (\d+\.\d)", template="its validation BLEU is {} here")),
    Number("4.9 to 15.4 over the ten runs", _d("written.valid_bleu", fmt=".1f", sep=" to ", template="{} over the ten runs")),
    Number("the plain mean is off by 0.1 to 3 % of the largest entry", package(_plain_mean)),
    Number("the two differ by 6.0 · 10⁻⁸ to 6.7 · 10⁻⁵",
           _d("processes.drift20", fmt=".1e·", sep=" to ", template="the two differ by {}")),
    Number("(this run: 3.3 · 10⁻⁷)", output(r"1 process vs 2 processes: largest weight difference (\S+)", fmt=".1e·",
                                           template="(this run: {})")),
    Number("to 8.2 · 10⁻⁵ at most", _d("accumulate4.drift12", "max", fmt=".1e·", template="to {} at most")),
    Number("of size 4.5 · 10⁻¹¹ (measured below)", output(r"running size \(median\): (\S+)", fmt=".1e·",
                                                         template="of size {} (measured below)")),
    Number("steps of 0.8 % of the learning rate", output(r"key biases (\d+\.\d)%, query",
                                                        template="steps of {} % of the learning rate")),
    Number("(0.7 to 1.2 % over the ten runs", _d("key_bias.adam_step", scale=100, fmt=".1f", sep=" to ",
                                                template="({} % over the ten runs")),
    Number("which do learn, move 27 %", output(r"query biases (\d+\.\d)%", fmt=".0f", template="which do learn, move {} %")),
    Number("some 10⁸ times what plain gradient descent would make of it", package(_noise_to_step)),
    Number("drift apart by 2.2 · 10⁻⁴ to 6.6 · 10⁻⁴ in 20 updates",
           _d("key_bias.trained_drift20", fmt=".1e·", sep=" to ", template="drift apart by {} in 20 updates")),
    Number("the whole model differs by 6.0 · 10⁻⁸ to 5.3 · 10⁻⁴",
           _d("key_bias.fixed_drift20", fmt=".1e·", sep=" to ", template="the whole model differs by {}")),
    Number("change the logits by at most 1.9 · 10⁻⁶", _d("key_bias.logit_change", "max", fmt=".1e·",
                                                        template="change the logits by at most {}")),
    Number("drifted apart by 1.7 · 10⁻⁵ to 3.3 · 10⁻² after 100 updates",
           package(lambda: (_d("drift100.smallest", "min", fmt=".1e·").render("09"),
                            _d("drift100.largest", "max", fmt=".1e·").render("09")),
                   template="drifted apart by {} to {} after 100 updates")),
    Number("drifted by more than 10⁻²", _d("drift100.largest", "min", fmt="10^", template="drifted by more than {}")),
    Number("stayed within 0.007 of each other", _d("drift100.within", "max", fmt=".3f",
                                                  template="stayed within {} of each other")),
    Number("(the spread between its three seeds: 0.03 to 0.18)",
           _d("drift100.between", fmt=".2f", sep=" to ", template="(the spread between its three seeds: {})")),
    Number("0.005 % apart here", output(r"(\d+\.\d+)% apart", template="{} % apart here")),
    Number("at most 0.009 % over the ten runs", _d("bf16.relative_gap", "max", scale=100, fmt=".3f",
                                                  template="at most {} % over the ten runs")),
    Number("make about 7 800 updates per epoch, so 20 000 updates are about 2.6 epochs", package(_opus_epoch)),
    Number("(6.0 · 10⁻⁸ to 6.7 · 10⁻⁵ after 20 updates",
           _d("processes.drift20", fmt=".1e·", sep=" to ", template="({} after 20 updates")),
    Number("steps of about 1 % of the learning rate", _d("key_bias.adam_step", "mean", scale=100,
                                                        template="steps of about {} % of the learning rate")),
]

EXEMPT = [
    Exempt("for seeds 0 to 4", "the seeds of the sweep: a definition"),
    Exempt("the 256 byte pieces", "the 256 values of a byte: a definition"),
    Exempt("(8 000 to 37 000 pieces)", "typical vocabulary sizes of real systems; 37 000 is the paper's"),
    Exempt("The asserts allow 10⁻⁴.", "the asserts' threshold"),
    Exempt("plus ε = 10⁻⁹", "Adam's ε in the paper's settings"),
    Exempt("100 000 updates (12 hours) for the base model and 300 000 (3.5 days)", "the paper's training, cited"),
    Exempt("dropout 0.1, label smoothing 0.1", "the tsv recipe's settings"),
    Exempt("written 10 minutes apart", "the paper's checkpoint interval, cited"),
]
