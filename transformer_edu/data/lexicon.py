"""The toy grammar's words: particles and their forms, nouns, verbs, places, time words, and
hints for words the grammar writes otherwise (Chapter 7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

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
        if complement in ANIMATE_BY_WORD:
            return ANIMATE_BY_WORD[complement].english_object
        if subject.plural and complement in (self.plural_objects or {}):
            return self.plural_objects[complement]
        if complement in (self.objects or {}):
            return self.objects[complement]
        thing = THING_BY_WORD[complement]
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

# The grammar's words by their Korean, for the parser and the tokenizer.
ANIMATE_BY_WORD = {n.korean: n for n in ANIMATES}
THING_BY_WORD = {t.korean: t for t in THINGS}
PLACE_BY_WORD = {p.korean: p for p in PLACES}
VERB_BY_WORD = {v.korean: v for v in TRANSITIVE_VERBS + MOTION_VERBS}
TIME_BY_WORD = {t.korean: t for t in TIME_ADVERBIALS}
VERB_FORMS = {form: (verb, kind) for verb in VERB_BY_WORD.values()
          for form, kind in ((verb.present, "present"), (verb.past, "past"), (verb.connective, "connective"))}


def excluded_pair(subject: str, obj: str) -> bool:
    """Pairs the grammar leaves out: someone acting on themselves ("I saw me", "we saw me")."""
    return subject == obj or {subject, obj} == {"나", "우리"}


def subject_problem(subject: Noun, verb: Verb, complement: str) -> str | None:
    """Why ``subject`` cannot do ``verb`` to ``complement`` in this grammar, or ``None`` when it can."""
    for_people = not verb.motion and complement in THING_BY_WORD and THING_BY_WORD[complement].for_people
    if (verb.people_only or for_people) and not subject.person:
        what = f"{verb.korean}" if verb.people_only else f"{complement}"
        return f"only people go with {what} in this grammar, not {subject.korean}"
    if not verb.motion and excluded_pair(subject.korean, complement):
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


POLITE_TO_PLAIN = {polite: plain for verb in TRANSITIVE_VERBS + MOTION_VERBS
           for polite, plain in _plain_to_polite(verb).items()}
MISSPELLINGS = {"너가": "네가", "나가": "내가"}  # 너 and 나 take 가 as 네가 and 내가


def word_hint(word: str) -> str | None:
    """Why ``word`` (as written) is not a word of the grammar, when a rule can tell; else ``None``.

    Two cases a learner meets first: 너가 and 나가, which written Korean
    spells 네가 and 내가, and the polite styles (먹었어요, 먹었습니다), which
    the grammar lacks: it has the plain written style only (먹었다), the
    register of books and newspapers.

    ``word_hint("너가")`` → ``"write '네가': 너 with 가 is spelled 네가"``;
    ``word_hint("먹었어요")`` names the polite style and offers ``'먹었다'``.
    """
    if word in MISSPELLINGS:
        right = MISSPELLINGS[word]
        return f"write {right!r}: {word[0]} with 가 is spelled {right}"
    if word in POLITE_TO_PLAIN or word.endswith(("요", "니다")):
        style = "-습니다" if word.endswith("니다") else "-요"
        plain = f": write {POLITE_TO_PLAIN[word]!r}" if word in POLITE_TO_PLAIN \
            else " (a verb ending in -다, such as '먹었다')"
        return (f"{word!r} is polite speech ({style}); this grammar has only the plain written style, "
                f"the register of books and newspapers{plain}")
    return None
