"""The toy Korean→English task's splits: sampled sentences, held-out compositions and the
same-verb split (Chapter 7)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .. import _validate
from ._types import Pair
from .grammar import Clause, Sentence, Triple, _resolved, parse_sentence
from .lexicon import (
    _ANIMATE,
    _VERB,
    ANIMATES,
    PLACES,
    RUNNING_EXAMPLES,
    TIME_ADVERBIALS,
    TRANSITIVE_VERBS,
    Verb,
    _subject_problem,
)
from .tokenizer import tokenize_korean


def _all_triples() -> list[Triple]:
    return [(s.korean, v.korean, c) for v in _VERB.values() for c in v.english for s in ANIMATES
            if _subject_problem(s, v, c) is None]


def held_out_compositions(seed: int = 0, fraction: float = 0.1) -> dict[str, list[Triple]]:
    """The subject–verb–complement triples kept out of training.

    A share ``fraction`` of all triples is held out, half for valid and half for
    test. Every word still occurs in training, in other combinations (and the
    two roles of a pair, 고양이–쫓다–개 and 개–쫓다–고양이, are separate triples);
    a valid or test sentence always contains one of its split's triples. The
    running examples' triples (나, 가다, 학교) and (고양이, 먹다, 생선) are always
    test triples.

    Returns:
        ``{"valid": [...], "test": [...]}``, each a list of ``(subject, verb, complement)``.
    """
    _validate.number_in_range("fraction", fraction, 0, 1, open_low=True, open_high=True,
                              where="held_out_compositions")
    forced = [("나", "가다", "학교"), ("고양이", "먹다", "생선")]
    rest = [t for t in _all_triples() if t not in forced]
    random.Random(seed).shuffle(rest)
    n_valid = round(fraction * len(rest)) // 2
    return {"valid": rest[:n_valid], "test": forced + rest[n_valid:2 * n_valid - len(forced)]}


def _sense(verb: Verb, complement: str) -> str:
    return verb.english[complement].base


MULTI_SENSE_VERBS = tuple(v.korean for v in TRANSITIVE_VERBS if len({e.base for e in v.english.values()}) > 1)
"""Verbs whose English depends on the object: 쓰다 (write, wear, spend), 짓다 (cook,
build), 보다 (see, watch) and 부르다 (call, sing)."""


def same_verb_senses(korean: str) -> bool:
    """Whether two clauses of ``korean`` share a verb of :data:`MULTI_SENSE_VERBS` in different senses.

    민수가 모자를 쓰고 돈을 썼다 ("Minsu wore the hat and spent the money") is
    one: each clause's object alone decides its 쓰다. Such a sentence checks
    that a model reads the sense from its own clause, not from the other one.

    Raises:
        ValueError: if ``korean`` is not a sentence of the grammar.
    """
    clauses = parse_sentence(korean).clauses
    return any(a.verb is b.verb and a.verb.korean in MULTI_SENSE_VERBS
               and _sense(a.verb, a.complement) != _sense(b.verb, b.complement)
               for i, a in enumerate(clauses) for b in clauses[i + 1:])


_SENSE_WORDS = {form: english.base for verb in MULTI_SENSE_VERBS for english in _VERB[verb].english.values()
                for form in english}


def sense_words(english: str) -> list[str]:
    """The verbs of :data:`MULTI_SENSE_VERBS` in an English sentence, in order, as base forms.

    ``sense_words("Minsu wore the hat and spent the money") == ["wear", "spend"]``:
    which sense of 쓰다 each clause got, whatever else the sentence says. Two
    translations of a same-verb compound read the senses alike when their
    lists are equal; with the senses swapped they are not.
    """
    _validate.text("english", english, where="sense_words")
    return [_SENSE_WORDS[word] for word in english.split() if word in _SENSE_WORDS]


class _Sampler:
    """Draws random sentences whose clauses come from given triples, the verb first.

    Drawing the verb first, then one of its triples, gives every verb (and
    so every sense of 쓰다 and 짓다) its share of the data, though most
    triples belong to the verbs that take people and animals as objects. A
    share ``SAME_VERB`` of the compound sentences repeats a verb of
    :data:`MULTI_SENSE_VERBS` in another sense (모자를 쓰고 돈을 썼다), so
    the model sees that each clause's own object decides.
    """

    NEGATED, TOPIC, OSV, PLACE, TIME, DROP, SAME_VERB = 0.25, 0.5, 0.25, 0.2, 0.3, 0.3, 0.2  # probabilities

    def __init__(self, rng: random.Random, triples: Sequence[Triple]) -> None:
        self.rng, self.triples = rng, list(triples)
        self.by_subject: dict[str, list[Triple]] = {}
        self.by_verb: dict[str, list[Triple]] = {}
        for triple in self.triples:
            self.by_subject.setdefault(triple[0], []).append(triple)
            self.by_verb.setdefault(triple[1], []).append(triple)
        self.verbs = sorted(self.by_verb)
        self.multi_sense = [v for v in MULTI_SENSE_VERBS if v in self.by_verb]

    def clause(self, triple: Triple, drop: bool) -> Clause:
        rng = self.rng
        subject, verb = _ANIMATE[triple[0]], _VERB[triple[1]]
        osv = not drop and not verb.motion and rng.random() < self.OSV
        place = not verb.motion and not verb.stative and rng.random() < self.PLACE
        return Clause(None if drop else subject, verb, triple[2], negated=rng.random() < self.NEGATED,
                      place=rng.choice([p for p in PLACES if p.korean != triple[2]]) if place else None,
                      topic=not drop and not osv and rng.random() < self.TOPIC, osv=osv)

    def other_senses(self, clause: Clause, subject: str) -> list[Triple]:
        """Triples of ``clause``'s verb in another sense; ``subject``'s own where it has any."""
        verb = clause.verb
        others = [t for t in self.by_verb.get(verb.korean, ())
                  if _sense(verb, t[2]) != _sense(verb, clause.complement)]
        own = [t for t in others if t[0] == subject]
        return own if own and self.rng.random() < 0.5 else others

    def sentence(self, n_clauses: int, must: Sequence[Triple] = (), same_verb: bool | None = None) -> Sentence:
        """``n_clauses`` clauses; if ``must`` is given, one clause (at random) comes from it.

        ``same_verb`` (drawn with probability ``SAME_VERB`` when ``None``): a
        compound's second clause repeats the first one's verb of
        :data:`MULTI_SENSE_VERBS` in another sense.
        """
        rng = self.rng
        special = rng.randrange(n_clauses) if must else -1
        if same_verb is None:
            same_verb = n_clauses > 1 and bool(self.multi_sense) and rng.random() < self.SAME_VERB
        if same_verb and any(t[1] in self.multi_sense for t in must):  # the kept-out triple first, then its verb again
            special, must = 0, [t for t in must if t[1] in self.multi_sense]
        clauses: list[Clause] = []
        for i in range(n_clauses):
            previous = _resolved(clauses).korean if clauses else None
            repeat = same_verb and i == 1 and clauses[0].verb.korean in self.multi_sense
            options = self.other_senses(clauses[0], previous) if repeat and i != special else []
            if i == special:
                triple = rng.choice(must)
            elif options:
                triple = rng.choice(options)
            elif same_verb and i == 0:
                triple = rng.choice(self.by_verb[rng.choice(self.multi_sense)])
            elif previous and previous in self.by_subject and rng.random() < self.DROP:
                triple = rng.choice(self.by_subject[previous])  # the same subject: Korean leaves it out
            else:
                triple = rng.choice(self.by_verb[rng.choice(self.verbs)])
            clauses.append(self.clause(triple, drop=triple[0] == previous))
        tense = rng.choice(("present", "past"))
        events = [k for k, c in enumerate(clauses) if not c.verb.stative]
        if events and rng.random() < self.TIME:
            k = rng.choice(events)
            clauses[k] = clauses[k]._replace(time=rng.choice([t for t in TIME_ADVERBIALS if tense in t.tenses]))
        return Sentence(tuple(clauses), tense)

    def pairs(self, n: int, n_clauses, must: Sequence[Triple] = (), first: Sequence[Pair] = (),
              same_verb: bool | None = None, exclude: Sequence[Pair] = ()) -> list[Pair]:
        """``n`` distinct (tokens, English) pairs, none of ``exclude``; ``n_clauses()`` draws the clauses of each."""
        pairs, excluded = dict.fromkeys(first), set(exclude)  # a dict keeps the order of drawing
        for _ in range(100 * n):
            if len(pairs) >= n:
                return list(pairs)
            sentence = self.sentence(n_clauses(), must, same_verb)
            if same_verb and not same_verb_senses(sentence.korean()):
                continue
            pair = (sentence.tokenized(), sentence.english())
            if pair not in excluded:
                pairs.setdefault(pair)
        raise ValueError(f"toy_translation_splits: could not draw {n} distinct sentences; ask for fewer")


def toy_translation_splits(seed: int = 0, *, n_train: int = 8000, n_valid: int = 300, n_test: int = 300,
                           n_ood: int = 200, n_same_verb: int = 200, compound_prob: float = 0.35,
                           held_out_fraction: float = 0.1) -> dict[str, list[Pair]]:
    """Korean→English sentence pairs from the toy grammar, split by held-out composition.

    The Korean side is tokenized (``"고양이 가 생선 을 먹었다"``, see
    :func:`tokenize_korean`); :func:`detokenize_korean` writes it as a learner
    would type it.

    Args:
        seed: seed of the random generator; the same seed gives the same splits.
        n_train, n_valid, n_test: number of distinct pairs in each split.
        n_ood: number of pairs in the out-of-distribution split.
        n_same_verb: number of pairs in the same-verb split.
        compound_prob: share of train / valid / test sentences made of two
            clauses joined by -고 (the others have one).
        held_out_fraction: share of the triples kept out of train (see :func:`held_out_compositions`).

    Returns:
        ``{"train": [...], "valid": [...], "test": [...], "ood": [...], "same_verb": [...]}`` of
        ``(korean tokens, english)`` pairs. Valid and test sentences each
        contain a triple of :func:`held_out_compositions` that train never
        shows, so train, valid and test are disjoint; the test split starts
        with :data:`RUNNING_EXAMPLES`. **ood** is out of distribution on
        purpose: sentences of three clauses, where training has one or two,
        built from training triples only. It measures a limit, not the
        recipe's target. **same_verb**: two-clause sentences that use one
        verb of :data:`MULTI_SENSE_VERBS` in two senses (민수가 모자를 쓰고
        돈을 썼다 "Minsu wore the hat and spent the money"; see
        :func:`same_verb_senses`), from training triples but none of them a
        training sentence: does each clause's own object decide its sense?
    """
    for name, value in (("n_train", n_train), ("n_valid", n_valid), ("n_test", n_test), ("n_ood", n_ood),
                        ("n_same_verb", n_same_verb)):
        _validate.positive_int(name, value, where="toy_translation_splits")
    _validate.number_in_range("compound_prob", compound_prob, 0, 1, where="toy_translation_splits")
    held = held_out_compositions(seed, held_out_fraction)
    kept_out = set(held["valid"]) | set(held["test"])
    train_triples = [t for t in _all_triples() if t not in kept_out]
    rng = random.Random(seed)
    sampler = _Sampler(rng, train_triples)

    def one_or_two() -> int:
        return 2 if rng.random() < compound_prob else 1

    first = [(" ".join(tokenize_korean(ko)), en) for ko, en in RUNNING_EXAMPLES]
    train = sampler.pairs(n_train, one_or_two)
    return {"train": train,
            "valid": sampler.pairs(n_valid, one_or_two, must=held["valid"]),
            "test": sampler.pairs(n_test, one_or_two, must=held["test"], first=first),
            "ood": sampler.pairs(n_ood, lambda: 3),
            "same_verb": sampler.pairs(n_same_verb, lambda: 2, same_verb=True, exclude=train)}
