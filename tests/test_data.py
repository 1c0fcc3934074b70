"""Tests of transformer_edu.data: the toy tasks, Vocab, batching and the TSV loader."""
import json

import pytest
import torch

from transformer_edu.data import (
    CONJUNCTION, MOTION_VERBS, NEGATION, OBJECTS, PLACES, RUNNING_EXAMPLES, SUBJECTS, TIME_ADVERBIALS,
    TRANSITIVE_VERBS, Batch, Vocab, copy_task_pairs, copy_task_splits, has_batchim,
    held_out_compositions, load_tsv_pairs, make_batches, pad_batch, toy_translation_splits,
    translate_by_rule, with_particle,
)


@pytest.fixture(scope="module")
def splits():
    return toy_translation_splits(seed=0)


@pytest.fixture(scope="module")
def all_pairs(splits):
    return [pair for split in splits.values() for pair in split]


def simple_clauses(pairs):
    """The single-clause pairs, as (korean words, english text)."""
    return [(ko.split(), en) for ko, en in pairs if CONJUNCTION[0] not in ko.split()]


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
    assert has_batchim("곰") and has_batchim("생선") and has_batchim("선생님")
    assert not has_batchim("고양이") and not has_batchim("사과") and not has_batchim("나")
    assert with_particle("고양이", "이/가") == "고양이가"
    assert with_particle("곰", "이/가") == "곰이"
    assert with_particle("나", "은/는") == "나는"
    assert with_particle("선생님", "은/는") == "선생님은"
    assert with_particle("생선", "을/를") == "생선을"
    assert with_particle("사과", "을/를") == "사과를"
    with pytest.raises(ValueError, match="Hangul"):
        has_batchim("cat")
    with pytest.raises(ValueError, match="particle"):
        with_particle("곰", "의")


def test_particles_in_the_data_follow_the_batchim_rule(all_pairs):
    subject_words = {with_particle(s.korean, s.particle) for s in SUBJECTS}
    object_words = {with_particle(o.korean, "을/를") for o in OBJECTS}
    assert {"고양이가", "곰이", "나는", "지민은", "새들이"} <= subject_words
    assert {"생선을", "사과를", "빵을", "우유를"} <= object_words
    for ko, _ in all_pairs:
        for word in ko.split():
            if word in object_words:
                noun, particle = word[:-1], word[-1]
                assert particle == ("을" if has_batchim(noun) else "를"), word


# ---------------------------------------------------------------- the grammar

def test_tables_are_big_enough():
    assert len(SUBJECTS) >= 12 and len(OBJECTS) >= 12
    assert len(TRANSITIVE_VERBS) + len(MOTION_VERBS) >= 10
    assert {v.korean for v in MOTION_VERBS} >= {"가다"}


def test_running_examples_are_in_the_test_split_and_translated(splits):
    assert RUNNING_EXAMPLES == (("나는 학교에 간다", "I go to school"),
                                ("고양이가 생선을 먹었다", "the cat ate the fish"))
    for ko, en in RUNNING_EXAMPLES:
        assert (ko, en) in splits["test"]
        assert translate_by_rule(ko) == en


def test_every_pair_is_its_rule_translation(all_pairs):
    for ko, en in all_pairs:
        assert translate_by_rule(ko) == en


def test_verb_conjugation_tables():
    verbs = {v.korean: v for v in TRANSITIVE_VERBS + MOTION_VERBS}
    assert (verbs["먹다"].present, verbs["먹다"].past, verbs["먹다"].english_past) == ("먹는다", "먹었다", "ate")
    assert (verbs["가다"].present, verbs["가다"].past, verbs["가다"].english_third) == ("간다", "갔다", "goes")
    assert (verbs["보다"].present, verbs["보다"].past) == ("본다", "봤다")
    assert (verbs["마시다"].present, verbs["마시다"].past) == ("마신다", "마셨다")
    assert (verbs["좋아하다"].present, verbs["좋아하다"].past) == ("좋아한다", "좋아했다")
    assert translate_by_rule("민수는 책을 읽었다") == "Minsu read the book"
    assert translate_by_rule("학생들은 우유를 마신다") == "the students drink the milk"


def test_sov_becomes_svo(splits):
    verb_forms = {f for v in TRANSITIVE_VERBS for f in (v.present, v.past)}
    english_verbs = {f for v in TRANSITIVE_VERBS for f in (v.english, v.english_third, v.english_past)}
    objects = {with_particle(o.korean, "을/를"): o.english for o in OBJECTS}
    checked = 0
    for ko, en in simple_clauses(splits["train"][:500]):
        if ko[-1] not in verb_forms:
            continue
        obj = next(w for w in ko if w in objects)
        assert ko.index(obj) < len(ko) - 1  # Korean: the object comes before the verb
        en_obj = en.index(objects[obj])
        en_verb = min(en.index(f" {v} ") for v in english_verbs if f" {v} " in f"{en} ")
        assert en_verb < en_obj, (ko, en)   # English: the verb comes before the object
        checked += 1
    assert checked > 100


def test_adverbials_move_from_front_to_end(splits):
    place_words = {p.korean + "에서": p.at for p in PLACES}
    times = {t.korean: t.english for t in TIME_ADVERBIALS}
    seen_both = 0
    for ko, en in simple_clauses(splits["train"]):
        if ko[0] in times:
            assert en.endswith(" " + times[ko[0]]), (ko, en)
        front = [w for w in ko[:2] if w in place_words]
        if front:
            suffix = " " + place_words[front[0]] + (" " + times[ko[0]] if ko[0] in times else "")
            assert en.endswith(suffix), (ko, en)
            seen_both += ko[0] in times
    assert seen_both > 20
    assert translate_by_rule("어제 공원에서 고양이가 생선을 먹었다") == "the cat ate the fish in the park yesterday"


def test_agreement_and_tense():
    assert translate_by_rule("나는 사과를 먹는다") == "I eat the apple"
    assert translate_by_rule("고양이가 사과를 먹는다") == "the cat eats the apple"
    assert translate_by_rule("우리는 사과를 먹는다") == "we eat the apple"
    assert translate_by_rule("그는 학교에 간다") == "he goes to school"
    assert translate_by_rule("새들이 집에 갔다") == "the birds went home"
    for s in SUBJECTS:
        en = translate_by_rule(f"{with_particle(s.korean, s.particle)} 빵을 먹는다")
        assert en.endswith("eats the bread") == s.third_singular, en


def test_negation():
    assert translate_by_rule("고양이가 생선을 안 먹었다") == "the cat did not eat the fish"
    assert translate_by_rule("고양이가 생선을 안 먹는다") == "the cat does not eat the fish"
    assert translate_by_rule("우리는 생선을 안 먹는다") == "we do not eat the fish"
    assert translate_by_rule("나는 학교에 안 간다") == "I do not go to school"


def test_negation_in_the_data(splits):
    negated = [(ko, en) for ko, en in splits["train"] if NEGATION in ko.split()]
    assert len(negated) > 500
    for ko, en in negated:
        assert ko.split().count(NEGATION) == en.split().count("not")
        assert ko.split()[ko.split().index(NEGATION) + 1] in {
            f for v in TRANSITIVE_VERBS + MOTION_VERBS for f in (v.present, v.past)}


def test_conjunction(splits):
    compound = [(ko, en) for ko, en in splits["train"] if " 그리고 " in ko]
    assert len(compound) > 500
    for ko, en in compound[:100]:
        first_ko, second_ko = ko.split(" 그리고 ")
        assert en == f"{translate_by_rule(first_ko)} and {translate_by_rule(second_ko)}"
    assert (translate_by_rule("나는 학교에 간다 그리고 고양이가 생선을 먹었다")
            == "I go to school and the cat ate the fish")


def test_translate_by_rule_names_the_bad_word():
    with pytest.raises(ValueError, match="'먹어요'"):
        translate_by_rule("고양이가 생선을 먹어요")
    with pytest.raises(ValueError, match="subject"):
        translate_by_rule("생선을 먹었다")
    with pytest.raises(ValueError, match="place"):
        translate_by_rule("나는 사과를 간다")


# ---------------------------------------------------------------- splits

def test_split_sizes_and_lengths(splits):
    assert len(splits["train"]) >= 3000
    assert len(splits["valid"]) >= 200 and len(splits["test"]) >= 200
    for ko, en in splits["train"]:
        assert len(ko.split()) <= 16 and len(en.split()) <= 18


def test_splits_are_disjoint(splits):
    train, valid, test = (set(splits[k]) for k in ("train", "valid", "test"))
    assert len(train) == len(splits["train"]) and len(test) == len(splits["test"])
    assert not (train & valid) and not (train & test) and not (valid & test)
    train_ko = {ko for ko, _ in train}
    assert not any(ko in train_ko for ko, _ in valid | test)


def test_held_out_compositions_never_in_train(splits):
    held = held_out_compositions(seed=0)
    assert ("고양이", "먹다", "생선") in held["test"] and ("나", "가다", "학교") in held["test"]
    assert not set(held["valid"]) & set(held["test"])
    train_clauses = [clause.split() for ko, _ in splits["train"] for clause in ko.split(" 그리고 ")]
    assert not any({"고양이가", "생선을"} <= set(c) and c[-1] in ("먹는다", "먹었다") for c in train_clauses)
    assert not any({"나는", "학교에"} <= set(c) and c[-1] in ("간다", "갔다") for c in train_clauses)
    assert any({"나는", "학교에"} <= set(c) for c in train_clauses)  # the words do occur


def test_every_valid_and_test_token_is_in_train(splits):
    src_vocab = Vocab.build([ko for ko, _ in splits["train"]])
    tgt_vocab = Vocab.build([en for _, en in splits["train"]])
    for ko, en in splits["valid"] + splits["test"]:
        assert src_vocab.unknown_tokens(ko) == [] and tgt_vocab.unknown_tokens(en) == []
    assert 50 <= len(src_vocab) <= 150 and 50 <= len(tgt_vocab) <= 150


def test_splits_are_deterministic_per_seed(splits):
    assert toy_translation_splits(seed=0) == splits
    other = toy_translation_splits(seed=1)
    assert other["train"] != splits["train"] and other["test"] != splits["test"]
    assert other["test"][:2] == list(RUNNING_EXAMPLES)


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
    with pytest.raises(ValueError, match="batch_size=0"):
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
