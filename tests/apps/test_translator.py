"""The Translator (Chapter 8) and the evaluation metrics (Chapters 7 and 8)."""

import warnings

import pytest
import torch

from transformer_edu import Transformer, TransformerConfig
from transformer_edu.training.checkpoint import save_checkpoint
from transformer_edu.data import KOREAN_TOKENIZER, Vocab, tokenize_korean
from transformer_edu.decoding import beam_search, greedy_decode
from transformer_edu.translation.translator import OutsideGrammarWarning, Translator, UnknownWordsError

SOURCES = ["고양이가 생선을 먹었다", "나는 학교에 간다", "곰이 공을 잡았다"]
TARGETS = ["the cat ate the fish", "I go to school", "the bear saw the ball"]


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def translator():
    src_vocab = Vocab.build(SOURCES)
    tgt_vocab = Vocab.build(TARGETS)
    torch.manual_seed(0)
    config = TransformerConfig(len(src_vocab), len(tgt_vocab), d_model=32, n_heads=4, d_ff=64, n_layers=1,
                               max_len=40)
    return Translator(Transformer(config), src_vocab, tgt_vocab)


def test_translate_a_str_or_a_list(translator):
    one = translator.translate(SOURCES[0])
    assert isinstance(one, str)
    many = translator.translate(SOURCES)
    assert isinstance(many, list) and len(many) == 3 and many[0] == one
    assert translator.translate(SOURCES, batch_size=1) == many  # batching and padding change nothing
    short = translator.translate(SOURCES[0], beam_size=1, max_len=5)
    assert translator.translate(tuple(SOURCES[:1]), beam_size=1, max_len=5) == [short]
    assert len(translator.translate(SOURCES[0], beam_size=1, max_len=3).split()) <= 3


def test_translate_is_beam_search_on_the_encoded_sentence(translator):
    src = torch.tensor([translator.src_vocab.encode(SOURCES[1])])  # (1, S), EOS appended
    ids = dict(max_len=min(src.shape[1] + 50, 40), bos_id=Vocab.bos_id, eos_id=Vocab.eos_id)
    tokens, _ = beam_search(translator.model, src, beam_size=3, length_penalty=0.2, **ids)
    expected = translator.tgt_vocab.decode(tokens[0])
    assert translator.translate(SOURCES[1], beam_size=3, length_penalty=0.2) == expected
    greedy = greedy_decode(translator.model, src, **ids)
    assert translator.translate(SOURCES[1], beam_size=1) == translator.tgt_vocab.decode(greedy[0])


def _never_ending(max_len):
    """A translator whose model never says EOS, so every output runs to the length limit."""
    src_vocab = Vocab.build([" ".join(tokenize_korean(s)) for s in SOURCES])
    tgt_vocab = Vocab.build(TARGETS)
    torch.manual_seed(0)
    config = TransformerConfig(len(src_vocab), len(tgt_vocab), d_model=16, n_heads=2, d_ff=32, n_layers=1,
                               max_len=max_len)
    model = Transformer(config)
    with torch.no_grad():
        model.output.bias[Vocab.eos_id] = -1e9
    return Translator(model, src_vocab, tgt_vocab, KOREAN_TOKENIZER)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_default_length_limit_is_the_papers_source_plus_50(beam_size):
    long = _never_ending(max_len=200)
    for sentence in SOURCES:  # 5 tokens + EOS, so 56 tokens
        assert len(long.translate(sentence, beam_size=beam_size).split()) == len(tokenize_korean(sentence)) + 1 + 50
    assert len(long.translate(SOURCES[0], beam_size=beam_size, max_len=7).split()) == 7
    short = _never_ending(max_len=30)  # the model's positions cap it
    assert len(short.translate(SOURCES[0], beam_size=beam_size).split()) == 30
    assert (long.output_limit(6), short.output_limit(6)) == (56, 30)
    with pytest.raises(ValueError, match="source_length"):
        long.output_limit(0)


@pytest.fixture(scope="module")
def ko_translator():
    """Trained on tokens (고양이 가 생선 을 …); learners type written Korean (고양이가 생선을 …)."""
    src_vocab = Vocab.build([" ".join(tokenize_korean(s)) for s in SOURCES])
    tgt_vocab = Vocab.build(TARGETS)
    torch.manual_seed(0)
    config = TransformerConfig(len(src_vocab), len(tgt_vocab), d_model=32, n_heads=4, d_ff=64, n_layers=1,
                               max_len=80)
    return Translator(Transformer(config), src_vocab, tgt_vocab, KOREAN_TOKENIZER)


def test_written_korean_is_tokenized_like_the_training_data(ko_translator):
    assert ko_translator.source_tokens("고양이가 생선을 먹었다") == ["고양이", "가", "생선", "을", "먹었다"]
    ids = ko_translator.encode_source("고양이가 생선을 먹었다")
    assert ids == ko_translator.src_vocab.encode("고양이 가 생선 을 먹었다") and Vocab.unk_id not in ids
    assert ko_translator.translate(SOURCES) == ko_translator.translate([" ".join(tokenize_korean(s))
                                                                       for s in SOURCES])
    assert "고양이가" not in ko_translator.src_vocab  # the model never saw the written word itself


def test_unknown_written_words_are_named_as_typed(ko_translator):
    with pytest.raises(UnknownWordsError) as error:
        ko_translator.translate("고양이도 생선을 먹었다")
    assert error.value.words == ["고양이도"]
    assert "'고양이도' (did you mean " in str(error.value) and "'고양이가'" in str(error.value)
    with pytest.raises(UnknownWordsError) as error:
        ko_translator.check_words("곰가 공를 잡았다")  # wrong particle forms
    assert error.value.words == ["곰가", "공를"]
    assert "'곰가' (did you mean '곰이'" in str(error.value) and "'공를' (did you mean '공을'" in str(error.value)
    with pytest.raises(UnknownWordsError) as error:
        ko_translator.check_words("개가 생선을 먹었다")  # 개 and 가 are known to the grammar, not to this model
    assert error.value.words == ["개가"]


def test_the_tokenizer_is_saved_with_the_model(ko_translator, translator, tmp_path):
    ko_translator.save(tmp_path / "ko.pt")
    loaded = Translator.load(tmp_path / "ko.pt")
    assert loaded.src_tokenizer == KOREAN_TOKENIZER
    assert loaded.translate("고양이가 생선을 먹었다") == ko_translator.translate("고양이가 생선을 먹었다")
    translator.save(tmp_path / "plain.pt")
    assert Translator.load(tmp_path / "plain.pt").src_tokenizer is None
    with pytest.raises(TypeError, match="src_tokenizer must be a KoreanTokenizer"):
        Translator(translator.model, translator.src_vocab, translator.tgt_vocab, src_tokenizer=str.split)


def test_unknown_words_are_named_with_suggestions(translator):
    with pytest.raises(UnknownWordsError) as error:
        translator.translate(["나는 학교에 간다", "고양이는 생선을 먹는다"])
    assert isinstance(error.value, ValueError)
    assert error.value.words == ["고양이는", "먹는다"]
    message = str(error.value)
    assert "'고양이는' (did you mean '고양이가'?)" in message
    assert "'먹는다' (did you mean '먹었다'?)" in message


@pytest.mark.parametrize("bad, error, match", [
    ("   ", ValueError, "is empty"),
    ([3], TypeError, r"sentences\[0\] must be a str"),
])
def test_bad_sentences(translator, bad, error, match):
    with pytest.raises(error, match=match):
        translator.translate(bad)


def test_vocabularies_must_fit_the_model(translator):
    with pytest.raises(ValueError, match="src_vocab has 5 tokens but the model expects"):
        Translator(translator.model, Vocab(["a"]), translator.tgt_vocab)


def test_save_and_load(translator, tmp_path):
    translator.save(tmp_path, extra={"note": "toy"})
    loaded = Translator.load(tmp_path)
    assert loaded.src_vocab == translator.src_vocab and loaded.tgt_vocab == translator.tgt_vocab
    assert loaded.translate(SOURCES) == translator.translate(SOURCES)
    save_checkpoint(tmp_path / "bare.pt", translator.model)
    with pytest.raises(ValueError, match="holds no vocabularies"):
        Translator.load(tmp_path / "bare.pt")


def test_load_names_a_device_this_machine_lacks(translator, tmp_path):
    translator.save(tmp_path)
    with pytest.raises(ValueError, match="device must be a device such as 'cpu', 'cuda' or 'cuda:1', got 'gpu'"):
        Translator.load(tmp_path, device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device is 'cuda', but PyTorch sees no CUDA GPU on this machine"):
            Translator.load(tmp_path, device="cuda")


def test_sentences_outside_the_grammar_are_translated_with_a_warning(ko_translator, translator):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a sentence of the grammar warns of nothing
        inside = ko_translator.translate("고양이가 생선을 먹었다")
    assert ko_translator.grammar_problem("고양이가 생선을 먹었다") is None
    with pytest.warns(OutsideGrammarWarning) as caught:
        outside = ko_translator.translate(["고양이가 먹었다", "고양이가 생선을 먹었다", "고양이가 먹었다"])
    assert len(caught) == 1 and caught[0].message.sentence == "고양이가 먹었다"  # once per sentence
    assert "먹다 needs an object" in caught[0].message.problem
    assert "outside the grammar the model learned" in str(caught[0].message)
    assert isinstance(outside[0], str) and outside[1] == inside  # still translated
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ko_translator.translate("고양이가 먹었다", warn_outside_grammar=False)
        translator.translate("고양이가 먹었다")  # no Korean tokenizer: no grammar to check against
    assert translator.grammar_problem("고양이가 먹었다") is None
    with pytest.raises(TypeError, match="sentence must be a str"):
        ko_translator.grammar_problem(3)


def test_misspelled_and_polite_words_get_the_rule_not_a_guess(ko_translator):
    with pytest.raises(UnknownWordsError) as error:
        ko_translator.translate("너가 생선을 먹었어요")
    message = str(error.value)
    assert "'너가' (write '네가': 너 with 가 is spelled 네가)" in message
    assert "'먹었어요' is polite speech (-요)" in message and "write '먹었다'" in message


def test_a_subword_translator_saves_loads_and_refuses_mismatches(tmp_path, tiny_model):
    """Chapter 9: both tokenizers are stored in the checkpoint; a vocabulary that is not the
    tokenizer's, or a tokenizer of the wrong kind, is refused; the live page cannot run it."""
    from transformer_edu.data import SubwordTokenizer, Vocab
    from transformer_edu.translation.export import tokenizer_json
    from transformer_edu.translation.translator import Translator

    tokenizer = SubwordTokenizer.train(["고양이가 생선을 먹었다", "the cat ate the fish"] * 20, 300)
    vocab = tokenizer.vocab()
    model = tiny_model(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab))
    translator = Translator(model, vocab, vocab, tokenizer, tokenizer)
    output = translator.translate("강아지가 라면을 먹었다", beam_size=1, max_len=5)
    assert isinstance(output, str) and "▁" not in output  # pieces joined back into text
    translator.save(tmp_path / "ckpt.pt")
    loaded = Translator.load(tmp_path / "ckpt.pt")
    assert loaded.src_tokenizer == tokenizer == loaded.tgt_tokenizer
    assert loaded.translate("강아지가 라면을 먹었다", beam_size=1, max_len=5) == output
    with pytest.raises(ValueError, match="src_vocab is not the vocabulary of src_tokenizer"):
        Translator(model, Vocab(vocab.itos[5:] + vocab.itos[4:5]), vocab, tokenizer, tokenizer)
    with pytest.raises(TypeError, match="tgt_tokenizer must be a SubwordTokenizer or None"):
        Translator(model, vocab, vocab, tokenizer, "words")
    with pytest.raises(ValueError, match="cannot be exported"):
        tokenizer_json(translator)
