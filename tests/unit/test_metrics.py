"""Exact match and BLEU (transformer_edu.metrics, Chapter 7)."""

import pytest
import sacrebleu

from transformer_edu.metrics import corpus_bleu, exact_match

TARGETS = ["the cat ate the fish", "I go to school", "the bear saw the ball"]


def test_exact_match():
    assert exact_match(TARGETS, TARGETS) == 1.0
    assert exact_match(["the cat  ate the fish ", "I go home", "x"], TARGETS) == pytest.approx(1 / 3)
    assert exact_match(["The cat ate the fish"], TARGETS[:1]) == 0.0  # case counts
    with pytest.raises(ValueError, match="must pair up"):
        exact_match(TARGETS, TARGETS[:2])
    with pytest.raises(ValueError, match="empty"):
        exact_match([], [])
    with pytest.raises(TypeError, match="single str"):
        exact_match("the cat", "the cat")


def test_corpus_bleu_is_sacrebleus():
    hypotheses = ["the cat ate the fish", "I go to the school", "the bear saw a ball"]
    result = corpus_bleu(hypotheses, TARGETS)
    assert result.score == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [TARGETS]).score)
    assert 0 < result.score < 100
    assert corpus_bleu(TARGETS, TARGETS).score == pytest.approx(100.0)
    assert result.signature.startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")
