"""How good are the translations? Exact match and BLEU (Chapters 7 and 8).

Exact match counts the sentences translated word for word right: strict and
easy to read, and the right yardstick for a toy grammar with one correct
answer. BLEU (Papineni et al., 2002) gives partial credit for shared n-grams;
it is computed by ``sacrebleu``, whose signature string records the settings
so that scores can be compared (Post, 2018).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import sacrebleu

__all__ = ["exact_match", "corpus_bleu", "BleuScore"]


class BleuScore(NamedTuple):
    """A corpus BLEU score in [0, 100] and sacrebleu's signature of how it was computed."""

    score: float
    signature: str


def _check_pairs(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    for name, texts in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(texts, str):
            raise TypeError(f"{name} must be a list of sentences, got a single str; wrap it: [{texts[:30]!r}]")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"{name}[{i}] must be a str, got {type(text).__name__}")
    if len(hypotheses) != len(references):
        raise ValueError(
            f"hypotheses and references must pair up, got {len(hypotheses)} hypotheses "
            f"and {len(references)} references"
        )
    if not hypotheses:
        raise ValueError("hypotheses and references are empty; a score needs at least one sentence")


def exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Fraction in [0, 1] of hypotheses equal to their reference, word for word.

    Runs of whitespace and leading or trailing spaces do not count; case and
    punctuation do.

    Example::

        >>> exact_match(["the cat ate the fish", "I go  home"], ["the cat ate the fish", "I go to school"])
        0.5
    """
    _check_pairs(hypotheses, references)
    hits = sum(h.split() == r.split() for h, r in zip(hypotheses, references))
    return hits / len(references)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> BleuScore:
    """Corpus-level BLEU with one reference per sentence, via ``sacrebleu``.

    Uses sacrebleu's defaults (its ``13a`` tokenizer, 4-grams, exponential
    smoothing, case-sensitive), which the signature spells out, e.g.
    ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``.

    Returns:
        ``BleuScore(score, signature)``, ``score`` in [0, 100].
    """
    _check_pairs(hypotheses, references)
    bleu = sacrebleu.metrics.BLEU()
    result = bleu.corpus_score(list(hypotheses), [list(references)])
    return BleuScore(float(result.score), str(bleu.get_signature()))
