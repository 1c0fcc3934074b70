"""The toy grammar's sentences: parsing written Korean, the rule translation, the grammar's
limits said in words, and the perturbations of Chapter 7's experiments."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import product
from typing import NamedTuple

from .lexicon import (
    ANIMATE_BY_WORD,
    VERB_FORMS,
    MISSPELLINGS,
    PLACE_BY_WORD,
    POLITE_TO_PLAIN,
    THING_BY_WORD,
    TIME_BY_WORD,
    VERB_BY_WORD,
    ANIMATES,
    NEGATION,
    PARTICLES,
    THINGS,
    TIME_ADVERBIALS,
    Noun,
    Place,
    TimeAdverbial,
    Verb,
    excluded_pair,
    subject_problem,
    with_particle,
    word_hint,
)
from .tokenizer import KOREAN_TOKENIZER, KoreanTokenizer, tokenize_korean


class Clause(NamedTuple):
    """One clause: ``[time] subject [place에서] object|place에 [안] verb``, or object first.

    Korean marks the subject with 이/가 or with the topic particle 은/는. The
    choice is about information structure, not about who acts: 은/는 presents
    the subject as what the sentence is about, known already or contrasted
    with another (고양이는 생선을 먹고 개는 물을 마셨다 "the cat ate the fish and
    the dog drank the water"); 이/가 presents it as new or in focus (who ate
    the fish? 고양이가 먹었다). Both mark the one who acts here, and English
    shows the difference only by stress, so both translate to the same
    English subject. After a fronted object (``osv``) the subject takes 이/가.
    """
    subject: Noun | None        # None: left out, as Korean does when it repeats the previous clause's
    verb: Verb
    complement: str             # the object (Korean noun) or, for a motion verb, the place it goes to
    negated: bool = False
    time: TimeAdverbial | None = None
    place: Place | None = None  # where it happens (에서); transitive verbs only
    topic: bool = False         # the subject takes 은/는 instead of 이/가
    osv: bool = False           # scrambled: the object comes before the subject

    def korean_words(self, ending: str) -> list[str]:
        """The written words, with the verb in the form ``ending``: "present", "past" or "connective"."""
        words = [self.time.korean] if self.time else []
        subject = [with_particle(self.subject.korean, "은/는" if self.topic else "이/가")] if self.subject else []
        place = [with_particle(self.place.korean, "에서")] if self.place else []
        complement = [with_particle(self.complement, "에" if self.verb.motion else "을/를")]
        words += complement + subject + place if self.osv else subject + place + complement
        if self.negated:
            words.append(NEGATION)
        words.append({"present": self.verb.present, "past": self.verb.past,
                      "connective": self.verb.connective}[ending])
        return words

    def english_words(self, subject: Noun, tense: str) -> list[str]:
        """The English words; ``subject`` is this clause's or, if it has none, the one it repeats."""
        verb, past = self.verb.english[self.complement], tense == "past"
        never = self.negated and self.time is not None and self.time.korean == "매일"
        if never:  # 매일 안 먹는다: not on any day, "never eats", not "does not eat every day"
            verb_words = ["never", verb.third if subject.third_singular else verb.base]
        elif self.negated:  # do-support: "did not eat", "does not eat", "do not eat"
            verb_words = ["did" if past else "does" if subject.third_singular else "do", "not", verb.base]
        else:
            verb_words = [verb.past if past else verb.third if subject.third_singular else verb.base]
        if self.verb.motion:
            complement = PLACE_BY_WORD[self.complement].to
        else:
            complement = self.verb.object_english(self.complement, subject)
        words = ([self.subject.english] if self.subject else []) + verb_words + [complement]
        if self.place:  # adverbials go to the end: place before time
            words.append(self.place.at)
        if self.time and not never:
            words.append(self.time.english)
        return words


class Sentence(NamedTuple):
    """Clauses joined by the connective -고; Korean marks the tense once, on the last verb.

    A clause ending in -고 (먹고) has no tense of its own: it takes the last
    verb's, so 고양이가 생선을 먹고 개가 물을 마셨다 is "the cat ate the fish and the
    dog drank the water", both past.
    """
    clauses: tuple[Clause, ...]
    tense: str                  # "present" or "past"

    def subjects(self) -> list[Noun]:
        """The subject of each clause, a left-out subject resolved to the one it repeats."""
        resolved = []
        for clause in self.clauses:
            resolved.append(clause.subject or resolved[-1])
        return resolved

    def korean(self) -> str:
        """As written: ``"고양이가 생선을 먹고 물을 마셨다"``."""
        last = len(self.clauses) - 1
        return " ".join(w for i, c in enumerate(self.clauses)
                        for w in c.korean_words(self.tense if i == last else "connective"))

    def tokenized(self) -> str:
        """As the model reads it: ``"고양이 가 생선 을 먹고 물 을 마셨다"``."""
        return " ".join(tokenize_korean(self.korean()))

    def english(self) -> str:
        return " and ".join(" ".join(c.english_words(s, self.tense))
                            for c, s in zip(self.clauses, self.subjects()))

    def compositions(self) -> list[Triple]:
        """The (subject, verb, complement) triple of each clause, in dictionary forms."""
        return [(s.korean, c.verb.korean, c.complement) for c, s in zip(self.clauses, self.subjects())]


Triple = tuple[str, str, str]  # (subject, verb, object or place), Korean dictionary forms


# --------------------------------------------------------------------------
# Reading a sentence back: the grammar's reference translator
# --------------------------------------------------------------------------

_ROLE_NAMES = {"T": "a time word such as '어제'", "S": "a subject such as '고양이가' or '나는'",
               "P": "a place with 에서 such as '공원에서'", "O": "an object such as '생선을'",
               "G": "a place with 에 such as '학교에'", "N": NEGATION, "V": "the verb"}


def _expand(pattern: str) -> set[str]:
    """All role strings of a pattern whose ``X?`` parts are optional."""
    parts = re.findall(r"[A-Z]\??", pattern)
    options = [(p[0], "") if p.endswith("?") else (p,) for p in parts]
    return {"".join(choice) for choice in product(*options)}


_FIRST_CLAUSE = set().union(*map(_expand, ("T?SP?ON?V", "T?SGN?V", "T?OSP?N?V")))
_LATER_CLAUSE = _FIRST_CLAUSE | set().union(*map(_expand, ("T?P?ON?V", "T?GN?V")))  # the subject may be left out


class _Part(NamedTuple):
    role: str       # one of _ROLE_NAMES
    value: object   # the noun, place, time word, (verb, form) ...
    text: str       # as the user wrote it, for error messages
    particle: str = ""


def _parts(korean: str) -> list[_Part]:
    """Read the words of ``korean`` (written or tokenized) into roles, checking each particle."""
    words = KoreanTokenizer.words(korean)
    if not words:
        raise ValueError("translate_by_rule: the sentence is empty")
    tokens = [(token, i) for i, word in enumerate(words) for token in KOREAN_TOKENIZER.tokenize(word)]
    parts, k = [], 0

    def text(first: int, last: int) -> str:
        return " ".join(words[tokens[first][1]:tokens[last][1] + 1])

    while k < len(tokens):
        token = tokens[k][0]
        particle = tokens[k + 1][0] if k + 1 < len(tokens) else None
        noun_like = (token in ANIMATE_BY_WORD or token in THING_BY_WORD or token in PLACE_BY_WORD
                     or token + "에" in TIME_BY_WORD)
        if token in VERB_FORMS:
            parts.append(_Part("V", VERB_FORMS[token], text(k, k)))
        elif token == NEGATION:
            parts.append(_Part("N", None, text(k, k)))
        elif token in TIME_BY_WORD:
            parts.append(_Part("T", TIME_BY_WORD[token], text(k, k)))
        elif noun_like and particle in KOREAN_TOKENIZER.particles:
            parts.append(_noun_part(token, particle, text(k, k + 1)))
            k += 1
        elif token == "그리고":
            raise ValueError("translate_by_rule: '그리고' does not join clauses in this grammar; written Korean "
                             "joins them with the verb's -고 form: '고양이가 생선을 먹고 개가 물을 마셨다'")
        elif token == "그" and particle in ANIMATE_BY_WORD | THING_BY_WORD:
            raise ValueError(f"translate_by_rule: {text(k, k + 1)!r}: 그 is 'he' in this grammar, and it needs a "
                             "particle ('그가'); the determiner 그 ('that', as in 그 고양이 'that cat') is not in it")
        elif noun_like:
            raise ValueError(f"translate_by_rule: {text(k, k)!r} needs a particle, e.g. "
                             f"{' or '.join(repr(w) for w, (s, _) in KOREAN_TOKENIZER.splits.items() if s == token)}")
        else:
            hint = word_hint(text(k, k))
            raise ValueError(f"translate_by_rule: {text(k, k)!r} is not a word of the toy grammar"
                             + (f"; {hint}" if hint else ""))
        k += 1
    return parts


def _noun_part(noun: str, particle: str, text: str) -> _Part:
    """A noun with its particle: which role it plays, and whether the particle's form fits the noun."""
    roles = {"이": "S", "가": "S", "은": "S", "는": "S", "을": "O", "를": "O", "에": "G", "에서": "P"}
    role = roles[particle]
    if noun + "에" in TIME_BY_WORD and particle == "에":
        return _Part("T", TIME_BY_WORD[noun + "에"], text)
    if role == "S" and noun not in ANIMATE_BY_WORD:
        raise ValueError(f"translate_by_rule: {text!r}: only people and animals are subjects in this grammar")
    if role in "GP" and noun not in PLACE_BY_WORD:
        raise ValueError(f"translate_by_rule: {text!r}: {noun} is not a place of the grammar")
    if role == "O" and noun not in ANIMATE_BY_WORD and noun not in THING_BY_WORD:
        raise ValueError(f"translate_by_rule: {text!r}: {noun} is not an object of the grammar")
    pair = next(p for p in PARTICLES if particle in p.split("/"))
    written = with_particle(noun, pair)
    if KOREAN_TOKENIZER.splits[written][1] != particle:
        raise ValueError(f"translate_by_rule: {text!r} has the wrong form of {pair}; "
                         f"{noun} takes it as {written!r}")
    value = ANIMATE_BY_WORD.get(noun) if role == "S" else PLACE_BY_WORD.get(noun) if role in "GP" else noun
    return _Part(role, value, text, particle)


def parse_sentence(korean: str) -> Sentence:
    """Read a sentence of the toy grammar into its :class:`Sentence` structure.

    Args:
        korean: the sentence, written (``"고양이가 생선을 먹었다"``) or tokenized
            (``"고양이 가 생선 을 먹었다"``).

    Raises:
        ValueError: if ``korean`` is not a sentence of the grammar; the message
            names the offending word as written and says what was expected.
    """
    if not isinstance(korean, str):
        raise TypeError(f"translate_by_rule: korean must be a str, got {type(korean).__name__}")
    parts = _parts(korean)
    groups, current = [], []
    for part in parts:
        current.append(part)
        if part.role == "V":
            groups.append(current)
            current = []
    if current:
        raise ValueError(f"translate_by_rule: the sentence must end with a verb; "
                         f"nothing may follow {parts[-len(current) - 1].text!r}, got {current[0].text!r}"
                         if groups else f"translate_by_rule: no verb in {korean!r}; expected a verb such as '먹었다'")
    for i, group in enumerate(groups):
        verb_part = group[-1]
        kind = verb_part.value[1]
        if i < len(groups) - 1 and kind != "connective":
            raise ValueError(f"translate_by_rule: {verb_part.text!r} ends the sentence, but more follows; "
                             f"join the clauses with the -고 form {verb_part.value[0].connective!r}")
        if i == len(groups) - 1 and kind == "connective":
            raise ValueError(f"translate_by_rule: {verb_part.text!r} joins two clauses, so the sentence cannot "
                             f"end with it; end with {verb_part.value[0].present!r} or {verb_part.value[0].past!r}")
    tense = groups[-1][-1].value[1]
    clauses: list[Clause] = []
    for i, group in enumerate(groups):
        clause = _clause(group, first=i == 0, previous=clauses, tense=tense)
        clauses.append(clause)
    return Sentence(tuple(clauses), tense)


def _clause(group: list[_Part], first: bool, previous: list[Clause], tense: str) -> Clause:
    roles = "".join(p.role for p in group)
    allowed = _FIRST_CLAUSE if first else _LATER_CLAUSE
    where = " ".join(p.text for p in group)
    verb = group[-1].value[0]
    if "O" not in roles and "G" not in roles:
        need = "a place with 에 such as '학교에'" if verb.motion else "an object with 을/를 such as '생선을'"
        raise ValueError(f"translate_by_rule: in the clause {where!r}, {verb.korean} needs {need}; real Korean "
                         "leaves out an object the context makes clear, but this grammar always writes it")
    if first and "S" not in roles:
        raise ValueError(f"translate_by_rule: the clause {where!r} needs a subject such as '고양이가'; real "
                         "Korean leaves out a subject the context makes clear, but this grammar does so only "
                         "in a later clause, for the subject of the clause before")
    for k in range(len(roles)):
        if not any(r.startswith(roles[:k + 1]) for r in allowed):
            expected = sorted({r[k] for r in allowed if r.startswith(roles[:k]) and len(r) > k},
                              key="TSPOGNV".index)
            raise ValueError(f"translate_by_rule: in the clause {where!r}, {group[k].text!r} cannot come here; "
                             f"expected {' or '.join(_ROLE_NAMES[e] for e in expected)}")
    get = {p.role: p for p in group}
    verb, _ = get["V"].value
    subject_part, complement_part = get.get("S"), get.get("O") or get.get("G")
    if verb.motion != ("G" in get):
        need = "a place with 에 such as '학교에'" if verb.motion else "an object with 을/를 such as '생선을'"
        raise ValueError(f"translate_by_rule: in the clause {where!r}, {verb.korean} needs {need}, "
                         f"got {complement_part.text!r}")
    complement = complement_part.value.korean if verb.motion else complement_part.value
    if complement not in verb.english:
        known = "', '".join(with_particle(c, "에" if verb.motion else "을/를") for c in verb.english
                            if c in THING_BY_WORD or c in PLACE_BY_WORD)
        raise ValueError(f"translate_by_rule: {complement_part.text!r} does not go with {verb.korean} in this "
                         f"grammar" + (f"; it takes e.g. '{known}'" if known else ""))
    osv = roles.index("O") < roles.index("S") if "S" in get and "O" in get else False
    if osv and subject_part.particle in ("은", "는"):
        raise ValueError(f"translate_by_rule: after the fronted object {complement_part.text!r} the subject "
                         f"takes 이/가, not {subject_part.text!r}")
    subject = subject_part.value if subject_part else resolved_subject(previous)
    if subject_part and previous and subject.korean == resolved_subject(previous).korean:
        raise ValueError(f"translate_by_rule: {subject_part.text!r} repeats the previous clause's subject; "
                         "Korean leaves it out")
    problem = subject_problem(subject, verb, complement)
    if problem:
        culprit = complement_part if "cannot be subject and object" in problem else subject_part or get["V"]
        raise ValueError(f"translate_by_rule: {culprit.text!r}: {problem}")
    time = get["T"].value if "T" in get else None
    adverbial = get.get("T") or get.get("P")
    if verb.stative and adverbial:
        raise ValueError(f"translate_by_rule: {adverbial.text!r}: {verb.korean} is a state, which takes no time "
                         "or place adverbial in this grammar")
    place = get["P"].value if "P" in get else None
    if place and place.korean == complement:
        raise ValueError(f"translate_by_rule: {get['P'].text!r} with {complement_part.text!r} names the place "
                         "twice; this grammar leaves that clause out")
    if time and tense not in time.tenses:
        why = "; English's simple present does not take 'today'" if time.korean == "오늘" else ""
        raise ValueError(f"translate_by_rule: {get['T'].text!r} ({time.english}) needs the "
                         f"{time.tenses[0]} tense in this grammar, but the sentence is in the {tense}{why}")
    return Clause(subject_part.value if subject_part else None, verb, complement, "N" in get, time, place,
                  topic=bool(subject_part) and subject_part.particle in ("은", "는"), osv=osv)


def resolved_subject(clauses: Sequence[Clause]) -> Noun:
    """The subject in force after ``clauses``: the last one stated."""
    return next(c.subject for c in reversed(clauses) if c.subject)


def grammar_problem(korean: str) -> str | None:
    """Why ``korean`` is not a sentence of the grammar, or ``None`` when it is.

    The grammar's parser (:func:`parse_sentence`) reads the sentence; its
    message names the word as written and what was expected there. A model
    trained on the grammar still translates such a sentence, but nothing it
    learned covers it, so its output is a guess.

    ``grammar_problem("고양이가 생선을 먹었다") is None``;
    ``grammar_problem("고양이가 먹었다")`` says that 먹다 needs an object.
    """
    try:
        parse_sentence(korean)
    except ValueError as error:
        return str(error).removeprefix("translate_by_rule: ")
    return None


def grammar_spec() -> dict:
    """The grammar :func:`parse_sentence` reads, as JSON-ready data, for a checker outside Python.

    The book's live translator (Chapter 8) runs in the reader's browser,
    without Python: ``transformer_edu.translation.export`` writes this into its
    ``vocab.json``, and ``book/_static/live-translator.js`` checks a sentence
    against it as :func:`grammar_problem` does, with the same messages (a
    test compares the two on every kind of mistake). Keys:

    * ``particles``: each particle pair of :data:`PARTICLES` → the role of
      the noun it marks: ``S`` subject, ``O`` object, ``G`` place with 에,
      ``P`` place with 에서 (a time noun with 에, 밤에, is a time word);
    * ``animates`` (noun → ``{"person"}``), ``things`` (noun →
      ``{"for_people"}``), ``places``, ``times`` (as written → ``{"english",
      "tenses"}``) and ``negation`` (안);
    * ``verbs``: dictionary form → its ``present``, ``past`` and
      ``connective`` forms, its ``complements`` (the objects or places it
      takes, in order), ``motion``, ``people_only`` and ``stative``;
    * ``excluded_pairs``: the [subject, object] pairs no clause has;
    * ``clauses``: every role string a ``first`` and a ``later`` clause may
      have (T time word, S, P, O, G, N negation, V verb) and ``role_names``,
      what a message calls each role, in the order messages list them;
    * ``hints``: the tables of :func:`word_hint`, ``misspelled`` (너가 →
      네가) and ``polite`` (먹었어요 → 먹었다).

    How a noun is written with a particle is the tokenizer's table
    (:func:`korean_tokenizer_spec`), which the page has already.
    """
    roles = {}  # read off the parser itself: the role _noun_part gives each particle
    for word, (noun, particle) in KOREAN_TOKENIZER.splits.items():
        if noun + "에" not in TIME_BY_WORD:
            pair = next(p for p in PARTICLES if particle in p.split("/"))
            roles.setdefault(pair, _noun_part(noun, particle, word).role)
    return {
        "particles": {pair: roles[pair] for pair in PARTICLES},
        "animates": {n.korean: {"person": n.person} for n in ANIMATES},
        "things": {t.korean: {"for_people": t.for_people} for t in THINGS},
        "places": list(PLACE_BY_WORD),
        "times": {t.korean: {"english": t.english, "tenses": list(t.tenses)} for t in TIME_ADVERBIALS},
        "negation": NEGATION,
        "verbs": {v.korean: {"present": v.present, "past": v.past, "connective": v.connective,
                             "complements": list(v.english), "motion": v.motion, "people_only": v.people_only,
                             "stative": v.stative} for v in VERB_BY_WORD.values()},
        "excluded_pairs": [[s, o] for s in ANIMATE_BY_WORD for o in ANIMATE_BY_WORD if excluded_pair(s, o)],
        "clauses": {"first": sorted(_FIRST_CLAUSE), "later": sorted(_LATER_CLAUSE)},
        "role_names": dict(_ROLE_NAMES),
        "hints": {"misspelled": dict(MISSPELLINGS), "polite": dict(POLITE_TO_PLAIN)},
    }


def translate_by_rule(korean: str) -> str:
    """Translate a sentence of the toy grammar by rule: the ground truth of the task.

    Args:
        korean: one or more clauses joined by -고, written (``"고양이가 생선을 먹었다"``)
            or tokenized (``"고양이 가 생선 을 먹었다"``); subject–object–verb or
            object–subject–verb.

    Returns:
        The English translation, e.g. ``"the cat ate the fish"``; for
        ``"개를 고양이가 쫓았다"`` ``"the cat chased the dog"``.

    Raises:
        ValueError: if ``korean`` is not a sentence of the grammar; the message names the word.
    """
    return parse_sentence(korean).english()


def _rewrite(korean: str, change, natural: bool, what: str) -> str:
    sentence = parse_sentence(korean)
    clauses, changed = list(sentence.clauses), False
    for i, clause in enumerate(sentence.clauses):
        new = change(clause)
        if new is None:
            continue
        trial = Sentence(tuple(clauses[:i] + [new] + clauses[i + 1:]), sentence.tense)
        try:
            parse_sentence(trial.korean())  # still a sentence of the grammar (left-out subjects included)
        except ValueError:
            continue
        clauses[i], changed = new, True
    if not changed:
        raise ValueError(f"{what}: no clause of {korean!r} can be changed; it needs a subject and an "
                         "object" + (" that are both people or animals" if what == "swap_roles" else ""))
    result = Sentence(tuple(clauses), sentence.tense)
    return result.korean() if natural else result.tokenized()


def swap_roles(korean: str, *, natural: bool = False) -> str:
    """Swap the subject and object particles: who did what to whom is reversed.

    The nouns keep their places and trade particles, so 고양이가 개를 쫓았다
    ("the cat chased the dog") becomes 고양이를 개가 쫓았다 ("the dog chased the
    cat"): the word order of the nouns is the same, only the particles differ,
    and when both nouns take the same particle forms the bag of tokens is
    the same too. Every clause whose subject and object are people or
    animals (and stay a sentence of the grammar when swapped) is swapped.

    Args:
        korean: a sentence of the grammar, written or tokenized.
        natural: return written Korean instead of tokens.

    Raises:
        ValueError: if no clause can be swapped.
    """
    def change(clause: Clause) -> Clause | None:
        if clause.subject is None or clause.complement not in ANIMATE_BY_WORD or clause.verb.motion:
            return None
        osv = not clause.osv
        return clause._replace(subject=ANIMATE_BY_WORD[clause.complement], complement=clause.subject.korean,
                               osv=osv, topic=clause.topic and not osv)
    return _rewrite(korean, change, natural, "swap_roles")


def reorder(korean: str, order: str, *, natural: bool = False) -> str:
    """Put the object before the subject (``"OSV"``) or after it (``"SOV"``); the meaning stays.

    ``reorder("고양이가 개를 쫓았다", "OSV") == "개 를 고양이 가 쫓았다"``: Korean word
    order is free because the particles carry the roles, and the English is
    the same. A subject with the topic particle 은/는 takes 이/가 when the
    object moves in front of it.

    Args:
        korean: a sentence of the grammar, written or tokenized.
        order: ``"OSV"`` or ``"SOV"``.
        natural: return written Korean instead of tokens.

    Raises:
        ValueError: if no clause has both a subject and an object to reorder.
    """
    if order not in ("OSV", "SOV"):
        raise ValueError(f"reorder: order={order!r}; expected 'OSV' or 'SOV'")
    osv = order == "OSV"

    def change(clause: Clause) -> Clause | None:
        if clause.subject is None or clause.verb.motion or clause.osv == osv:
            return None
        return clause._replace(osv=osv, topic=clause.topic and not osv)
    return _rewrite(korean, change, natural, "reorder")


def bag_of_tokens(korean: str) -> str:
    """The sentence's tokens sorted: all that a bag-of-words model can know of it.

    ``bag_of_tokens("고양이가 개를 쫓았다") == "가 개 고양이 를 쫓았다"``: which
    particle went with which noun, and which noun with which clause, is
    gone; the words and their counts stay. Train and test a model on bags
    (``train_task(..., src_transform=bag_of_tokens)``) for Chapter 7's
    bag-of-words baseline. Sentences with the same tokens give the same
    bag: 고양이가 개를 쫓았다 and its role swap 고양이를 개가 쫓았다 ("the dog
    chased the cat") both give ``"가 개 고양이 를 쫓았다"``.

    Args:
        korean: a sentence, written or tokenized (it is tokenized first).
    """
    return " ".join(sorted(tokenize_korean(korean)))
