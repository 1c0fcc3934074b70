"""transformer_edu.data.subword: the learned subword vocabulary (Chapter 9)."""

import pytest

from transformer_edu.data import (
    KOREAN_TOKENIZER,
    SubwordTokenizer,
    Vocab,
    detokenize_korean,
    tokenizer_from_dict,
    toy_translation_splits,
)


@pytest.fixture(scope="module")
def korean():
    return [detokenize_korean(src) for src, _ in toy_translation_splits(0)["train"][:3000]]


@pytest.fixture(scope="module")
def bpe(korean):
    return SubwordTokenizer.train(korean, 400)


def test_pieces_join_back_into_the_written_text(bpe, korean):
    for sentence in korean[:200] + ["강아지가  라면을\t먹었다", "the dog ate ramen 🍜"]:
        assert bpe.detokenize(bpe.tokenize(sentence)) == " ".join(sentence.split())


def test_an_unseen_word_is_written_with_known_pieces_and_bytes_not_unk(bpe):
    pieces = bpe.tokenize("강아지가 라면을 먹었다")
    assert "<unk>" not in pieces and all(piece in bpe.pieces for piece in pieces)
    assert "<0xEA>" in pieces  # 강 never occurs in the corpus: its three UTF-8 bytes stand for it
    assert bpe.vocab().unknown_tokens(" ".join(pieces)) == []


def test_particles_and_endings_come_apart_then_whole_words_join(korean):
    middle, large = SubwordTokenizer.train(korean, 500), SubwordTokenizer.train(korean, 2000)
    assert middle.tokenize("고양이가 먹었다") == ["▁고양이", "가", "▁먹", "었다"]  # noun | particle, stem | ending
    assert large.tokenize("고양이가 먹었다") == ["▁고양이가", "▁먹었다"]
    assert len(large) < 2000  # the corpus ran out of pairs to merge: every word is one piece


def test_the_vocabulary_respects_its_size(bpe):
    assert len(bpe) <= 400 and bpe.pieces[:4] == list(Vocab.SPECIALS)
    assert bpe.pieces[-256:] == [f"<0x{b:02X}>" for b in range(256)]
    assert len(bpe.merges) == len(bpe) - 4 - 256 - len({c for s in bpe.pieces[4:-256] if len(s) == 1 for c in s})


def test_the_vocab_has_the_tokenizers_ids(bpe):
    vocab = bpe.vocab()
    assert vocab.itos == bpe.pieces
    sentence = "고양이가 생선을 먹었다"
    assert vocab.encode(" ".join(bpe.tokenize(sentence)), add_eos=False) == [vocab.stoi[p] for p in bpe.tokenize(sentence)]


def test_a_larger_vocabulary_gives_shorter_sequences(korean):
    tokenizers = [SubwordTokenizer.train(korean, n) for n in (400, 500, 600)]
    lengths = [sum(len(tokenizer.tokenize(s)) for s in korean[:300]) for tokenizer in tokenizers]
    assert lengths[0] > lengths[1] > lengths[2]


def test_training_is_deterministic_and_round_trips_through_a_dict(bpe, korean):
    assert SubwordTokenizer.train(korean, 400) == bpe
    again = tokenizer_from_dict(bpe.to_dict())
    assert again == bpe and again.tokenize("고양이가 생선을 먹었다") == bpe.tokenize("고양이가 생선을 먹었다")
    assert tokenizer_from_dict(KOREAN_TOKENIZER.to_dict()) == KOREAN_TOKENIZER
    assert tokenizer_from_dict(None) is None


def test_unigram_also_learns(korean):
    unigram = SubwordTokenizer.train(korean, 400, model="unigram")
    assert unigram.merges == [] and unigram.detokenize(unigram.tokenize(korean[0])) == korean[0]


@pytest.mark.parametrize("call, error, message", [
    (lambda: SubwordTokenizer.train(["가나다"], 100), ValueError, "vocab_size must be at least 264 (4 specials, 256 byte pieces"),
    (lambda: SubwordTokenizer.train(["", "  "], 400), ValueError, "holds no text"),
    (lambda: SubwordTokenizer.train(["가나다"], 400, model="wordpiece"), ValueError, "model='wordpiece'"),
    (lambda: SubwordTokenizer.train([3], 400), TypeError, "texts[0] must be a str, got int"),
    (lambda: SubwordTokenizer("{}"), ValueError, "not a tokenizers JSON"),
    (lambda: SubwordTokenizer.from_dict({"type": "words"}), ValueError, "expected {'type': 'subword'"),
])
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=None) as caught:
        call()
    assert message in str(caught.value)


def test_detokenize_names_a_piece_it_does_not_know(bpe):
    with pytest.raises(ValueError, match="'zzz' is not a piece"):
        bpe.detokenize(["zzz"])
