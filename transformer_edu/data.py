"""Data for the first training runs: toy tasks, a vocabulary and batching.

Chapter 7 trains the whole Transformer for the first time, on data generated
here, offline and from a fixed seed:

* a **copy task** (``"7 3 9 1" -> "7 3 9 1"``) and its **reverse** twin
  (``"7 3 9 1" -> "1 9 3 7"``), the smallest problems that need attention;
* a **toy Korean→English translation task** generated from a small grammar
  that cannot be solved by looking words up. People and animals are both
  subjects and objects (고양이가 개를 쫓았다 "the cat chased the dog", 개가
  고양이를 쫓았다 "the dog chased the cat"), so only the case particles
  (이/가, 을/를, …) say who did what to whom; the particles are separate tokens
  (``고양이 가 개 를 쫓았다``) that the model must read, and a share of the
  sentences put the object first (개를 고양이가 쫓았다, the same English).
  Subject–object–verb becomes subject–verb–object, adverbials move to the
  end, tense, negation (안) and agreement change the English, the English verb
  of 쓰다 and 짓다 depends on the object (편지를 쓰다 "write", 모자를 쓰다
  "wear", 돈을 쓰다 "spend"), and two clauses join with the connective -고,
  whose clause takes its tense from the last verb.

Every task is a list of ``(source, target)`` string pairs whose tokens are
separated by single spaces, so one :class:`Vocab` and one :func:`make_batches`
serve them all, and :func:`load_tsv_pairs` brings your own sentence pairs into
the same shape. The Korean side is stored as tokens; :func:`tokenize_korean`
and :func:`detokenize_korean` convert between them and written Korean.

Shape legend: B batch, S source length, T target length.
"""
from __future__ import annotations

import random
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from types import MappingProxyType
from typing import Iterator, Mapping, NamedTuple, Sequence

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
# Korean particles: the form depends on the final consonant (받침)
# --------------------------------------------------------------------------

PARTICLES = ("이/가", "은/는", "을/를", "에", "에서")
"""The particles of the toy grammar. "A/B" takes A after a consonant, B after a vowel.

이/가 marks the subject and 은/는 the topic (see :class:`Clause`); 을/를 marks
the object; 에 where one goes (학교에 "to school") or when (밤에 "at night");
에서 where something happens (공원에서 "in the park").
"""

# 나 + 가 and 너 + 가 are not 나가 and 너가 but 내가 and 네가.
_IRREGULAR = {("나", "이/가"): "내가", ("너", "이/가"): "네가"}


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
        The written word (eojeol), e.g. ``with_particle("고양이", "이/가") == "고양이가"``,
        ``with_particle("곰", "이/가") == "곰이"``, ``with_particle("생선", "을/를") == "생선을"``,
        and the two irregular pronouns ``with_particle("나", "이/가") == "내가"``, ``"네가"``.
    """
    if particle not in PARTICLES:
        raise ValueError(f"with_particle: particle={particle!r}; expected one of {PARTICLES}")
    batchim = has_batchim(noun)  # also checks that noun is Hangul
    if (noun, particle) in _IRREGULAR:
        return _IRREGULAR[noun, particle]
    after_consonant, _, after_vowel = particle.partition("/")
    return noun + (after_consonant if batchim or not after_vowel else after_vowel)


# --------------------------------------------------------------------------
# The words of the toy grammar
# --------------------------------------------------------------------------


class Noun(NamedTuple):
    """A person or an animal: the subject or the object of a clause."""
    korean: str            # the bare noun; particles are added by rule
    english: str           # as a subject: "I", "the cat"
    english_object: str    # as an object: "me", "the cat"
    third_singular: bool   # agreement: "the cat eats", "I eat", "the birds eat"
    person: bool           # only people read, write, buy, cook, ...
    plural: bool = False   # more than one: "we wore hats", not "we wore the hat"


class Thing(NamedTuple):
    """A thing: only ever an object."""
    korean: str
    english: str
    for_people: bool       # books, money, hats, ...: only a person reads, spends, wears them
    generic: str = ""      # the kind, not one of them, after a verb of liking: "likes milk", "likes books"


class EnglishVerb(NamedTuple):
    """An English verb in the three forms the grammar needs."""
    base: str              # "eat", "wait for": also after "do not" / "did not"
    third: str             # "eats", "waits for"
    past: str              # "ate", "waited for"


class Verb(NamedTuple):
    """A Korean verb, its conjugated forms and its English translation per complement."""
    korean: str            # dictionary form: 먹다
    present: str           # plain present, ends a sentence: 먹는다
    past: str              # 먹었다
    connective: str        # -고 form, joins the clause to the next one: 먹고
    english: dict          # complement (object or place, Korean) -> EnglishVerb
    motion: bool = False   # the complement is a place with 에 (학교에), not an object with 을/를
    people_only: bool = False
    stative: bool = False  # a state (like), not an event: no time or place adverbial
    objects: Mapping[str, str] | None = None         # object -> its English with this verb: 밥 eaten is "the meal"
    plural_objects: Mapping[str, str] | None = None  # ... when the subject is plural: "we wore hats"

    def object_english(self, complement: str, subject: Noun) -> str:
        """The English of the object ``complement`` (Korean) with this verb and ``subject``.

        Mostly the noun's own English ("the fish", "the cat"); a verb of
        liking takes the kind (고양이가 우유를 좋아한다 "the cat likes milk"), and
        a few pairs read better otherwise (밥을 먹다 "eat the meal", not "the
        rice"; 우리가 모자를 썼다 "we wore hats").
        """
        if complement in _ANIMATE:
            return _ANIMATE[complement].english_object
        if subject.plural and complement in (self.plural_objects or {}):
            return self.plural_objects[complement]
        if complement in (self.objects or {}):
            return self.objects[complement]
        thing = _THING[complement]
        return thing.generic if self.stative and thing.generic else thing.english


class Place(NamedTuple):
    """A place: the goal of a motion verb (학교에) or where something happens (학교에서)."""
    korean: str
    to: str                # where a motion verb goes (Korean ...에): "to school", "home"
    at: str                # where something happens (Korean ...에서): "at school", "in the park"


class TimeAdverbial(NamedTuple):
    """A time word; 어제 (yesterday) only goes with the past, 매일 (every day) with the present."""
    korean: str            # as written: 어제, 밤에
    english: str
    tenses: tuple[str, ...]


ANIMATES = (
    Noun("나", "I", "me", False, True),
    Noun("너", "you", "you", False, True),
    Noun("우리", "we", "us", False, True, plural=True),
    Noun("그", "he", "him", True, True),
    Noun("그녀", "she", "her", True, True),
    Noun("그들", "they", "them", False, True, plural=True),
    Noun("민수", "Minsu", "Minsu", True, True),
    Noun("지민", "Jimin", "Jimin", True, True),
    Noun("아이", "the child", "the child", True, True),
    Noun("아이들", "the children", "the children", False, True, plural=True),
    Noun("고양이", "the cat", "the cat", True, False),
    Noun("개", "the dog", "the dog", True, False),
    Noun("곰", "the bear", "the bear", True, False),
    Noun("토끼", "the rabbit", "the rabbit", True, False),
    Noun("여우", "the fox", "the fox", True, False),
    Noun("쥐", "the mouse", "the mouse", True, False),
    Noun("새들", "the birds", "the birds", False, False, plural=True),
)
"""People and animals; each is a possible subject and a possible object."""

THINGS = (
    Thing("생선", "the fish", False, "fish"), Thing("사과", "the apple", False, "apples"),
    Thing("빵", "the bread", False, "bread"), Thing("밥", "the rice", False, "rice"),
    Thing("물", "the water", False), Thing("우유", "the milk", False, "milk"),
    Thing("주스", "the juice", False), Thing("꽃", "the flower", False, "flowers"), Thing("공", "the ball", False),
    Thing("책", "the book", True, "books"), Thing("신문", "the newspaper", True), Thing("편지", "the letter", True),
    Thing("모자", "the hat", True), Thing("돈", "the money", True), Thing("영화", "the movie", True, "movies"),
    Thing("노래", "the song", True), Thing("집", "the house", True),
)
"""Objects that are never subjects. 집 is "the house" as an object (집을 짓다 "build the
house") and "home" as a place (집에 가다 "go home"): the particle decides. ``generic``
is the kind, which a verb of liking takes: 곰이 우유를 좋아했다 "the bear liked milk"."""

PLACES = (
    Place("학교", "to school", "at school"),
    Place("집", "home", "at home"),
    Place("공원", "to the park", "in the park"),
    Place("시장", "to the market", "at the market"),
    Place("도서관", "to the library", "in the library"),
)

TIME_ADVERBIALS = (
    TimeAdverbial("어제", "yesterday", ("past",)),
    TimeAdverbial("오늘", "today", ("past",)),  # English's simple present does not take "today"
    TimeAdverbial("매일", "every day", ("present",)),  # with 안: "never", see Clause.english_words
    TimeAdverbial("아침에", "in the morning", ("present", "past")),
    TimeAdverbial("밤에", "at night", ("present", "past")),
)


def _senses(english: EnglishVerb, complements: Sequence[str]) -> dict:
    return dict.fromkeys(complements, english)


_WHO = tuple(n.korean for n in ANIMATES)
_FOOD = ("생선", "사과", "빵", "밥")
_DRINKS = ("물", "우유", "주스")
_PLACE_NAMES = tuple(p.korean for p in PLACES)

TRANSITIVE_VERBS = (
    # people and animals on both sides: only the particles tell who did what to whom
    Verb("쫓다", "쫓는다", "쫓았다", "쫓고", _senses(EnglishVerb("chase", "chases", "chased"), _WHO)),
    Verb("잡다", "잡는다", "잡았다", "잡고", _senses(EnglishVerb("catch", "catches", "caught"), _WHO + ("공",))),
    Verb("돕다", "돕는다", "도왔다", "돕고", _senses(EnglishVerb("help", "helps", "helped"), _WHO)),  # ㅂ-irregular
    Verb("만나다", "만난다", "만났다", "만나고", _senses(EnglishVerb("meet", "meets", "met"), _WHO)),
    Verb("기다리다", "기다린다", "기다렸다", "기다리고",
         _senses(EnglishVerb("wait for", "waits for", "waited for"), _WHO)),
    Verb("따라가다", "따라간다", "따라갔다", "따라가고", _senses(EnglishVerb("follow", "follows", "followed"), _WHO)),
    Verb("보다", "본다", "봤다", "보고", {**_senses(EnglishVerb("see", "sees", "saw"), _WHO),  # the object decides
                                    "영화": EnglishVerb("watch", "watches", "watched")}),
    Verb("좋아하다", "좋아한다", "좋아했다", "좋아하고",
         _senses(EnglishVerb("like", "likes", "liked"), _WHO + _FOOD + ("우유", "꽃", "책", "영화")), stative=True),
    # things
    Verb("먹다", "먹는다", "먹었다", "먹고", _senses(EnglishVerb("eat", "eats", "ate"), _FOOD),
         objects={"밥": "the meal"}),  # 밥을 먹다 is to have a meal
    Verb("마시다", "마신다", "마셨다", "마시고", _senses(EnglishVerb("drink", "drinks", "drank"), _DRINKS)),
    Verb("읽다", "읽는다", "읽었다", "읽고", _senses(EnglishVerb("read", "reads", "read"), ("책", "신문", "편지")),
         people_only=True),
    Verb("쓰다", "쓴다", "썼다", "쓰고", {"편지": EnglishVerb("write", "writes", "wrote"),  # the object decides
                                    "모자": EnglishVerb("wear", "wears", "wore"),
                                    "돈": EnglishVerb("spend", "spends", "spent")}, people_only=True,
         plural_objects={"모자": "hats"}),
    Verb("짓다", "짓는다", "지었다", "짓고", {"밥": EnglishVerb("cook", "cooks", "cooked"),  # ㅅ-irregular
                                      "집": EnglishVerb("build", "builds", "built")}, people_only=True),
    Verb("사다", "산다", "샀다", "사고", _senses(EnglishVerb("buy", "buys", "bought"),
                                         ("사과", "빵", "생선", "우유", "꽃", "공", "책", "신문", "모자")),
         people_only=True),
    Verb("만들다", "만든다", "만들었다", "만들고", _senses(EnglishVerb("make", "makes", "made"),  # ㄹ drops: 만든다
                                              ("빵", "주스", "모자")), people_only=True),
    Verb("부르다", "부른다", "불렀다", "부르고", {**_senses(EnglishVerb("call", "calls", "called"), _WHO),  # 르-irregular
                                          "노래": EnglishVerb("sing", "sings", "sang")}, people_only=True),
)

MOTION_VERBS = (
    Verb("가다", "간다", "갔다", "가고", _senses(EnglishVerb("go", "goes", "went"), _PLACE_NAMES), motion=True),
    Verb("오다", "온다", "왔다", "오고", _senses(EnglishVerb("come", "comes", "came"), _PLACE_NAMES), motion=True),
    Verb("달려가다", "달려간다", "달려갔다", "달려가고", _senses(EnglishVerb("run", "runs", "ran"), _PLACE_NAMES),
         motion=True),
)

NEGATION = "안"  # Korean negates with 안 right before the verb: 안 먹었다 "did not eat"

RUNNING_EXAMPLES = (
    ("나는 학교에 간다", "I go to school"),
    ("고양이가 생선을 먹었다", "the cat ate the fish"),
)
"""The book's two running examples, as a learner types them."""

_ANIMATE = {n.korean: n for n in ANIMATES}
_THING = {t.korean: t for t in THINGS}
_PLACE = {p.korean: p for p in PLACES}
_VERB = {v.korean: v for v in TRANSITIVE_VERBS + MOTION_VERBS}
_TIME = {t.korean: t for t in TIME_ADVERBIALS}
_FORMS = {form: (verb, kind) for verb in _VERB.values()
          for form, kind in ((verb.present, "present"), (verb.past, "past"), (verb.connective, "connective"))}


def _excluded_pair(subject: str, obj: str) -> bool:
    """Pairs the grammar leaves out: someone acting on themselves ("I saw me", "we saw me")."""
    return subject == obj or {subject, obj} == {"나", "우리"}


def _subject_problem(subject: Noun, verb: Verb, complement: str) -> str | None:
    for_people = not verb.motion and complement in _THING and _THING[complement].for_people
    if (verb.people_only or for_people) and not subject.person:
        what = f"{verb.korean}" if verb.people_only else f"{complement}"
        return f"only people go with {what} in this grammar, not {subject.korean}"
    if not verb.motion and _excluded_pair(subject.korean, complement):
        return f"{subject.korean} and {complement} cannot be subject and object of one clause"
    return None


def _plain_to_polite(verb: Verb) -> dict[str, str]:
    """The polite forms of ``verb``'s present and past (-어요 and -습니다 styles) → its plain form."""
    def drop_final(syllable: str) -> str:  # 었 → 어, 갔 → 가: take the ㅆ off the past stem
        return chr(ord(syllable) - (ord(syllable) - 0xAC00) % 28)

    stem, past_stem = verb.korean[:-1], verb.past[:-1]
    present_stem = past_stem[:-1] + drop_final(past_stem[-1])  # 먹었 → 먹어, 봤 → 봐, 도왔 → 도와
    last = stem[-1]
    final = (ord(last) - 0xAC00) % 28
    if final == 8:  # ㄹ drops before ㅂ니다: 만들다 → 만듭니다
        formal = stem[:-1] + chr(ord(last) - 8 + 17) + "니다"
    elif final:
        formal = stem + "습니다"
    else:
        formal = stem[:-1] + chr(ord(last) + 17) + "니다"  # 가 → 갑
    return {present_stem + "요": verb.present, formal: verb.present,
            past_stem + "어요": verb.past, past_stem + "습니다": verb.past}


_POLITE = {polite: plain for verb in TRANSITIVE_VERBS + MOTION_VERBS
           for polite, plain in _plain_to_polite(verb).items()}
_MISSPELLED = {"너가": "네가", "나가": "내가"}  # 너 and 나 take 가 as 네가 and 내가


def word_hint(word: str) -> str | None:
    """Why ``word`` (as written) is not a word of the grammar, when a rule can tell; else ``None``.

    Two cases a learner meets first: 너가 and 나가, which written Korean
    spells 네가 and 내가, and the polite styles (먹었어요, 먹었습니다), which
    the grammar lacks: it has the plain written style only (먹었다), the
    register of books and newspapers.

    ``word_hint("너가")`` → ``"write '네가': 너 with 가 is spelled 네가"``;
    ``word_hint("먹었어요")`` names the polite style and offers ``'먹었다'``.
    """
    if word in _MISSPELLED:
        right = _MISSPELLED[word]
        return f"write {right!r}: {word[0]} with 가 is spelled {right}"
    if word in _POLITE or word.endswith(("요", "니다")):
        style = "-습니다" if word.endswith("니다") else "-요"
        plain = f": write {_POLITE[word]!r}" if word in _POLITE else " (a verb ending in -다, such as '먹었다')"
        return (f"{word!r} is polite speech ({style}); this grammar has only the plain written style, "
                f"the register of books and newspapers{plain}")
    return None


# --------------------------------------------------------------------------
# Tokens: particles split off their nouns
# --------------------------------------------------------------------------


class KoreanTokenizer:
    """Splits a noun's particle off into a token of its own: 고양이가 → 고양이 가.

    The rule is a lookup in one table, ``splits``, that maps each written
    word made of a noun and a particle to its two tokens, e.g. ``"고양이가":
    ["고양이", "가"]`` and ``"내가": ["나", "가"]`` (the irregular form of 나 +
    가). To tokenize a text:

    1. normalise it to Unicode NFC (composed Hangul syllables);
    2. split it on whitespace;
    3. replace each word found in ``splits`` by its two tokens and keep every
       other word as one token.

    To detokenize, read the tokens left to right: wherever two neighbouring
    tokens equal the value of an entry of ``splits``, write that entry's key
    (the word) instead; join everything with single spaces.

    No token of the table is itself a key, so tokenizing tokens changes
    nothing, and no two words split into the same tokens, so detokenizing
    gives the written text back. :meth:`to_dict` exports the table with this
    rule as JSON-ready data, e.g. for a reimplementation in JavaScript.

    Args:
        splits: written word → its two tokens (stem, particle).
    """

    RULE = MappingProxyType({
        "tokenize": "Normalise the text to Unicode NFC and split it on whitespace. Replace every word "
                    "that is a key of `splits` by the two tokens it maps to; keep any other word as one "
                    "token.",
        "detokenize": "Read the tokens left to right. Where a token and the next one equal the value of "
                      "an entry of `splits`, write that entry's key instead of the two; otherwise write the "
                      "token. Join with single spaces.",
    })

    def __init__(self, splits: Mapping[str, Sequence[str]]) -> None:
        if not isinstance(splits, Mapping):
            raise TypeError(f"KoreanTokenizer: splits must be a mapping word -> [stem, particle], "
                            f"got {type(splits).__name__}")
        self.splits: dict[str, tuple[str, str]] = {}
        for word, tokens in splits.items():
            tokens = tuple(tokens) if isinstance(tokens, (list, tuple)) else ()
            if (not isinstance(word, str) or len(word.split()) != 1 or word != word.strip() or len(tokens) != 2
                    or not all(isinstance(t, str) and len(t.split()) == 1 and t == t.strip() for t in tokens)):
                raise ValueError(f"KoreanTokenizer: splits[{word!r}] = {splits[word]!r}; expected a word "
                                 "without spaces mapped to two tokens without spaces")
            self.splits[word] = tokens
        self._joins = {tokens: word for word, tokens in self.splits.items()}
        if len(self._joins) != len(self.splits):
            raise ValueError("KoreanTokenizer: two words of splits split into the same tokens")
        clash = sorted({t for tokens in self.splits.values() for t in tokens} & set(self.splits))
        if clash:
            raise ValueError(f"KoreanTokenizer: the tokens {clash} are also words of splits")
        self.particles = tuple(sorted({particle for _, particle in self.splits.values()}))
        self.stems = tuple(sorted({stem for stem, _ in self.splits.values()}))

    @staticmethod
    def words(text: str) -> list[str]:
        """Steps 1 and 2 of the rule: the whitespace-separated words of the NFC-normalised ``text``."""
        if not isinstance(text, str):
            raise TypeError(f"KoreanTokenizer: text must be a str, got {type(text).__name__}")
        return unicodedata.normalize("NFC", text).split()

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``: ``"고양이가 생선을 먹었다"`` → ``["고양이", "가", "생선", "을", "먹었다"]``."""
        return [token for word in self.words(text) for token in self.splits.get(word, (word,))]

    def detokenize(self, tokens: str | Sequence[str]) -> str:
        """Written text from tokens (a list, or a string of space-separated tokens)."""
        tokens = self.words(tokens) if isinstance(tokens, str) else list(tokens)
        words, i = [], 0
        while i < len(tokens):
            pair = tuple(tokens[i:i + 2])
            if pair in self._joins:
                words.append(self._joins[pair])
                i += 2
            else:
                words.append(tokens[i])
                i += 1
        return " ".join(words)

    def to_dict(self) -> dict:
        """The tokenizer as JSON-ready data: the rule in words, the particles and the table."""
        return {"rule": dict(self.RULE), "particles": list(self.particles),
                "splits": {word: list(tokens) for word, tokens in self.splits.items()}}

    @classmethod
    def from_dict(cls, spec: dict) -> KoreanTokenizer:
        """Rebuild a tokenizer exported by :meth:`to_dict`."""
        if not isinstance(spec, dict):
            raise TypeError(f"KoreanTokenizer.from_dict: spec must be a dict, got {type(spec).__name__}")
        if not isinstance(spec.get("splits"), dict):
            raise ValueError(f"KoreanTokenizer.from_dict: expected {{'splits': {{word: [stem, particle]}}, ...}}, "
                             f"got {str(spec)[:80]}")
        return cls(spec["splits"])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KoreanTokenizer) and self.splits == other.splits

    def __repr__(self) -> str:
        return f"KoreanTokenizer({len(self.splits)} words, particles {' '.join(self.particles)})"


def _grammar_splits() -> dict[str, list[str]]:
    """Every noun with every particle it takes in the grammar, as written → tokens."""
    takes = {**{n: ("이/가", "은/는", "을/를") for n in _ANIMATE}, **{t: ("을/를",) for t in _THING}}
    for place in _PLACE:
        takes[place] = takes.get(place, ()) + ("에", "에서")
    for time in TIME_ADVERBIALS:
        if time.korean.endswith("에"):
            takes[time.korean[:-1]] = ("에",)
    splits = {}
    for noun, particles in takes.items():
        for particle in particles:
            word = with_particle(noun, particle)
            ending = word[len(noun):] if word.startswith(noun) else word[-1]  # 내가 → 가
            splits[word] = [noun, ending]
    return splits


KOREAN_TOKENIZER = KoreanTokenizer(_grammar_splits())
"""The tokenizer of the toy grammar; its table holds every noun with every particle it takes."""


def tokenize_korean(text: str) -> list[str]:
    """Split written Korean into the grammar's tokens: particles become tokens of their own.

    ``tokenize_korean("고양이가 생선을 먹었다") == ["고양이", "가", "생선", "을", "먹었다"]`` and
    ``tokenize_korean("내가 개를 쫓았다") == ["나", "가", "개", "를", "쫓았다"]``. Text that is
    already tokenized stays as it is. The rule is :class:`KoreanTokenizer`'s: a lookup of each
    whitespace-separated word in the table of :func:`korean_tokenizer_spec`.
    """
    return KOREAN_TOKENIZER.tokenize(text)


def detokenize_korean(tokens: str | Sequence[str]) -> str:
    """Written Korean from tokens: ``"고양이 가 생선 을 먹었다"`` → ``"고양이가 생선을 먹었다"``."""
    return KOREAN_TOKENIZER.detokenize(tokens)


def korean_tokenizer_spec() -> dict:
    """The tokenizer as JSON-ready data: ``{"rule": {...}, "particles": [...], "splits": {...}}``.

    ``splits`` maps each written noun-with-particle of the grammar to its two
    tokens; ``rule`` states in words how to tokenize and detokenize with it
    (see :class:`KoreanTokenizer`); ``particles`` lists the particle tokens.
    ``KoreanTokenizer.from_dict(spec)`` rebuilds the tokenizer.
    """
    return KOREAN_TOKENIZER.to_dict()


# --------------------------------------------------------------------------
# Clauses and sentences
# --------------------------------------------------------------------------


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
            complement = _PLACE[self.complement].to
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
        noun_like = token in _ANIMATE or token in _THING or token in _PLACE or token + "에" in _TIME
        if token in _FORMS:
            parts.append(_Part("V", _FORMS[token], text(k, k)))
        elif token == NEGATION:
            parts.append(_Part("N", None, text(k, k)))
        elif token in _TIME:
            parts.append(_Part("T", _TIME[token], text(k, k)))
        elif noun_like and particle in KOREAN_TOKENIZER.particles:
            parts.append(_noun_part(token, particle, text(k, k + 1)))
            k += 1
        elif token == "그리고":
            raise ValueError("translate_by_rule: '그리고' does not join clauses in this grammar; written Korean "
                             "joins them with the verb's -고 form: '고양이가 생선을 먹고 개가 물을 마셨다'")
        elif token == "그" and particle in _ANIMATE | _THING:
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
    if noun + "에" in _TIME and particle == "에":
        return _Part("T", _TIME[noun + "에"], text)
    if role == "S" and noun not in _ANIMATE:
        raise ValueError(f"translate_by_rule: {text!r}: only people and animals are subjects in this grammar")
    if role in "GP" and noun not in _PLACE:
        raise ValueError(f"translate_by_rule: {text!r}: {noun} is not a place of the grammar")
    if role == "O" and noun not in _ANIMATE and noun not in _THING:
        raise ValueError(f"translate_by_rule: {text!r}: {noun} is not an object of the grammar")
    pair = next(p for p in PARTICLES if particle in p.split("/"))
    written = with_particle(noun, pair)
    if KOREAN_TOKENIZER.splits[written][1] != particle:
        raise ValueError(f"translate_by_rule: {text!r} has the wrong form of {pair}; "
                         f"{noun} takes it as {written!r}")
    value = _ANIMATE.get(noun) if role == "S" else _PLACE.get(noun) if role in "GP" else noun
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
                            if c in _THING or c in _PLACE)
        raise ValueError(f"translate_by_rule: {complement_part.text!r} does not go with {verb.korean} in this "
                         f"grammar" + (f"; it takes e.g. '{known}'" if known else ""))
    osv = roles.index("O") < roles.index("S") if "S" in get and "O" in get else False
    if osv and subject_part.particle in ("은", "는"):
        raise ValueError(f"translate_by_rule: after the fronted object {complement_part.text!r} the subject "
                         f"takes 이/가, not {subject_part.text!r}")
    subject = subject_part.value if subject_part else _resolved(previous)
    if subject_part and previous and subject.korean == _resolved(previous).korean:
        raise ValueError(f"translate_by_rule: {subject_part.text!r} repeats the previous clause's subject; "
                         "Korean leaves it out")
    problem = _subject_problem(subject, verb, complement)
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


def _resolved(clauses: Sequence[Clause]) -> Noun:
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
    without Python: ``transformer_edu.export`` writes this into its
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
        if noun + "에" not in _TIME:
            pair = next(p for p in PARTICLES if particle in p.split("/"))
            roles.setdefault(pair, _noun_part(noun, particle, word).role)
    return {
        "particles": {pair: roles[pair] for pair in PARTICLES},
        "animates": {n.korean: {"person": n.person} for n in ANIMATES},
        "things": {t.korean: {"for_people": t.for_people} for t in THINGS},
        "places": list(_PLACE),
        "times": {t.korean: {"english": t.english, "tenses": list(t.tenses)} for t in TIME_ADVERBIALS},
        "negation": NEGATION,
        "verbs": {v.korean: {"present": v.present, "past": v.past, "connective": v.connective,
                             "complements": list(v.english), "motion": v.motion, "people_only": v.people_only,
                             "stative": v.stative} for v in _VERB.values()},
        "excluded_pairs": [[s, o] for s in _ANIMATE for o in _ANIMATE if _excluded_pair(s, o)],
        "clauses": {"first": sorted(_FIRST_CLAUSE), "later": sorted(_LATER_CLAUSE)},
        "role_names": dict(_ROLE_NAMES),
        "hints": {"misspelled": dict(_MISSPELLED), "polite": dict(_POLITE)},
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
        if clause.subject is None or clause.complement not in _ANIMATE or clause.verb.motion:
            return None
        osv = not clause.osv
        return clause._replace(subject=_ANIMATE[clause.complement], complement=clause.subject.korean,
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


# --------------------------------------------------------------------------
# Sampling the splits: held-out compositions
# --------------------------------------------------------------------------


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
    if not 0 < fraction < 1:
        raise ValueError(f"held_out_compositions: fraction={fraction!r}; expected 0 < fraction < 1")
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
    if not isinstance(english, str):
        raise TypeError(f"sense_words: english must be a str, got {type(english).__name__}")
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
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"toy_translation_splits: {name}={value!r}; expected an integer >= 1")
    if not 0 <= compound_prob <= 1:
        raise ValueError(f"toy_translation_splits: compound_prob={compound_prob!r}; expected 0 <= p <= 1")
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
