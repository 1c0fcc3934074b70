"""Tests of transformer_edu.data: the toy tasks, the Korean tokenizer, Vocab, batching and the TSV loader."""
import json
import random
import unicodedata
from collections import Counter

import pytest
import torch

from transformer_edu.data.lexicon import _plain_to_polite
from transformer_edu.data import (
    ANIMATES,
    KOREAN_TOKENIZER,
    MOTION_VERBS,
    MULTI_SENSE_VERBS,
    PLACES,
    RUNNING_EXAMPLES,
    THINGS,
    TRANSITIVE_VERBS,
    Batch,
    KoreanTokenizer,
    Vocab,
    bag_of_tokens,
    copy_task_pairs,
    copy_task_splits,
    detokenize_korean,
    grammar_problem,
    grammar_spec,
    has_batchim,
    held_out_compositions,
    korean_tokenizer_spec,
    load_tsv_pairs,
    make_batches,
    pad_batch,
    parse_sentence,
    reorder,
    same_verb_senses,
    sense_words,
    swap_roles,
    tokenize_korean,
    toy_translation_splits,
    translate_by_rule,
    with_particle,
    word_hint,
)

VERBS = {v.korean: v for v in TRANSITIVE_VERBS + MOTION_VERBS}


@pytest.fixture(scope="module")
def splits():
    return toy_translation_splits(seed=0)


@pytest.fixture(scope="module")
def all_pairs(splits):
    return [pair for split in splits.values() for pair in split]


@pytest.fixture(scope="module")
def parsed(splits):
    """Every sentence of every split read back into its structure."""
    return {name: [parse_sentence(ko) for ko, _ in pairs] for name, pairs in splits.items()}


# ---------------------------------------------------------------- copy task

def test_copy_task_copies_and_reverses():
    for src, tgt in copy_task_pairs(50, seed=1):
        assert src == tgt
        assert 3 <= len(src.split()) <= 8
        assert all(tok in "0123456789" for tok in src.split())
    for src, tgt in copy_task_pairs(50, reverse=True, min_len=2, max_len=5, vocab_size=4):
        assert tgt.split() == src.split()[::-1]
        assert 2 <= len(src.split()) <= 5 and set(src.split()) <= {"0", "1", "2", "3"}


def test_copy_task_splits_disjoint_and_deterministic():
    s = copy_task_splits(seed=3, n_train=300, n_valid=50, n_test=50)
    assert [len(s[k]) for k in ("train", "valid", "test")] == [300, 50, 50]
    sources = [src for split in s.values() for src, _ in split]
    assert len(set(sources)) == len(sources)
    assert s == copy_task_splits(seed=3, n_train=300, n_valid=50, n_test=50)
    assert s != copy_task_splits(seed=4, n_train=300, n_valid=50, n_test=50)


def test_copy_task_rejects_impossible_requests():
    with pytest.raises(ValueError, match="only 12 distinct"):
        copy_task_pairs(13, vocab_size=2, min_len=2, max_len=3)
    with pytest.raises(ValueError, match="max_len"):
        copy_task_pairs(5, min_len=4, max_len=3)




# ---------------------------------------------------------------- Korean particles

def test_batchim_and_particles():
    assert has_batchim("곰") and has_batchim("생선") and has_batchim("지민")
    assert not has_batchim("고양이") and not has_batchim("사과") and not has_batchim("나")
    assert with_particle("고양이", "이/가") == "고양이가"
    assert with_particle("곰", "이/가") == "곰이"
    assert with_particle("지민", "은/는") == "지민은"
    assert with_particle("우리", "은/는") == "우리는"
    assert with_particle("생선", "을/를") == "생선을"
    assert with_particle("사과", "을/를") == "사과를"
    assert with_particle("학교", "에") == "학교에" and with_particle("공원", "에서") == "공원에서"
    assert with_particle("나", "이/가") == "내가" and with_particle("너", "이/가") == "네가"  # irregular
    assert with_particle("나", "은/는") == "나는" and with_particle("나", "을/를") == "나를"
    with pytest.raises(ValueError, match="Hangul"):
        has_batchim("cat")
    with pytest.raises(ValueError, match="particle"):
        with_particle("곰", "의")


def test_particles_in_the_data_follow_the_batchim_rule(all_pairs):
    pairs = Counter()
    for ko, _ in all_pairs:
        tokens = ko.split()
        for noun, particle in zip(tokens, tokens[1:]):
            if particle in KOREAN_TOKENIZER.particles:
                written = detokenize_korean([noun, particle])
                pairs[particle] += 1
                assert written == with_particle(noun, next(p for p in ("이/가", "은/는", "을/를", "에", "에서")
                                                           if particle in p.split("/"))), (ko, noun, particle)
    assert set(pairs) == {"이", "가", "은", "는", "을", "를", "에", "에서"}  # every form is used
    assert min(pairs.values()) > 100


# ---------------------------------------------------------------- the grammar

def test_tables_are_big_enough():
    assert len(ANIMATES) >= 15 and len(THINGS) >= 15 and len(PLACES) >= 5
    assert sum(n.person for n in ANIMATES) >= 6 and sum(not n.person for n in ANIMATES) >= 6
    assert len(TRANSITIVE_VERBS) + len(MOTION_VERBS) >= 15
    assert "선생님" not in {n.korean for n in ANIMATES}  # would need honorific verb forms
    assert "차" not in {t.korean for t in THINGS}  # tea or car


def test_running_examples_are_first_in_the_test_split(splits):
    assert RUNNING_EXAMPLES == (("나는 학교에 간다", "I go to school"),
                                ("고양이가 생선을 먹었다", "the cat ate the fish"))
    assert splits["test"][:2] == [("나 는 학교 에 간다", "I go to school"),
                                  ("고양이 가 생선 을 먹었다", "the cat ate the fish")]
    for ko, en in RUNNING_EXAMPLES:
        assert translate_by_rule(ko) == en


def test_every_pair_is_its_rule_translation_written_or_tokenized(all_pairs):
    for ko, en in all_pairs:
        assert translate_by_rule(ko) == en
        assert translate_by_rule(detokenize_korean(ko)) == en


def _regular_present(dictionary_form):
    """-는다 after a consonant, -ㄴ다 after a vowel; a final ㄹ drops before ㄴ (만들다 → 만든다)."""
    stem = dictionary_form[:-1]
    last = ord(stem[-1]) - 0xAC00
    final = last % 28
    if final == 0:  # vowel: add the final consonant ㄴ (index 4)
        return stem[:-1] + chr(0xAC00 + last + 4) + "다"
    if final == 8:  # ㄹ: replace it by ㄴ
        return stem[:-1] + chr(0xAC00 + last - 8 + 4) + "다"
    return stem + "는다"


def test_verb_forms():
    for verb in VERBS.values():
        assert verb.korean.endswith("다")
        assert verb.connective == verb.korean[:-1] + "고", verb
        assert verb.present == _regular_present(verb.korean), verb
    past = {v.korean: v.past for v in VERBS.values()}
    assert past == {  # the irregular ones: 돕다 (ㅂ), 짓다 (ㅅ), 부르다 (르), 쓰다 (으), contractions
        "쫓다": "쫓았다", "잡다": "잡았다", "돕다": "도왔다", "만나다": "만났다", "기다리다": "기다렸다",
        "따라가다": "따라갔다", "보다": "봤다", "좋아하다": "좋아했다", "먹다": "먹었다", "마시다": "마셨다",
        "읽다": "읽었다", "쓰다": "썼다", "짓다": "지었다", "사다": "샀다", "만들다": "만들었다",
        "부르다": "불렀다", "가다": "갔다", "오다": "왔다", "달려가다": "달려갔다"}
    assert VERBS["짓다"].present == "짓는다" and VERBS["만들다"].present == "만든다"


def test_sov_becomes_svo():
    assert translate_by_rule("민수는 책을 읽었다") == "Minsu read the book"
    assert translate_by_rule("아이들은 우유를 마신다") == "the children drink the milk"
    assert translate_by_rule("그녀가 편지를 썼다") == "she wrote the letter"


def test_only_the_particles_say_who_did_what_to_whom():
    assert translate_by_rule("고양이가 개를 쫓았다") == "the cat chased the dog"
    assert translate_by_rule("개가 고양이를 쫓았다") == "the dog chased the cat"
    assert translate_by_rule("고양이를 개가 쫓았다") == "the dog chased the cat"  # object first
    assert translate_by_rule("개를 고양이가 쫓았다") == "the cat chased the dog"
    assert translate_by_rule("내가 그를 기다렸다") == "I waited for him"  # English pronouns show case
    assert translate_by_rule("그가 나를 기다렸다") == "he waited for me"
    assert translate_by_rule("그녀를 우리가 돕는다") == "we help her"


def test_bag_of_tokens_keeps_the_words_and_loses_their_order():
    assert bag_of_tokens("고양이가 개를 쫓았다") == "가 개 고양이 를 쫓았다"
    assert bag_of_tokens("고양이 가 개 를 쫓았다") == "가 개 고양이 를 쫓았다"  # tokenized input: the same
    assert bag_of_tokens(swap_roles("고양이가 개를 쫓았다")) == bag_of_tokens("고양이가 개를 쫓았다")
    assert translate_by_rule(swap_roles("고양이가 개를 쫓았다")) != translate_by_rule("고양이가 개를 쫓았다")
    assert bag_of_tokens("개를 고양이가 쫓았다") == bag_of_tokens("고양이가 개를 쫓았다")  # OSV: same bag, same meaning
    assert bag_of_tokens("곰이 나를 봤다") != bag_of_tokens(swap_roles("곰이 나를 봤다"))  # 곰을 내가: other forms
    with pytest.raises(TypeError):
        bag_of_tokens(3)


def test_swap_roles_and_reorder():
    assert swap_roles("고양이가 개를 쫓았다") == "고양이 를 개 가 쫓았다"
    assert swap_roles("고양이가 개를 쫓았다", natural=True) == "고양이를 개가 쫓았다"
    assert Counter(swap_roles("고양이가 개를 쫓았다").split()) == Counter(tokenize_korean("고양이가 개를 쫓았다"))
    assert swap_roles("곰이 나를 봤다", natural=True) == "곰을 내가 봤다"  # forms follow the nouns
    assert translate_by_rule(swap_roles("곰이 나를 봤다")) == "I saw the bear"
    assert swap_roles("개를 고양이가 쫓았다") == "개 가 고양이 를 쫓았다"
    assert reorder("고양이는 개를 쫓았다", "OSV", natural=True) == "개를 고양이가 쫓았다"  # 은/는 → 이/가
    assert reorder("개를 고양이가 쫓았다", "SOV") == "고양이 가 개 를 쫓았다"
    two = "민수는 개를 부르고 고양이가 쥐를 잡았다"
    assert translate_by_rule(swap_roles(two)) == "Minsu called the dog and the mouse caught the cat"  # 개 can't call
    assert translate_by_rule(reorder(two, "OSV")) == translate_by_rule(two)
    with pytest.raises(ValueError, match="swap_roles: no clause"):
        swap_roles("고양이가 생선을 먹었다")
    with pytest.raises(ValueError, match="reorder: no clause"):
        reorder("나는 학교에 간다", "OSV")
    with pytest.raises(ValueError, match="order='VSO'"):
        reorder("고양이가 개를 쫓았다", "VSO")


def test_swaps_and_scrambles_of_every_test_sentence_are_in_the_grammar(splits):
    swapped = scrambled = 0
    for ko, en in splits["test"]:
        try:
            other = swap_roles(ko)
        except ValueError:
            pass
        else:
            swapped += 1
            assert translate_by_rule(other) != en
            if len(parse_sentence(ko).clauses) == 1:
                assert translate_by_rule(swap_roles(other)) == en  # swapping twice gives the meaning back
        try:
            osv = reorder(ko, "OSV")
        except ValueError:
            continue
        scrambled += 1
        assert translate_by_rule(osv) == en and translate_by_rule(reorder(osv, "SOV")) == en
    assert swapped > 100 and scrambled > 150


def test_adverbials_move_to_the_end():
    assert translate_by_rule("어제 고양이가 공원에서 생선을 먹었다") == "the cat ate the fish in the park yesterday"
    assert translate_by_rule("밤에 개를 곰이 집에서 기다렸다") == "the bear waited for the dog at home at night"
    assert translate_by_rule("민수는 학교에 가고 아침에 지민이 도서관에서 책을 읽는다") == (
        "Minsu goes to school and Jimin reads the book in the library in the morning")  # inside a compound


def test_agreement_tense_and_negation():
    assert translate_by_rule("나는 사과를 먹는다") == "I eat the apple"
    assert translate_by_rule("고양이가 사과를 먹는다") == "the cat eats the apple"
    assert translate_by_rule("우리는 사과를 안 먹는다") == "we do not eat the apple"
    assert translate_by_rule("그는 학교에 간다") == "he goes to school"
    assert translate_by_rule("새들이 집에 갔다") == "the birds went home"
    assert translate_by_rule("고양이가 생선을 안 먹었다") == "the cat did not eat the fish"
    assert translate_by_rule("고양이가 생선을 안 먹는다") == "the cat does not eat the fish"
    assert translate_by_rule("나는 학교에 안 간다") == "I do not go to school"
    assert translate_by_rule("그가 공을 잡는다") == "he catches the ball"
    for s in ANIMATES:
        en = translate_by_rule(f"{with_particle(s.korean, '은/는')} 빵을 먹는다")
        assert en.endswith("eats the bread") == s.third_singular, en


def test_the_object_chooses_the_english_verb():
    assert translate_by_rule("지민은 편지를 썼다") == "Jimin wrote the letter"
    assert translate_by_rule("지민은 모자를 썼다") == "Jimin wore the hat"
    assert translate_by_rule("지민은 돈을 안 쓴다") == "Jimin does not spend the money"
    assert translate_by_rule("민수가 밥을 지었다") == "Minsu cooked the rice"
    assert translate_by_rule("민수가 집을 지었다") == "Minsu built the house"
    assert translate_by_rule("민수가 집에 갔다") == "Minsu went home"  # the particle decides what 집 is
    assert translate_by_rule("아이들이 노래를 부른다") == "the children sing the song"
    assert translate_by_rule("아이들이 개를 부른다") == "the children call the dog"
    assert translate_by_rule("그들이 영화를 봤다") == "they watched the movie"


def test_compounds_join_with_go_and_share_the_last_tense():
    assert translate_by_rule("고양이가 생선을 먹고 개가 물을 마셨다") == (
        "the cat ate the fish and the dog drank the water")
    assert translate_by_rule("고양이가 생선을 먹고 개가 물을 마신다") == (
        "the cat eats the fish and the dog drinks the water")
    assert translate_by_rule("고양이는 생선을 안 먹고 물을 마셨다") == (
        "the cat did not eat the fish and drank the water")  # the left-out subject is the cat's
    assert translate_by_rule("아이는 개를 쫓고 우유를 안 마신다") == "the child chases the dog and does not drink the milk"
    assert translate_by_rule("나는 학교에 가고 너는 집에 가고 우리는 공원에 간다") == (
        "I go to school and you go home and we go to the park")


def test_the_data_uses_every_construction(parsed):
    clauses = [c for s in parsed["train"] for c in s.clauses]
    def share(flag):
        return sum(map(flag, clauses)) / len(clauses)

    assert 0.1 < share(lambda c: c.osv) < 0.3
    assert 0.15 < share(lambda c: c.negated) < 0.35
    assert 0.2 < share(lambda c: c.topic) < 0.5
    assert 0.02 < share(lambda c: c.subject is None) < 0.2
    assert 0.05 < share(lambda c: c.place is not None) and 0.05 < share(lambda c: c.time is not None)
    assert 0.25 < sum(len(s.clauses) == 2 for s in parsed["train"]) / len(parsed["train"]) < 0.45
    subjects = Counter(s.korean for sentence in parsed["train"] for s in sentence.subjects())
    objects = Counter(c.complement for sentence in parsed["train"] for c in sentence.clauses)
    for noun in ANIMATES:  # every person and animal is seen in both roles, many times
        assert subjects[noun.korean] > 200 and objects[noun.korean] > 100, noun


def test_translate_by_rule_names_the_bad_word():
    cases = [
        ("고양이가 생선을 먹어요", "'먹어요' is not a word"),
        ("곰가 생선을 먹었다", "'곰가' is not a word"),
        ("곰 가 생선 을 먹었다", "'곰 가' has the wrong form of 이/가; 곰 takes it as '곰이'"),
        ("생선을 먹었다", "needs a subject such as '고양이가'; real Korean leaves out"),
        ("나는 사과를 간다", "가다 needs a place with 에"),
        ("생선을 고양이는 먹었다", "takes 이/가, not '고양이는'"),
        ("고양이가 생선을 먹고", "'먹고' joins two clauses"),
        ("고양이가 생선을 먹는다 그리고 개가 물을 마신다", "'그리고' does not join clauses"),
        ("고양이가 생선을 먹었다 개가 물을 마셨다", "'먹었다' ends the sentence"),
        ("어제 고양이가 생선을 먹는다", "'어제' (yesterday) needs the past"),
        ("곰이 책을 읽었다", "'곰이': only people"),
        ("나는 나를 봤다", "'나를': 나 and 나 cannot be subject and object"),
        ("고양이가 생선을 먹고 고양이가 물을 마셨다", "'고양이가' repeats the previous clause's subject"),
        ("어제 고양이가 개를 좋아했다", "'어제': 좋아하다 is a state"),
        ("고양이가 물을 먹었다", "'물을' does not go with 먹다"),
        ("고양이 생선을 먹었다", "'고양이' needs a particle"),
        ("고양이가 생선을 먹었다 개가", "nothing may follow '먹었다'"),
    ]
    for korean, message in cases:
        with pytest.raises(ValueError) as error:
            translate_by_rule(korean)
        assert message in str(error.value), (korean, str(error.value))
    with pytest.raises(TypeError, match="must be a str"):
        translate_by_rule(["고양이가"])


# ---------------------------------------------------------------- the tokenizer

def test_tokenizer_splits_particles_and_round_trips(all_pairs):
    assert tokenize_korean("고양이가 생선을 먹었다") == ["고양이", "가", "생선", "을", "먹었다"]
    assert tokenize_korean("내가 개를 쫓았다") == ["나", "가", "개", "를", "쫓았다"]
    assert tokenize_korean("  밤에   공원에서 ") == ["밤", "에", "공원", "에서"]
    assert tokenize_korean("고양이도 웃었다") == ["고양이도", "웃었다"]  # unknown words stay whole
    assert detokenize_korean("나 가 개 를 쫓았다") == "내가 개를 쫓았다"
    assert detokenize_korean(["나", "는", "학교", "에", "간다"]) == "나는 학교에 간다"
    nfd = unicodedata.normalize("NFD", "고양이가 생선을 먹었다")
    assert nfd != "고양이가 생선을 먹었다" and tokenize_korean(nfd) == tokenize_korean("고양이가 생선을 먹었다")
    for ko, _ in all_pairs:
        written = detokenize_korean(ko)
        assert not set(written.split()) & set(KOREAN_TOKENIZER.particles)  # written Korean has no loose particle
        assert " ".join(tokenize_korean(written)) == ko
        assert tokenize_korean(ko) == ko.split()  # tokens stay tokens


def test_tokenizer_spec_is_plain_data_that_rebuilds_it():
    spec = korean_tokenizer_spec()
    assert json.loads(json.dumps(spec, ensure_ascii=False)) == spec
    assert set(spec) == {"rule", "particles", "splits"} and set(spec["rule"]) == {"tokenize", "detokenize"}
    assert spec["splits"]["고양이가"] == ["고양이", "가"] and spec["splits"]["내가"] == ["나", "가"]
    assert sorted(spec["particles"]) == sorted(["이", "가", "은", "는", "을", "를", "에", "에서"])
    assert KoreanTokenizer.from_dict(spec) == KOREAN_TOKENIZER
    rng = random.Random(0)
    for word, tokens in spec["splits"].items():  # the rule in words, done by hand
        assert KoreanTokenizer.from_dict(spec).tokenize(f"{word} 먹었다") == [*tokens, "먹었다"]
        assert word.startswith(tokens[0]) or word in ("내가", "네가")
        assert tokens[1] in spec["particles"] and word.endswith(tokens[1])
    words = rng.sample(sorted(spec["splits"]), 10)
    assert detokenize_korean([t for w in words for t in spec["splits"][w]]) == " ".join(words)


def test_tokenizer_refuses_an_ambiguous_table():
    with pytest.raises(ValueError, match="same tokens"):
        KoreanTokenizer({"내가": ["나", "가"], "나가": ["나", "가"]})
    with pytest.raises(ValueError, match="also words"):
        KoreanTokenizer({"나는": ["나", "는"], "나": ["나", "x"]})
    with pytest.raises(ValueError, match="two tokens"):
        KoreanTokenizer({"나는": ["나는"]})
    with pytest.raises(ValueError, match="splits"):
        KoreanTokenizer.from_dict({"rule": {}})


# ---------------------------------------------------------------- splits

def test_split_sizes_and_lengths(splits, parsed):
    assert len(splits["train"]) >= 5000
    assert len(splits["valid"]) >= 200 and len(splits["test"]) >= 200 and len(splits["ood"]) >= 100
    for name in ("train", "valid", "test"):
        assert {len(s.clauses) for s in parsed[name]} == {1, 2}, name
    assert {len(s.clauses) for s in parsed["ood"]} == {3}  # out of distribution: never seen in training
    longest_train = max(len(ko.split()) for ko, _ in splits["train"])
    assert sum(len(ko.split()) > longest_train for ko, _ in splits["ood"]) > 0.05 * len(splits["ood"])


def test_splits_are_disjoint(splits):
    sources = {name: {ko for ko, _ in pairs} for name, pairs in splits.items()}
    assert all(len(sources[name]) == len(splits[name]) for name in splits)
    names = list(splits)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not sources[a] & sources[b], (a, b)


def test_held_out_compositions_never_in_train(parsed):
    held = held_out_compositions(seed=0)
    assert ("고양이", "먹다", "생선") in held["test"] and ("나", "가다", "학교") in held["test"]
    assert not set(held["valid"]) & set(held["test"])
    train = {t for s in parsed["train"] for t in s.compositions()}
    assert not train & (set(held["valid"]) | set(held["test"]))
    for name in ("valid", "test"):
        assert all(set(s.compositions()) & set(held[name]) for s in parsed[name]), name
    assert not any(set(s.compositions()) & set(held["valid"] + held["test"]) for s in parsed["ood"])
    words = {w for t in train for w in t}
    assert {w for t in held["valid"] + held["test"] for w in t} <= words  # the words do occur
    swapped = [(o, v, s) for s, v, o in held["test"] if (o, v, s) in train]
    assert len(swapped) > 50  # the reverse roles of many held-out triples are trained on


def test_every_valid_test_and_ood_token_is_in_train(splits):
    src_vocab = Vocab.build([ko for ko, _ in splits["train"]])
    tgt_vocab = Vocab.build([en for _, en in splits["train"]])
    for ko, en in splits["valid"] + splits["test"] + splits["ood"]:
        assert src_vocab.unknown_tokens(ko) == [] and tgt_vocab.unknown_tokens(en) == []
    assert 80 <= len(src_vocab) <= 160 and 80 <= len(tgt_vocab) <= 200


def test_splits_are_deterministic_per_seed(splits):
    assert toy_translation_splits(seed=0) == splits
    other = toy_translation_splits(seed=1)
    assert other["train"] != splits["train"] and other["test"] != splits["test"]
    assert other["test"][:2] == splits["test"][:2]
    with pytest.raises(ValueError, match="toy_translation_splits: n_ood must be at least 1, got 0"):
        toy_translation_splits(n_ood=0)


# ---------------------------------------------------------------- Vocab

@pytest.fixture
def vocab():
    return Vocab.build(["the cat ate the fish", "the dog ate", "a cat"], min_freq=1)


def test_vocab_specials_and_order(vocab):
    assert (vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert vocab.itos[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    assert vocab.itos[4:7] == ["the", "ate", "cat"]  # by frequency, then alphabetically
    assert len(vocab) == 4 + 6
    assert Vocab.build(["the cat ate the fish", "the dog ate"], min_freq=2).itos[4:] == ["the", "ate"]


def test_vocab_round_trip(vocab):
    ids = vocab.encode("the cat ate the fish", add_bos=True)
    assert ids[0] == vocab.bos_id and ids[-1] == vocab.eos_id and len(ids) == 7
    assert vocab.decode(ids) == "the cat ate the fish"
    assert vocab.decode(torch.tensor(ids + [vocab.pad_id, vocab.pad_id])) == "the cat ate the fish"
    assert vocab.decode(ids + [vocab.stoi["dog"]]) == "the cat ate the fish"  # stops at <eos>
    assert vocab.decode(ids, strip_specials=False) == "<bos> the cat ate the fish <eos>"
    assert vocab.encode("a cat", add_eos=False) == [vocab.stoi["a"], vocab.stoi["cat"]]


def test_vocab_unknown_words(vocab):
    assert vocab.unknown_tokens("the bird saw the bird") == ["bird", "saw"]
    assert vocab.encode("the bird", add_eos=False) == [vocab.stoi["the"], vocab.unk_id]
    assert vocab.decode(vocab.encode("the bird")) == "the <unk>"
    with pytest.raises(ValueError, match=r"\['bird', 'saw'\]"):
        vocab.encode("the bird saw", strict=True)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        vocab.decode([99])
    with pytest.raises(TypeError, match="sentences\\[0\\]"):
        Vocab.build([("source", "target")])


def test_vocab_to_dict_from_dict(vocab):
    state = json.loads(json.dumps(vocab.to_dict()))
    restored = Vocab.from_dict(state)
    assert restored == vocab and restored.stoi == vocab.stoi
    with pytest.raises(ValueError, match="itos"):
        Vocab.from_dict({"itos": ["cat", "dog"]})


# ---------------------------------------------------------------- batching

def test_pad_batch():
    batch = pad_batch([[5, 6, 7], [8], []], pad_id=0)
    assert batch.dtype == torch.long and batch.shape == (3, 3)
    assert batch.tolist() == [[5, 6, 7], [8, 0, 0], [0, 0, 0]]
    with pytest.raises(ValueError, match="empty"):
        pad_batch([], pad_id=0)


def test_make_batches_shift_and_padding(splits):
    pairs = splits["train"][:100]
    src_vocab = Vocab.build([ko for ko, _ in splits["train"]])
    tgt_vocab = Vocab.build([en for _, en in splits["train"]])
    batches = list(make_batches(pairs, src_vocab, tgt_vocab, batch_size=32))
    assert [b.src.shape[0] for b in batches] == [32, 32, 32, 4]
    assert sum(b.n_tokens for b in batches) == sum(len(en.split()) + 1 for _, en in pairs)
    first = batches[0]
    assert isinstance(first, Batch) and first.tgt_in.shape == first.tgt_out.shape
    assert (first.tgt_in[:, 0] == tgt_vocab.bos_id).all()
    assert first.n_tokens == int((first.tgt_out != tgt_vocab.pad_id).sum())
    words = first.tgt_in[:, 1:] != tgt_vocab.pad_id  # y1 ... yn in tgt_in
    assert (first.tgt_in[:, 1:] == first.tgt_out[:, :-1])[words].all()
    assert ((first.tgt_in != tgt_vocab.pad_id) == (first.tgt_out != tgt_vocab.pad_id)).all()
    assert ((first.tgt_out == tgt_vocab.eos_id).sum(dim=1) == 1).all()
    assert ((first.src == src_vocab.eos_id).sum(dim=1) == 1).all()
    assert tgt_vocab.decode(first.tgt_out[0]) == pairs[0][1]
    assert src_vocab.decode(first.src[1]) == pairs[1][0]


def test_make_batches_shuffle_and_sort(splits):
    pairs = splits["train"][:200]
    sv = Vocab.build([ko for ko, _ in pairs])
    tv = Vocab.build([en for _, en in pairs])

    def sources(**kwargs):
        return [sv.decode(row) for b in make_batches(pairs, sv, tv, 16, **kwargs) for row in b.src]

    assert sources() == [ko for ko, _ in pairs]
    assert sorted(sources(shuffle=True, seed=1)) == sorted(ko for ko, _ in pairs)
    assert sources(shuffle=True, seed=1) == sources(shuffle=True, seed=1)
    assert sources(shuffle=True, seed=1) != sources(shuffle=True, seed=2)
    sorted_batches = list(make_batches(pairs, sv, tv, 16, sort_by_length=True))
    pad_sorted = sum(int((b.src == sv.pad_id).sum()) for b in sorted_batches)
    pad_plain = sum(int((b.src == sv.pad_id).sum()) for b in make_batches(pairs, sv, tv, 16))
    assert pad_sorted < pad_plain


def test_make_batches_validates_arguments(vocab):
    pairs = [("the cat", "the dog")]
    with pytest.raises(ValueError, match="make_batches: batch_size must be at least 1, got 0"):
        make_batches(pairs, vocab, vocab, 0)
    with pytest.raises(ValueError, match="pairs is empty"):
        make_batches([], vocab, vocab, 2)
    with pytest.raises(ValueError, match=r"pairs\[0\]"):
        make_batches(["the cat"], vocab, vocab, 2)
    with pytest.raises(TypeError, match="Vocab"):
        make_batches(pairs, {"the": 4}, vocab, 2)
    with pytest.raises(ValueError, match="unknown tokens"):
        make_batches([("the bird", "the cat")], vocab, vocab, 2, strict=True)


# ---------------------------------------------------------------- TSV loader

def test_load_tsv_pairs(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("korean\tenglish\n나는 학교에 간다\tI go to school\n\n"
                    "고양이가 생선을 먹었다\tthe cat ate the fish\textra\n", encoding="utf-8")
    assert load_tsv_pairs(path, skip_header=True) == [
        ("나는 학교에 간다", "I go to school"), ("고양이가 생선을 먹었다", "the cat ate the fish")]
    assert load_tsv_pairs(path, src_col=1, tgt_col=0)[0] == ("english", "korean")


def test_load_tsv_pairs_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.tsv"):
        load_tsv_pairs(tmp_path / "missing.tsv")
    path = tmp_path / "bad.tsv"
    path.write_text("a\tb\n\nno tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 3"):
        load_tsv_pairs(path)
    path.write_text("a\tb\n  \t b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2 .*empty source"):
        load_tsv_pairs(path)
    with pytest.raises(ValueError, match="tgt_col=-1"):
        load_tsv_pairs(path, tgt_col=-1)


# --------------------------------------------------------------------------
# The grammar's English and its limits, as a native speaker reviewed them
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_splits():
    return toy_translation_splits(0)


def test_every_generated_pair_is_the_grammars_translation(default_splits):
    for name, pairs in default_splits.items():
        for korean, english in pairs:
            assert translate_by_rule(korean) == english, (name, korean)


def test_every_day_with_negation_is_never():
    assert translate_by_rule("매일 고양이가 생선을 안 먹는다") == "the cat never eats the fish"
    assert translate_by_rule("매일 나는 학교에 안 간다") == "I never go to school"
    assert translate_by_rule("매일 고양이가 생선을 먹는다") == "the cat eats the fish every day"
    assert translate_by_rule("어제 고양이가 생선을 안 먹었다") == "the cat did not eat the fish yesterday"


def test_no_pair_says_not_every_day(default_splits):
    english = [en for pairs in default_splits.values() for _, en in pairs]
    clauses = [clause for en in english for clause in en.split(" and ")]
    assert not any("not" in clause.split() and "every day" in clause for clause in clauses)
    assert sum("never" in en.split() for en in english) > 50  # the rule is in the data, not only in the parser


def test_objects_read_as_english_does():
    assert translate_by_rule("곰이 우유를 좋아했다") == "the bear liked milk"  # liking takes the kind
    assert translate_by_rule("지민이 책을 좋아한다") == "Jimin likes books"
    assert translate_by_rule("곰이 우유를 마셨다") == "the bear drank the milk"
    assert translate_by_rule("개가 밥을 먹는다") == "the dog eats the meal"  # 밥을 먹다: a meal
    assert translate_by_rule("그녀가 밥을 지었다") == "she cooked the rice"
    assert translate_by_rule("우리가 모자를 썼다") == "we wore hats"  # plural subject
    assert translate_by_rule("민수가 모자를 썼다") == "Minsu wore the hat"
    assert translate_by_rule("우리가 모자를 샀다") == "we bought the hat"


def test_today_goes_with_the_past_only(default_splits):
    assert translate_by_rule("오늘 나는 집에 왔다") == "I came home today"
    with pytest.raises(ValueError, match="'오늘' \\(today\\) needs the past tense.*does not take 'today'"):
        translate_by_rule("오늘 나는 집에 온다")
    for pairs in default_splits.values():
        for korean, english in pairs:
            if "today" in english:
                assert parse_sentence(korean).tense == "past", korean


def test_building_the_house_at_home_is_left_out(default_splits):
    with pytest.raises(ValueError, match="names the place twice"):
        translate_by_rule("그녀가 집에서 집을 지었다")
    assert translate_by_rule("그녀가 학교에서 집을 지었다") == "she built the house at school"
    for pairs in default_splits.values():
        for korean, _ in pairs:
            for clause in parse_sentence(korean).clauses:
                assert not (clause.place and clause.place.korean == clause.complement), korean


def test_same_verb_senses():
    assert same_verb_senses("민수가 모자를 쓰고 돈을 썼다")
    assert same_verb_senses("그녀가 밥을 짓고 집을 지었다")
    assert not same_verb_senses("민수가 편지를 쓰고 편지를 썼다")  # one sense twice
    assert not same_verb_senses("민수가 모자를 쓰고 밥을 지었다")  # two verbs
    assert set(MULTI_SENSE_VERBS) == {"쓰다", "짓다", "보다", "부르다"}


def test_same_verb_sentences_are_in_training_test_and_their_own_split(default_splits):
    counts = {name: sum(same_verb_senses(korean) for korean, _ in pairs) for name, pairs in default_splits.items()}
    assert counts["train"] >= 400 and counts["test"] >= 10, counts  # before the fix: 6 and 0
    same_verb = default_splits["same_verb"]
    assert len(same_verb) == 200 and counts["same_verb"] == 200
    assert not set(same_verb) & set(default_splits["train"])
    verbs = Counter(parse_sentence(korean).clauses[0].verb.korean for korean, _ in same_verb)
    assert set(verbs) == set(MULTI_SENSE_VERBS) and min(verbs.values()) >= 30, verbs
    senses = {en for korean, en in same_verb if "쓰고" in detokenize_korean(korean)}
    assert any("wore" in en and "spent" in en for en in senses)


@pytest.mark.parametrize("korean, message", [
    ("고양이가 먹었다", "먹다 needs an object with 을/를 such as '생선을'; real Korean leaves out an object"),
    ("생선을 먹었다", "needs a subject such as '고양이가'; real Korean leaves out a subject"),
    ("그 고양이가 생선을 먹었다", "the determiner 그 ('that', as in 그 고양이 'that cat') is not in it"),
    ("너가 생선을 먹었다", "write '네가': 너 with 가 is spelled 네가"),
    ("나가 생선을 먹었다", "write '내가'"),
    ("고양이가 생선을 먹었어요", "'먹었어요' is polite speech (-요); this grammar has only the plain written style"),
    ("나는 학교에 갑니다", "'갑니다' is polite speech (-습니다)"),
])
def test_grammar_problem_says_why(korean, message):
    problem = grammar_problem(korean)
    assert problem is not None and message in problem and not problem.startswith("translate_by_rule")
    assert grammar_problem(detokenize_korean(tokenize_korean("고양이가 생선을 먹었다"))) is None


def test_word_hint_turns_every_polite_verb_form_into_the_plain_one():
    checked = 0
    for verb in TRANSITIVE_VERBS + MOTION_VERBS:
        for polite, plain in _plain_to_polite(verb).items():
            hint = word_hint(polite)
            assert hint is not None and f"write {plain!r}" in hint, (polite, hint)
            assert plain in (verb.present, verb.past)
            checked += 1
    assert checked == 4 * len(TRANSITIVE_VERBS + MOTION_VERBS)
    assert _plain_to_polite(VERBS["만들다"])["만듭니다"] == "만든다"  # ㄹ drops
    assert _plain_to_polite(VERBS["돕다"])["도와요"] == "돕는다"  # ㅂ-irregular
    assert _plain_to_polite(VERBS["짓다"])["지어요"] == "짓는다"  # ㅅ-irregular
    assert _plain_to_polite(VERBS["부르다"])["불렀어요"] == "불렀다"  # 르-irregular
    assert word_hint("고양이가") is None and word_hint("기린이") is None


def test_grammar_spec_is_the_grammar_as_data():
    """What the book's live translator checks sentences against (its messages are compared in the browser)."""
    spec = grammar_spec()
    assert json.loads(json.dumps(spec, ensure_ascii=False)) == spec
    assert spec["particles"] == {"이/가": "S", "은/는": "S", "을/를": "O", "에": "G", "에서": "P"}
    assert "SOV" in spec["clauses"]["first"] and "OV" not in spec["clauses"]["first"]  # a subject first
    assert "OV" in spec["clauses"]["later"] and "GV" in spec["clauses"]["later"]
    assert spec["verbs"]["쓰다"]["complements"] == ["편지", "모자", "돈"] and spec["verbs"]["쓰다"]["people_only"]
    assert spec["times"]["오늘"]["tenses"] == ["past"] and spec["verbs"]["좋아하다"]["stative"]
    assert ["나", "우리"] in spec["excluded_pairs"] and ["고양이", "고양이"] in spec["excluded_pairs"]
    assert spec["hints"]["misspelled"]["너가"] == "네가" and spec["hints"]["polite"]["먹었어요"] == "먹었다"


def test_sense_words_name_each_clauses_sense_in_order():
    assert sense_words("Minsu wore the hat and spent the money") == ["wear", "spend"]
    assert sense_words("Minsu spent the money and wore the hat") == ["spend", "wear"]
    assert sense_words("she did not cook the rice and builds the house") == ["cook", "build"]
    assert sense_words("the cat ate the fish") == []  # 먹다 has one sense
    for korean, english in toy_translation_splits(0)["same_verb"]:
        senses = sense_words(english)
        assert len(senses) == 2 and senses[0] != senses[1], english
    with pytest.raises(TypeError, match="english must be a str"):
        sense_words(None)


def test_read_tsv_corpus_keeps_the_good_lines_and_names_the_bad(tmp_path):
    from transformer_edu.data import read_tsv_corpus

    path = tmp_path / "corpus.tsv"
    path.write_text("고양이가 생선을 먹었다\tthe cat ate the fish\nno tab\n\n\tempty source\n"
                    "empty target\t \nlong\t" + "x" * 21 + "\n나는 간다\tI go\n", encoding="utf-8")
    corpus = read_tsv_corpus(path, max_chars=20)
    assert corpus.pairs == [("고양이가 생선을 먹었다", "the cat ate the fish"), ("나는 간다", "I go")]
    assert corpus.lines == [1, 7]
    assert corpus.skipped == [(2, "1 column(s), expected 2 separated by tabs"), (4, "empty source"),
                              (5, "empty target"), (6, "over 20 characters")]
    assert corpus.report(most=2).endswith("4 of 6 lines skipped (line 2: 1 column(s), expected 2 separated by "
                                          "tabs; line 4: empty source; and 2 more)")
    assert len(read_tsv_corpus(path, max_chars=1000).pairs) == 3  # the long line fits now


def test_read_tsv_corpus_errors(tmp_path):
    from transformer_edu.data import read_tsv_corpus

    with pytest.raises(FileNotFoundError, match="missing.tsv"):
        read_tsv_corpus(tmp_path / "missing.tsv")
    (tmp_path / "bad.tsv").write_text("no tab\n\tx\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"holds no usable source<TAB>target line \(line 1: 1 column"):
        read_tsv_corpus(tmp_path / "bad.tsv")
    (tmp_path / "empty.tsv").write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="the file is empty"):
        read_tsv_corpus(tmp_path / "empty.tsv")
    with pytest.raises(ValueError, match="max_chars=0"):
        read_tsv_corpus(tmp_path / "bad.tsv", max_chars=0)
