"""Data for the first training runs: two toy tasks, a vocabulary and batching.

Chapter 7 trains the whole Transformer for the first time, on data generated
here, offline and from a fixed seed:

* a **copy task** (``"7 3 9 1" -> "7 3 9 1"``) and its **reverse** twin
  (``"7 3 9 1" -> "1 9 3 7"``), the smallest problems that need attention;
* a **toy Korean→English translation task** generated from a small grammar in
  which word order matters: Korean subject–object–verb becomes English
  subject–verb–object, time and place adverbials move from the front to the
  end, and tense, negation (안), subject–verb agreement and two clauses joined
  by 그리고 / "and" all change the English.

Every task is a list of ``(source, target)`` string pairs whose tokens are
separated by single spaces, so one :class:`Vocab` and one :func:`make_batches`
serve them all, and :func:`load_tsv_pairs` brings your own sentence pairs into
the same shape.

Shape legend: B batch, S source length, T target length.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, NamedTuple, Sequence

import torch

Pair = tuple[str, str]

# --------------------------------------------------------------------------
# The copy task
# --------------------------------------------------------------------------


def copy_task_pairs(n: int, *, vocab_size: int = 10, min_len: int = 3, max_len: int = 8,
                    reverse: bool = False, seed: int = 0) -> list[Pair]:
    """``n`` distinct random digit sequences paired with their copy (or reverse).

    Args:
        n: number of pairs.
        vocab_size: number of symbols; the symbols are ``"0"`` … ``str(vocab_size - 1)``.
        min_len, max_len: each sequence has a uniformly drawn length in ``[min_len, max_len]``.
        reverse: if ``True``, the target is the source reversed.
        seed: seed of the random generator; the same seed gives the same pairs.

    Returns:
        A list of ``(source, target)`` pairs such as ``("7 3 9 1", "7 3 9 1")``.
    """
    for name, value, low in (("n", n, 0), ("vocab_size", vocab_size, 1), ("min_len", min_len, 1)):
        if not isinstance(value, int) or value < low:
            raise ValueError(f"copy_task_pairs: {name}={value!r}; expected an integer >= {low}")
    if not isinstance(max_len, int) or max_len < min_len:
        raise ValueError(f"copy_task_pairs: max_len={max_len!r}; expected an integer >= min_len={min_len}")
    possible = sum(vocab_size ** length for length in range(min_len, max_len + 1))
    if n > possible:
        raise ValueError(f"copy_task_pairs: n={n} but only {possible} distinct sequences exist "
                         f"with vocab_size={vocab_size}, lengths {min_len}..{max_len}")
    rng = random.Random(seed)
    sequences: dict[tuple[int, ...], None] = {}  # a dict keeps the order of drawing
    while len(sequences) < n:
        length = rng.randint(min_len, max_len)
        sequences.setdefault(tuple(rng.randrange(vocab_size) for _ in range(length)))
    pairs = []
    for seq in sequences:
        target = seq[::-1] if reverse else seq
        pairs.append((" ".join(map(str, seq)), " ".join(map(str, target))))
    return pairs


def copy_task_splits(seed: int = 0, *, n_train: int = 2000, n_valid: int = 200, n_test: int = 200,
                     **kwargs) -> dict[str, list[Pair]]:
    """Disjoint train / valid / test splits of :func:`copy_task_pairs`.

    Args:
        seed: seed of the random generator.
        n_train, n_valid, n_test: sizes of the splits.
        **kwargs: ``vocab_size``, ``min_len``, ``max_len``, ``reverse``, passed on.

    Returns:
        ``{"train": [...], "valid": [...], "test": [...]}``; no source occurs in two splits.
    """
    pairs = copy_task_pairs(n_train + n_valid + n_test, seed=seed, **kwargs)
    return {"train": pairs[:n_train],
            "valid": pairs[n_train:n_train + n_valid],
            "test": pairs[n_train + n_valid:]}


# --------------------------------------------------------------------------
# Korean particles: the choice depends on the final consonant (받침)
# --------------------------------------------------------------------------

PARTICLES = ("은/는", "이/가", "을/를")  # topic, subject, object: after a consonant / after a vowel


def has_batchim(word: str) -> bool:
    """Whether the last syllable of a Hangul ``word`` ends in a consonant (받침).

    A precomposed syllable has code point ``0xAC00 + (initial * 21 + vowel) * 28 + final``,
    where ``final == 0`` means "no final consonant". So 곰 (gom) → ``True``, 고양이 → ``False``.
    """
    if not isinstance(word, str) or not word or not "가" <= word[-1] <= "힣":
        raise ValueError(f"has_batchim: word={word!r}; expected a string ending in a Hangul syllable")
    return (ord(word[-1]) - ord("가")) % 28 != 0


def with_particle(noun: str, particle: str) -> str:
    """Attach a particle to ``noun`` in the form its last syllable asks for.

    Args:
        noun: a Korean noun such as ``"고양이"``.
        particle: one of :data:`PARTICLES`, e.g. ``"이/가"`` (first form after a consonant).

    Returns:
        The eojeol, e.g. ``with_particle("고양이", "이/가") == "고양이가"``,
        ``with_particle("생선", "을/를") == "생선을"``.
    """
    if particle not in PARTICLES:
        raise ValueError(f"with_particle: particle={particle!r}; expected one of {PARTICLES}")
    after_consonant, after_vowel = particle.split("/")
    return noun + (after_consonant if has_batchim(noun) else after_vowel)


# --------------------------------------------------------------------------
# The grammar of the toy translation task
# --------------------------------------------------------------------------


class Subject(NamedTuple):
    """A subject, with what English agreement and the Korean particle need."""
    korean: str            # the bare noun; the particle is added by rule
    english: str
    third_singular: bool   # "the cat eats" / "the cat does not eat"
    particle: str          # "은/는" (topic) for people, "이/가" (subject) for animals


class Noun(NamedTuple):
    """An object noun; it takes 을/를."""
    korean: str
    english: str


class Place(NamedTuple):
    """A place: the goal of a motion verb (학교에) or where something happens (학교에서)."""
    korean: str
    to: str   # where a motion verb goes (Korean ...에): "to school", "home"
    at: str   # where something happens (Korean ...에서): "at school", "in the park"


class Verb(NamedTuple):
    """A verb with its conjugated forms in both languages (irregular ones included)."""
    korean: str          # dictionary form, e.g. 먹다
    present: str         # plain declarative, e.g. 먹는다
    past: str            # e.g. 먹었다
    english: str         # base form: "eat"
    english_third: str   # "eats"
    english_past: str    # "ate"
    takes: tuple[str, ...]  # the objects it combines with; for a motion verb, the places


class TimeAdverbial(NamedTuple):
    """A time word; 어제 (yesterday) only goes with the past, 매일 (every day) with the present."""
    korean: str
    english: str
    tenses: tuple[str, ...]  # the tenses it goes with: "present", "past"


SUBJECTS = (
    Subject("나", "I", False, "은/는"),
    Subject("너", "you", False, "은/는"),
    Subject("우리", "we", False, "은/는"),
    Subject("그", "he", True, "은/는"),
    Subject("그녀", "she", True, "은/는"),
    Subject("그들", "they", False, "은/는"),
    Subject("민수", "Minsu", True, "은/는"),
    Subject("지민", "Jimin", True, "은/는"),
    Subject("선생님", "the teacher", True, "은/는"),
    Subject("학생들", "the students", False, "은/는"),
    Subject("고양이", "the cat", True, "이/가"),
    Subject("개", "the dog", True, "이/가"),
    Subject("곰", "the bear", True, "이/가"),
    Subject("토끼", "the rabbit", True, "이/가"),
    Subject("새들", "the birds", False, "이/가"),
)

OBJECTS = (
    Noun("생선", "the fish"), Noun("사과", "the apple"), Noun("빵", "the bread"),
    Noun("밥", "the rice"), Noun("물", "the water"), Noun("우유", "the milk"),
    Noun("차", "the tea"), Noun("책", "the book"), Noun("신문", "the newspaper"),
    Noun("편지", "the letter"), Noun("영화", "the movie"), Noun("꽃", "the flower"),
    Noun("공", "the ball"), Noun("그림", "the picture"),
)

PLACES = (
    Place("학교", "to school", "at school"),
    Place("집", "home", "at home"),
    Place("공원", "to the park", "in the park"),
    Place("시장", "to the market", "at the market"),
    Place("도서관", "to the library", "in the library"),
)

TRANSITIVE_VERBS = (
    Verb("먹다", "먹는다", "먹었다", "eat", "eats", "ate", ("생선", "사과", "빵", "밥")),
    Verb("마시다", "마신다", "마셨다", "drink", "drinks", "drank", ("물", "우유", "차")),
    Verb("읽다", "읽는다", "읽었다", "read", "reads", "read", ("책", "신문", "편지")),
    Verb("쓰다", "쓴다", "썼다", "write", "writes", "wrote", ("편지", "책")),
    Verb("보다", "본다", "봤다", "see", "sees", "saw", ("영화", "꽃", "그림", "공")),
    Verb("좋아하다", "좋아한다", "좋아했다", "like", "likes", "liked",
         ("생선", "사과", "빵", "우유", "차", "책", "영화", "꽃", "공", "그림")),
    Verb("사다", "산다", "샀다", "buy", "buys", "bought",
         ("생선", "사과", "빵", "우유", "책", "신문", "꽃", "공")),
    Verb("만들다", "만든다", "만들었다", "make", "makes", "made", ("빵", "밥", "차", "편지")),
    Verb("찾다", "찾는다", "찾았다", "find", "finds", "found", ("공", "책", "편지", "신문")),
    Verb("그리다", "그린다", "그렸다", "draw", "draws", "drew", ("그림", "꽃")),
)

_ALL_PLACES = tuple(p.korean for p in PLACES)
MOTION_VERBS = (
    Verb("가다", "간다", "갔다", "go", "goes", "went", _ALL_PLACES),
    Verb("오다", "온다", "왔다", "come", "comes", "came", _ALL_PLACES),
    Verb("달려가다", "달려간다", "달려갔다", "run", "runs", "ran", _ALL_PLACES),
)

TIME_ADVERBIALS = (
    TimeAdverbial("어제", "yesterday", ("past",)),
    TimeAdverbial("오늘", "today", ("present", "past")),
    TimeAdverbial("매일", "every day", ("present",)),
    TimeAdverbial("밤에", "at night", ("present", "past")),
)

NEGATION = "안"                      # Korean negates with 안 right before the verb
CONJUNCTION = ("그리고", "and")

RUNNING_EXAMPLES = (
    ("나는 학교에 간다", "I go to school"),
    ("고양이가 생선을 먹었다", "the cat ate the fish"),
)

_SUBJECT = {s.korean: s for s in SUBJECTS}
_OBJECT = {n.korean: n for n in OBJECTS}
_PLACE = {p.korean: p for p in PLACES}
_VERB = {v.korean: v for v in TRANSITIVE_VERBS + MOTION_VERBS}


class Clause(NamedTuple):
    """One clause: ``[time] [place에서] subject object|place에 [안] verb``."""
    subject: Subject
    verb: Verb
    complement: str                    # Korean object noun, or the place a motion verb goes to
    tense: str                         # "present" or "past"
    negated: bool = False
    time: TimeAdverbial | None = None
    place: Place | None = None         # where it happens; only with transitive verbs

    def korean(self) -> str:
        """Subject–object–verb, adverbials in front."""
        words = [self.time.korean] if self.time else []
        if self.place:
            words.append(self.place.korean + "에서")
        words.append(with_particle(self.subject.korean, self.subject.particle))
        if self.verb in MOTION_VERBS:
            words.append(self.complement + "에")
        else:
            words.append(with_particle(self.complement, "을/를"))
        if self.negated:
            words.append(NEGATION)
        words.append(self.verb.past if self.tense == "past" else self.verb.present)
        return " ".join(words)

    def english(self) -> str:
        """Subject–verb–object, adverbials at the end."""
        past, verb = self.tense == "past", self.verb
        if self.negated:  # do-support: "did not eat", "does not eat", "do not eat"
            aux = "did" if past else "does" if self.subject.third_singular else "do"
            verb_words = [aux, "not", verb.english]
        else:
            verb_words = [verb.english_past if past else
                          verb.english_third if self.subject.third_singular else verb.english]
        complement = (_PLACE[self.complement].to if verb in MOTION_VERBS
                      else _OBJECT[self.complement].english)
        words = [self.subject.english, *verb_words, complement]
        if self.place:  # adverbials go to the end: place before time
            words.append(self.place.at)
        if self.time:
            words.append(self.time.english)
        return " ".join(words)


def _render(clauses: Sequence[Clause]) -> Pair:
    korean, english = CONJUNCTION
    return (f" {korean} ".join(c.korean() for c in clauses),
            f" {english} ".join(c.english() for c in clauses))


_SUBJECT_WORDS = {with_particle(s.korean, s.particle): s for s in SUBJECTS}
_OBJECT_WORDS = {with_particle(n.korean, "을/를"): n.korean for n in OBJECTS}
_GOAL_WORDS = {p.korean + "에": p.korean for p in PLACES}
_PLACE_WORDS = {p.korean + "에서": p for p in PLACES}
_TIME_WORDS = {t.korean: t for t in TIME_ADVERBIALS}
_VERB_WORDS = {**{v.present: (v, "present") for v in _VERB.values()},
               **{v.past: (v, "past") for v in _VERB.values()}}


def _parse_clause(text: str) -> Clause:
    words = text.split()

    def take(table: dict, what: str, required: bool):
        if words and words[0] in table:
            return table[words.pop(0)]
        if required:
            got = repr(words[0]) if words else "the end of the clause"
            raise ValueError(f"translate_by_rule: in the clause {text!r} expected {what}, got {got}")
        return None

    time = take(_TIME_WORDS, "a time word", False)
    place = take(_PLACE_WORDS, "a place with 에서", False)
    subject = take(_SUBJECT_WORDS, "a subject such as '나는' or '고양이가'", True)
    complement = take({**_OBJECT_WORDS, **_GOAL_WORDS},
                      "an object such as '생선을' or a place such as '학교에'", True)
    negated = take({NEGATION: True}, NEGATION, False) or False
    verb, tense = take(_VERB_WORDS, "a verb such as '먹는다' or '갔다'", True)
    if words:
        raise ValueError(f"translate_by_rule: in the clause {text!r} expected nothing after the verb, "
                         f"got {words[0]!r}")
    if (complement in _PLACE) != (verb in MOTION_VERBS):
        raise ValueError(f"translate_by_rule: in the clause {text!r}, {verb.korean} needs "
                         f"{'a place with 에' if verb in MOTION_VERBS else 'an object with 을/를'}")
    return Clause(subject, verb, complement, tense, negated, time, place)


def translate_by_rule(korean: str) -> str:
    """Translate a sentence of the toy grammar by rule: the ground truth of the task.

    Args:
        korean: one or two clauses joined by 그리고, words separated by spaces.

    Returns:
        The English translation, e.g. ``"the cat ate the fish"`` for ``"고양이가 생선을 먹었다"``.

    Raises:
        ValueError: if ``korean`` is not a sentence of the grammar; the message names the word.
    """
    if not isinstance(korean, str):
        raise TypeError(f"translate_by_rule: korean must be a str, got {type(korean).__name__}")
    clauses = korean.split(f" {CONJUNCTION[0]} ")
    return _render([_parse_clause(c) for c in clauses])[1]


# --------------------------------------------------------------------------
# Sampling the splits: held-out compositions
# --------------------------------------------------------------------------

Triple = tuple[str, str, str]  # (subject, verb, object or place), Korean dictionary forms


def _all_triples() -> list[Triple]:
    return [(s.korean, v.korean, c) for s in SUBJECTS for v in _VERB.values() for c in v.takes]


def held_out_compositions(seed: int = 0, fraction: float = 0.1) -> dict[str, list[Triple]]:
    """The subject–verb–object (or subject–verb–place) triples kept out of training.

    A share ``fraction`` of all triples is held out, half for valid and half for
    test. Every word still occurs in training, in other combinations; a valid or
    test sentence always contains one of its split's triples. The running
    examples' triples (나, 가다, 학교) and (고양이, 먹다, 생선) are always test triples.

    Returns:
        ``{"valid": [...], "test": [...]}``, each a list of ``(subject, verb, complement)``.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"held_out_compositions: fraction={fraction!r}; expected 0 < fraction < 1")
    forced = [("나", "가다", "학교"), ("고양이", "먹다", "생선")]
    rest = [t for t in _all_triples() if t not in forced]
    random.Random(seed).shuffle(rest)
    n_valid = round(fraction * len(rest)) // 2
    return {"valid": rest[:n_valid], "test": forced + rest[n_valid:2 * n_valid - len(forced)]}


def _sample_clause(rng: random.Random, triples: Sequence[Triple], adverbials: bool) -> Clause:
    subject, verb, complement = rng.choice(triples)
    clause = Clause(_SUBJECT[subject], _VERB[verb], complement,
                    tense=rng.choice(("present", "past")), negated=rng.random() < 0.3)
    if adverbials and rng.random() < 0.4:
        clause = clause._replace(time=rng.choice([t for t in TIME_ADVERBIALS if clause.tense in t.tenses]))
    if adverbials and clause.verb not in MOTION_VERBS and rng.random() < 0.3:
        clause = clause._replace(place=rng.choice(PLACES))
    return clause


def _sample_split(rng: random.Random, n: int, must: list[Triple], others: list[Triple],
                  compound_prob: float, first: Sequence[Pair] = ()) -> list[Pair]:
    """``n`` distinct sentences, each with a clause from ``must``; a second clause may use ``others``."""
    pairs = dict.fromkeys(first)  # a dict keeps the order of drawing
    for _ in range(100 * n):
        if len(pairs) >= n:
            return list(pairs)
        compound = rng.random() < compound_prob  # compound sentences carry no adverbials
        clauses = [_sample_clause(rng, must, adverbials=not compound)]
        if compound:
            clauses.append(_sample_clause(rng, must + others, adverbials=False))
            rng.shuffle(clauses)
        pairs.setdefault(_render(clauses))
    raise ValueError(f"toy_translation_splits: could not draw {n} distinct sentences; ask for fewer")


def toy_translation_splits(seed: int = 0, *, n_train: int = 6000, n_valid: int = 300, n_test: int = 300,
                           compound_prob: float = 0.2, held_out_fraction: float = 0.1
                           ) -> dict[str, list[Pair]]:
    """Korean→English sentence pairs from the toy grammar, split by held-out composition.

    Args:
        seed: seed of the random generator; the same seed gives the same splits.
        n_train, n_valid, n_test: number of distinct pairs in each split.
        compound_prob: share of sentences made of two clauses joined by 그리고 / "and".
        held_out_fraction: share of the triples kept out of train (see :func:`held_out_compositions`).

    Returns:
        ``{"train": [...], "valid": [...], "test": [...]}`` of ``(korean, english)`` pairs.
        Valid and test sentences each contain a triple of :func:`held_out_compositions`
        that train never shows, so the three splits are disjoint. The test split
        starts with :data:`RUNNING_EXAMPLES`.
    """
    for name, value in (("n_train", n_train), ("n_valid", n_valid), ("n_test", n_test)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"toy_translation_splits: {name}={value!r}; expected an integer >= 1")
    if not 0 <= compound_prob <= 1:
        raise ValueError(f"toy_translation_splits: compound_prob={compound_prob!r}; expected 0 <= p <= 1")
    held = held_out_compositions(seed, held_out_fraction)
    train = [t for t in _all_triples() if t not in held["valid"] and t not in held["test"]]
    rng = random.Random(seed)
    return {"train": _sample_split(rng, n_train, train, [], compound_prob),
            "valid": _sample_split(rng, n_valid, held["valid"], train, compound_prob),
            "test": _sample_split(rng, n_test, held["test"], train, compound_prob, first=RUNNING_EXAMPLES)}


# --------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------


class Vocab:
    """A word-level vocabulary: whitespace tokens ↔ integer ids.

    Ids 0–3 are the specials ``<pad>`` (0), ``<bos>``, ``<eos>``, ``<unk>``; the
    other tokens follow in the order given (:meth:`build`: most frequent first).

    Args:
        tokens: the ordinary tokens, in id order, without the specials.
    """

    SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")
    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3

    def __init__(self, tokens: Sequence[str]):
        tokens = list(tokens)
        for token in tokens:
            if not isinstance(token, str) or not token or token != token.strip() or len(token.split()) != 1:
                raise ValueError(f"Vocab: token {token!r} is not a single non-empty whitespace-free string")
        clashes = set(tokens) & set(self.SPECIALS)
        if clashes or len(set(tokens)) != len(tokens):
            duplicate = sorted(clashes) or [t for t, c in Counter(tokens).items() if c > 1]
            raise ValueError(f"Vocab: tokens must be unique and not special; offending: {duplicate}")
        self.itos: list[str] = [*self.SPECIALS, *tokens]
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: Sequence[str], min_freq: int = 1) -> Vocab:
        """Collect the tokens of ``sentences`` that occur at least ``min_freq`` times.

        Ids are given by decreasing frequency, ties broken alphabetically, so the
        same sentences always give the same vocabulary.
        """
        if not isinstance(min_freq, int) or min_freq < 1:
            raise ValueError(f"Vocab.build: min_freq={min_freq!r}; expected an integer >= 1")
        counts: Counter[str] = Counter()
        for i, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise TypeError(f"Vocab.build: sentences[{i}] is a {type(sentence).__name__}, expected a str "
                                "(for pairs, build one vocabulary per side: [src for src, _ in pairs])")
            counts.update(sentence.split())
        kept = [t for t, c in counts.items() if c >= min_freq and t not in cls.SPECIALS]
        return cls(sorted(kept, key=lambda t: (-counts[t], t)))

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {' '.join(self.itos[:8])}{' …' if len(self) > 8 else ''})"

    def unknown_tokens(self, sentence: str) -> list[str]:
        """The distinct tokens of ``sentence`` not in the vocabulary, in order of appearance."""
        return list(dict.fromkeys(t for t in sentence.split() if t not in self.stoi))

    def encode(self, sentence: str, add_bos: bool = False, add_eos: bool = True,
               strict: bool = False) -> list[int]:
        """Split ``sentence`` on whitespace and map each token to its id.

        Args:
            sentence: the text.
            add_bos, add_eos: put ``<bos>`` in front / ``<eos>`` at the end.
            strict: if ``True``, unknown tokens raise ``ValueError`` naming them;
                otherwise they map to ``unk_id``.
        """
        if not isinstance(sentence, str):
            raise TypeError(f"Vocab.encode: sentence must be a str, got {type(sentence).__name__}")
        if strict and (unknown := self.unknown_tokens(sentence)):
            raise ValueError(f"Vocab.encode: unknown tokens {unknown} in {sentence!r}")
        ids = [self.stoi.get(t, self.unk_id) for t in sentence.split()]
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids: Sequence[int] | torch.Tensor, strip_specials: bool = True) -> str:
        """Map ids back to a space-separated string.

        With ``strip_specials=True`` (the default), stop at the first ``<eos>`` and
        drop ``<pad>`` and ``<bos>``; ``<unk>`` is kept, so unknown words stay visible.
        With ``False``, every id is shown.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"Vocab.decode: ids has shape {tuple(ids.shape)}; expected (L,)")
            ids = ids.tolist()
        tokens = []
        for i in ids:
            if not 0 <= i < len(self.itos):
                raise ValueError(f"Vocab.decode: id {i!r} is outside the vocabulary of size {len(self)}")
            if strip_specials and i == self.eos_id:
                break
            if not (strip_specials and i in (self.pad_id, self.bos_id)):
                tokens.append(self.itos[i])
        return " ".join(tokens)

    def to_dict(self) -> dict[str, list[str]]:
        """A JSON-serialisable description, for checkpoints: ``{"itos": [...]}``."""
        return {"itos": list(self.itos)}

    @classmethod
    def from_dict(cls, state: dict) -> Vocab:
        """Rebuild a vocabulary saved by :meth:`to_dict`."""
        itos = state.get("itos") if isinstance(state, dict) else None
        if not isinstance(itos, list) or tuple(itos[:4]) != cls.SPECIALS:
            raise ValueError(f"Vocab.from_dict: expected {{'itos': [{', '.join(cls.SPECIALS)}, ...]}}, "
                             f"got {str(state)[:80]}")
        return cls(itos[4:])


# --------------------------------------------------------------------------
# Batching with padding
# --------------------------------------------------------------------------


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int, device: torch.device | str | None = None
              ) -> torch.Tensor:
    """Stack id sequences of different lengths into one tensor, padding on the right.

    Shape:
        Returns a ``LongTensor`` of shape ``(B, L)``, ``L`` the longest sequence.
    """
    if len(sequences) == 0:
        raise ValueError("pad_batch: sequences is empty; expected at least one sequence")
    if not isinstance(pad_id, int):
        raise TypeError(f"pad_batch: pad_id={pad_id!r}; expected an int")
    length = max(len(s) for s in sequences)
    batch = torch.full((len(sequences), length), pad_id, dtype=torch.long)  # (B, L)
    for row, seq in enumerate(sequences):
        batch[row, :len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
    return batch.to(device) if device is not None else batch


@dataclass
class Batch:
    """One batch for teacher forcing.

    Attributes:
        src: ``(B, S)`` source ids, each sentence ending in ``<eos>``, then ``<pad>``.
        tgt_in: ``(B, T)`` decoder input ``<bos> y1 … yn``, then ``<pad>``.
        tgt_out: ``(B, T)`` what the decoder must predict ``y1 … yn <eos>``, then ``<pad>``:
            ``tgt_in`` shifted left by one.
        n_tokens: number of non-pad positions in ``tgt_out``, to average the loss per token.
    """
    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    n_tokens: int

    def to(self, device: torch.device | str) -> Batch:
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device), self.n_tokens)


def make_batches(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int, *,
                 shuffle: bool = False, seed: int = 0, sort_by_length: bool = False,
                 device: torch.device | str | None = None, strict: bool = False) -> Iterator[Batch]:
    """Encode ``(source, target)`` pairs and yield padded :class:`Batch` es.

    Args:
        pairs: ``(source, target)`` strings.
        src_vocab, tgt_vocab: vocabularies of each side.
        batch_size: pairs per batch; the last batch may be smaller.
        shuffle: shuffle the order (pass a new ``seed`` each epoch for a new order).
        seed: seed of the shuffle.
        sort_by_length: group pairs of similar length, so batches carry less padding;
            with ``shuffle`` the batches still come in random order.
        device: where to put the tensors.
        strict: raise ``ValueError`` on unknown tokens instead of mapping them to ``<unk>``.

    Returns:
        An iterator of :class:`Batch`; the arguments are checked and the pairs
        encoded when it is created.
    """
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"make_batches: batch_size={batch_size!r}; expected an integer >= 1")
    if not isinstance(src_vocab, Vocab) or not isinstance(tgt_vocab, Vocab):
        raise TypeError(f"make_batches: src_vocab and tgt_vocab must be Vocab, got "
                        f"{type(src_vocab).__name__} and {type(tgt_vocab).__name__}")
    if len(pairs) == 0:
        raise ValueError("make_batches: pairs is empty; expected at least one (source, target) pair")
    encoded = []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            raise ValueError(f"make_batches: pairs[{i}]={pair!r}; expected a (source, target) pair of str")
        encoded.append((src_vocab.encode(pair[0], strict=strict),
                        tgt_vocab.encode(pair[1], add_eos=False, strict=strict)))

    order = list(range(len(encoded)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(order)
    if sort_by_length:  # a stable sort keeps the shuffled order among equal lengths
        order.sort(key=lambda i: (len(encoded[i][0]), len(encoded[i][1])))
    chunks = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    if shuffle and sort_by_length:
        rng.shuffle(chunks)

    def batches() -> Iterator[Batch]:
        for chunk in chunks:
            targets = [encoded[i][1] for i in chunk]
            tgt_out = pad_batch([t + [tgt_vocab.eos_id] for t in targets], tgt_vocab.pad_id, device)  # (B, T)
            yield Batch(src=pad_batch([encoded[i][0] for i in chunk], src_vocab.pad_id, device),      # (B, S)
                        tgt_in=pad_batch([[tgt_vocab.bos_id] + t for t in targets], tgt_vocab.pad_id, device),
                        tgt_out=tgt_out,
                        n_tokens=sum(len(t) + 1 for t in targets))

    return batches()


# --------------------------------------------------------------------------
# Your own sentence pairs
# --------------------------------------------------------------------------


def load_tsv_pairs(path: str | Path, *, src_col: int = 0, tgt_col: int = 1,
                   skip_header: bool = False) -> list[Pair]:
    """Read ``(source, target)`` pairs from a UTF-8 tab-separated file.

    Args:
        path: the file; empty lines are skipped.
        src_col, tgt_col: the 0-based columns holding the source and the target.
        skip_header: ignore the first line.

    Returns:
        A list of ``(source, target)`` pairs with surrounding whitespace removed.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        ValueError: if a line has too few tab-separated columns or an empty field; the
            message gives the line number.
    """
    for name, value in (("src_col", src_col), ("tgt_col", tgt_col)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"load_tsv_pairs: {name}={value!r}; expected an integer >= 0")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"load_tsv_pairs: no file at {str(path)!r}")
    needed = max(src_col, tgt_col) + 1
    pairs = []
    with path.open(encoding="utf-8-sig") as f:  # -sig: tolerate a byte-order mark
        for number, line in enumerate(f, start=1):
            if (number == 1 and skip_header) or not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < needed:
                raise ValueError(f"load_tsv_pairs: line {number} of {str(path)!r} has {len(fields)} "
                                 f"column(s); expected at least {needed} separated by tabs: "
                                 f"{line.strip()[:60]!r}")
            src, tgt = fields[src_col].strip(), fields[tgt_col].strip()
            if not src or not tgt:
                raise ValueError(f"load_tsv_pairs: line {number} of {str(path)!r} has an empty "
                                 f"{'source' if not src else 'target'}: {line.strip()[:60]!r}")
            pairs.append((src, tgt))
    return pairs
