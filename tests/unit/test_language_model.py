"""The decoder-only model (Chapter 10): its options, its cache, generation, and parity with Hugging Face."""

import math

import pytest
import torch
import torch.nn.functional as F

import transformer_edu as te
from transformer_edu.attention import MultiHeadAttention
from transformer_edu.interop import load_gpt2_weights, load_llama_weights, rotate_half_to_pairs
from transformer_edu.language_model import (
    LanguageModel,
    LanguageModelConfig,
    complete,
    generate,
    swiglu_width,
)

if __package__:
    from .unit_support import tokens
else:
    from unit_support import tokens

V = 41
SMALL = dict(d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=48)
VARIANTS = {
    "2017": {},
    "pre-LN": dict(norm_first=True),
    "RMSNorm": dict(norm="rms", norm_first=True),
    "RoPE": dict(positional="rope"),
    "SwiGLU": dict(feed_forward="swiglu", d_ff=swiglu_width(64)),
    "GQA": dict(n_kv_heads=2),
    "MQA": dict(n_kv_heads=1),
    "untied": dict(tie_output=False),
    "learned": dict(positional="learned"),
    "llama": "llama",
    "gpt2": "gpt2",
}


def make(variant="2017", seed=0, **overrides):
    settings = VARIANTS[variant]
    torch.manual_seed(seed)
    if settings == "llama":
        config = LanguageModelConfig.llama(V, **{**SMALL, "d_ff": 86, **overrides})
    elif settings == "gpt2":
        config = LanguageModelConfig.gpt2(V, **{**SMALL, **overrides})
    else:
        config = LanguageModelConfig(V, **{**SMALL, "dropout": 0.0, **settings, **overrides})
    return LanguageModel(config).eval()


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_future_token_changes_no_earlier_logit(variant):
    model = make(variant)
    x = tokens(2, 12, V, seed=1)
    changed = x.clone()
    changed[:, 7] = (changed[:, 7] % (V - 1)) + 1  # another real token at position 7
    with torch.no_grad():
        a, b = model(x), model(changed)
    assert torch.equal(a[:, :7], b[:, :7])
    assert not torch.allclose(a[:, 7:], b[:, 7:])


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_cache_gives_the_logits_of_the_whole_sequence(variant):
    model = make(variant)
    x = tokens(3, 15, V, seed=2)
    with torch.no_grad():
        whole = model(x)
        cache = model.new_cache(15)
        parts = [model(x[:, :6], cache=cache), model(x[:, 6:7], cache=cache), model(x[:, 7:], cache=cache)]
    assert cache.length == 15
    assert (torch.cat(parts, dim=1) - whole).abs().max() < 1e-5


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("do_sample", [False, True])
def test_cached_generation_equals_recomputation(variant, do_sample):
    model = make(variant)
    prompt = tokens(3, 5, V, seed=3)
    runs = [
        generate(model, prompt, max_new_tokens=20, do_sample=do_sample, top_k=10, top_p=0.9, temperature=0.8,
                 generator=torch.Generator().manual_seed(4), use_cache=use_cache)
        for use_cache in (True, False)
    ]
    assert torch.equal(runs[0], runs[1])
    assert runs[0].shape == (3, 20)


def test_greedy_generation_is_the_argmax_of_a_full_forward_pass():
    model = make("llama")
    prompt = tokens(2, 4, V, seed=5)
    out = generate(model, prompt, max_new_tokens=6)
    sequence = torch.cat([prompt, out], dim=1)
    with torch.no_grad():
        logits = model(sequence)[:, 3:-1]  # the positions that predicted the new tokens
    logits[..., 0] = float("-inf")  # the padding id is never generated
    assert torch.equal(logits.argmax(-1), out)


def test_generation_stops_at_eos_and_pads_after_it():
    model = make()
    prompt = tokens(4, 3, V, seed=6)
    free = generate(model, prompt, max_new_tokens=12)
    eos = int(free[0, 2])  # row 0's third token, as if it were EOS
    out = generate(model, prompt, max_new_tokens=12, eos_id=eos)
    for row, full in zip(out.tolist(), free.tolist()):
        if eos in full:
            end = full.index(eos)
            assert row[: end + 1] == full[: end + 1] and set(row[end + 1 :]) <= {0}
        else:
            assert row == full[: len(row)]


def test_complete_gives_each_prompt_its_own_continuation():
    model = make("RoPE")
    prompts = [[5, 6, 7], [8, 9], [10, 11, 12], [13], [5, 6, 7]]
    together = complete(model, prompts, max_new_tokens=6)
    alone = [complete(model, [p], max_new_tokens=6)[0] for p in prompts]
    assert together == alone
    assert together[0] == together[4]


def test_the_modules_each_option_chooses():
    model = make("llama", n_kv_heads=2)
    layer = model.layers[0]
    assert isinstance(layer.norm1, te.RMSNorm) and isinstance(layer.feed_forward, te.SwiGLUFeedForward)
    assert layer.self_attn.rotary is model.layers[1].self_attn.rotary  # one table for all layers
    assert layer.self_attn.w_k.out_features == 2 * 8  # two key heads of d_k = 8
    assert all(m.bias is None for m in model.modules() if isinstance(m, torch.nn.Linear))
    assert model.norm is not None and make().norm is None  # pre-LN ends with a norm
    assert not any("rotary" in k or "positional" in k for k in model.state_dict())  # nothing to save
    assert "positional.pe" in make().state_dict() and "positional.weight" in make("learned").state_dict()


def test_tied_embeddings_share_one_matrix():
    tied, untied = make(), make("untied")
    assert tied.output.weight is tied.embed.weight
    assert tied.output.weight.data_ptr() == tied.embed.weight.data_ptr()
    assert te.count_parameters(untied) - te.count_parameters(tied) == V * 32
    restored = LanguageModel(tied.config)
    restored.load_state_dict(tied.state_dict())
    assert restored.output.weight is restored.embed.weight
    with torch.no_grad():
        tied.embed.weight[3, 0] += 1.0  # one change, seen by both
    assert tied.output.weight[3, 0] == tied.embed.weight[3, 0]


def test_grouped_query_attention_is_multi_head_attention_with_repeated_key_and_value_heads():
    torch.manual_seed(0)
    d_model, heads, kv_heads = 32, 8, 2
    grouped = MultiHeadAttention(d_model, heads, bias=False, n_kv_heads=kv_heads)
    full = MultiHeadAttention(d_model, heads, bias=False)
    d_k, group = d_model // heads, heads // kv_heads
    with torch.no_grad():
        full.w_q.weight.copy_(grouped.w_q.weight)
        full.w_o.weight.copy_(grouped.w_o.weight)
        for name in ("w_k", "w_v"):  # key/value head j repeated for query heads j·G … j·G + G − 1
            rows = getattr(grouped, name).weight.view(kv_heads, 1, d_k, d_model).expand(-1, group, -1, -1)
            getattr(full, name).weight.copy_(rows.reshape(d_model, d_model))
    x = torch.randn(2, 6, d_model)
    mask = te.causal_mask(6)
    out_g, w_g = grouped(x, x, x, mask)
    out_f, w_f = full(x, x, x, mask)
    assert torch.allclose(out_g, out_f, atol=1e-6) and torch.allclose(w_g, w_f, atol=1e-6)


def test_with_as_many_key_value_heads_as_query_heads_it_is_multi_head_attention():
    torch.manual_seed(0)
    plain = MultiHeadAttention(16, 4)
    torch.manual_seed(0)
    explicit = MultiHeadAttention(16, 4, n_kv_heads=4)
    x = torch.randn(2, 5, 16)
    assert torch.equal(plain(x, x, x)[0], explicit(x, x, x)[0])


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_the_cache_holds_the_key_value_heads_only(kv_heads):
    model = make(n_heads=4, n_kv_heads=kv_heads)
    cache = model.new_cache(20)
    with torch.no_grad():
        model(tokens(3, 10, V, seed=7), cache=cache)
    assert cache.layers[0].self_attn.keys.shape == (3, kv_heads, 10, 8)
    per_token = cache.nbytes / (3 * 10)
    assert per_token == 2 * 2 * kv_heads * 8 * 4  # keys and values, 2 layers, H_kv heads of d_k = 8, float32
    assert all(layer.cross_attn.nbytes == 0 for layer in cache.layers)  # no encoder, no memory


def test_multi_query_attention_shares_one_key_and_value_head():
    model = make("MQA")
    attention = model.layers[0].self_attn
    assert attention.w_k.out_features == attention.w_v.out_features == attention.d_k
    x = torch.randn(1, 4, 32)
    k = attention.split_heads(attention.w_k(x), 1)  # (1, 1, 4, d_k)
    shared = attention.share_kv_heads(k)  # (1, H, 4, d_k)
    assert all(torch.equal(shared[:, h], k[:, 0]) for h in range(4))


def test_rope_scores_depend_on_the_offset_only():
    rope = te.RotaryPositionalEncoding(16, max_len=600)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 1, 1, 1, 16, generator=g)

    def score(m, n):
        return float(rope(q, m) @ rope(k, n).transpose(-2, -1))

    assert score(3, 1) == pytest.approx(score(500, 498), abs=1e-5)  # float32 angles: rounding at position 500
    assert score(3, 1) != pytest.approx(score(3, 2), abs=1e-3)
    assert rope(q, 77).norm() == pytest.approx(q.norm())  # a rotation keeps the length


def test_rope_is_a_multiplication_by_unit_complex_numbers():
    rope = te.RotaryPositionalEncoding(8, max_len=30)
    x = torch.randn(2, 3, 5, 8)
    turned = rope(x, offset=4)
    pairs = torch.view_as_complex(x.reshape(2, 3, 5, 4, 2))  # (…, 5, 4) complex
    angle = te.rotary_angles(30, 8)[4:9]  # (5, 4)
    expected = torch.view_as_real(pairs * torch.polar(torch.ones_like(angle), angle).to(pairs.dtype))
    assert torch.allclose(turned, expected.reshape(2, 3, 5, 8), atol=1e-6)
    assert torch.allclose(te.rotary_angles(30, 8), te.sinusoidal_table(30, 8).new_tensor(
        [[p / 10000 ** (2 * i / 8) for i in range(4)] for p in range(30)], dtype=torch.float64))


def test_rotate_half_to_pairs_maps_the_rotate_half_layout_onto_ours():
    heads, d_k, d_model = 2, 8, 6
    g = torch.Generator().manual_seed(0)
    w = torch.randn(heads * d_k, d_model, generator=g)
    x = torch.randn(5, d_model, generator=g)
    angle = te.rotary_angles(5, d_k).float()  # (5, d_k / 2)
    cos, sin = torch.cat([angle.cos()] * 2, -1), torch.cat([angle.sin()] * 2, -1)  # (5, d_k), their layout
    theirs = (x @ w.t()).view(5, heads, d_k)
    first, second = theirs[..., : d_k // 2], theirs[..., d_k // 2 :]
    theirs = theirs * cos[:, None] + torch.cat([-second, first], -1) * sin[:, None]  # rotate half
    ours = te.RotaryPositionalEncoding(d_k, 5)((x @ rotate_half_to_pairs(w, heads).t()).view(5, heads, d_k)
                                               .transpose(0, 1)).transpose(0, 1)  # (5, heads, d_k)
    order = torch.stack((torch.arange(4), torch.arange(4) + 4), 1).flatten()
    assert torch.allclose(ours, theirs[..., order], atol=1e-6)


def test_rmsnorm_matches_pytorch_and_the_formula():
    x = torch.randn(3, 5, 16)
    ours = te.RMSNorm(16, eps=1e-6)
    with torch.no_grad():
        ours.gamma.uniform_(0.5, 1.5)
    theirs = torch.nn.RMSNorm(16, eps=1e-6)
    theirs.weight.data.copy_(ours.gamma)
    by_hand = ours.gamma * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    assert torch.allclose(ours(x), theirs(x), atol=1e-6) and torch.allclose(ours(x), by_hand, atol=1e-6)
    assert te.count_parameters(ours) == 16 and te.count_parameters(te.LayerNorm(16)) == 32


def test_swiglu_has_the_parameters_of_the_relu_block_it_replaces():
    for d_model in (64, 512, 4096):
        width = swiglu_width(4 * d_model)
        swiglu = te.SwiGLUFeedForward(d_model, width)
        relu = te.PositionwiseFeedForward(d_model, 4 * d_model, bias=False)
        assert abs(te.count_parameters(swiglu) / te.count_parameters(relu) - 1) < 0.01
    assert swiglu_width(4 * 4096, multiple_of=256) == 11008  # LLaMA 7B
    block = te.SwiGLUFeedForward(8, 12)
    x = torch.randn(2, 3, 8)
    expected = (F.silu(x @ block.w_1.weight.t()) * (x @ block.w_3.weight.t())) @ block.w_2.weight.t()
    assert torch.allclose(block(x), expected, atol=1e-6)


def test_gelu_feed_forward_uses_the_tanh_approximation():
    block = te.PositionwiseFeedForward(8, 16, activation="gelu")
    x = torch.randn(4, 8)
    h = x @ block.w_1.weight.t() + block.w_1.bias
    tanh_gelu = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    assert torch.allclose(block(x), tanh_gelu @ block.w_2.weight.t() + block.w_2.bias, atol=1e-6)


def test_a_language_model_learns_with_fit():
    from transformer_edu import data, training

    sentences = ["the cat ate the fish", "the dog chased the cat", "I go to school"] * 20
    vocab = data.Vocab.build(sentences)
    model = LanguageModel(LanguageModelConfig(len(vocab), **{**SMALL, "dropout": 0.0}))
    batches = data.text_windows(sentences, vocab, 8, 8)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss = training.LabelSmoothingLoss(len(vocab), 0.0)
    before = training.evaluate(model, batches)["nll"]
    training.fit(model, batches, epochs=5, optimizer=optimizer, loss_fn=loss, progress=False)
    assert training.evaluate(model, batches)["nll"] < 0.3 * before


@pytest.mark.parametrize(
    "settings, error, match",
    [
        (dict(norm="batch"), ValueError, "norm must be one of"),
        (dict(positional="alibi"), ValueError, "positional must be one of"),
        (dict(feed_forward="geglu"), ValueError, "feed_forward must be one of"),
        (dict(n_kv_heads=3), ValueError, "n_kv_heads = 3 must divide n_heads = 4"),
        (dict(n_kv_heads=0), ValueError, "n_kv_heads must be at least 1"),
        (dict(norm_first=1), TypeError, r"norm_first must be a bool \(True or False\)"),
        (dict(d_model=30, n_heads=6, positional="rope"), ValueError, "d_k must be even"),
        (dict(pad_id=V), ValueError, "pad_id"),
    ],
)
def test_a_bad_config_is_named(settings, error, match):
    with pytest.raises(error, match=match):
        LanguageModelConfig(V, **{**SMALL, **settings})


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda m, p: generate(m, p.float(), max_new_tokens=3), TypeError, "prompt must hold integer token ids"),
        (lambda m, p: generate(m, p[0], max_new_tokens=3), ValueError, "prompt must be 2-D"),
        (lambda m, p: generate(m, torch.cat([p, p[:, :1] * 0], 1), max_new_tokens=3), ValueError,
         "prompt holds the padding id 0"),
        (lambda m, p: generate(m, p, max_new_tokens=45), ValueError, "exceeds the model's max_len = 48"),
        (lambda m, p: generate(m, p, max_new_tokens=3, top_p=0.0), ValueError, r"top_p must be in \(0.0, 1.0\]"),
        (lambda m, p: generate(m, p, max_new_tokens=3, top_k=0), ValueError, "top_k must be at least 1"),
        (lambda m, p: generate(m, p, max_new_tokens=3, temperature=0), ValueError, "temperature"),
        (lambda m, p: generate(m, p, max_new_tokens=3, eos_id=0), ValueError, "eos_id = 0 is never generated"),
        (lambda m, p: generate(m, p, max_new_tokens=3, never=[V]), ValueError, "never = 41 is outside"),
        (lambda m, p: m(p, cache=m.new_cache(5)), ValueError, "capacity = 5"),
        (lambda m, p: m(p + V), ValueError, "outside the vocabulary"),
        (lambda m, p: complete(m, [], max_new_tokens=3), ValueError, "prompts is empty"),
    ],
)
def test_bad_inputs_are_named(call, error, match):
    model = make("RoPE")
    with pytest.raises(error, match=match):
        call(model, tokens(2, 6, V, seed=8))


def test_an_attention_with_rotary_positions_refuses_what_it_cannot_rotate():
    with pytest.raises(ValueError, match="rotates vectors of width d_k = 8, but the heads have d_k = 4"):
        MultiHeadAttention(16, 4, rotary=te.RotaryPositionalEncoding(8))
    attention = MultiHeadAttention(16, 4, rotary=te.RotaryPositionalEncoding(4, max_len=10))
    x, memory = torch.randn(1, 3, 16), torch.randn(1, 5, 16)
    with pytest.raises(ValueError, match="query and key must have the same length"):
        attention(x, memory, memory)
    with pytest.raises(ValueError, match=r"positions 0…11 are outside the table of max_len = 10"):
        attention(*(torch.randn(1, 12, 16),) * 3)


def test_sampling_distribution_keeps_the_nucleus_and_the_top_k():
    from transformer_edu.decoding import sampling_distribution

    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    assert torch.allclose(sampling_distribution(logits), logits.exp(), atol=1e-6)
    nucleus = sampling_distribution(logits, top_p=0.8)  # 0.5 + 0.3 reach 0.8
    assert torch.allclose(nucleus, torch.tensor([[0.625, 0.375, 0.0, 0.0]]), atol=1e-6)
    assert torch.equal(sampling_distribution(logits, top_p=0.81) > 0, torch.tensor([[True, True, True, False]]))
    assert torch.equal(sampling_distribution(logits, top_p=1e-9) > 0, torch.tensor([[True, False, False, False]]))
    top2 = sampling_distribution(logits, top_k=2)
    assert torch.allclose(top2, torch.tensor([[0.625, 0.375, 0.0, 0.0]]), atol=1e-6)
    cold = sampling_distribution(logits, temperature=0.5)
    assert torch.allclose(cold, F.softmax(2 * logits, -1), atol=1e-6)
    shuffled = logits[:, [2, 0, 3, 1]]
    assert torch.equal(sampling_distribution(shuffled, top_p=0.8) > 0, torch.tensor([[False, True, False, True]]))


@pytest.fixture(scope="module")
def transformers():
    return pytest.importorskip("transformers")


@pytest.mark.parametrize("tie, kv_heads", [(False, 2), (True, 4), (False, 1)])
def test_llama_parity_with_hugging_face(transformers, tie, kv_heads):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=V, hidden_size=32, intermediate_size=86, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=kv_heads, max_position_embeddings=48, rms_norm_eps=1e-6, tie_word_embeddings=tie,
    )
    config._attn_implementation = "eager"
    theirs = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_(0.0, 0.3)  # far from their initial values (norms of 1, …)
    ours = make("llama", n_kv_heads=kv_heads, tie_output=tie)
    load_llama_weights(ours, theirs.state_dict())
    x = tokens(3, 17, V, seed=9)
    with torch.no_grad():
        gap = (ours(x) - theirs(x).logits).abs().max()
    assert gap < 1e-5


def test_gpt2_parity_with_hugging_face(transformers):
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=V, n_embd=32, n_layer=2, n_head=4, n_positions=48,
                                     bos_token_id=1, eos_token_id=2)
    config._attn_implementation = "eager"
    theirs = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_(0.0, 0.3)
    ours = make("gpt2", d_ff=128)
    load_gpt2_weights(ours, theirs.state_dict())
    x = tokens(3, 17, V, seed=10)
    with torch.no_grad():
        gap = (ours(x) - theirs(x).logits).abs().max()
    assert gap < 1e-5


def test_loading_refuses_a_model_built_with_other_choices():
    with pytest.raises(ValueError, match="norm='layer'.*needs norm='rms'"):
        load_llama_weights(make(), {})
    with pytest.raises(ValueError, match="has no 'model.embed_tokens.weight'"):
        load_llama_weights(make("llama"), {})
    with pytest.raises(ValueError, match="positional='sinusoidal'"):
        load_gpt2_weights(make(), {})


def test_prompt_batches_put_the_same_pairs_in_the_same_batches_as_make_batches():
    from transformer_edu import data

    pairs = data.toy_translation_splits(0)["train"][:300]
    vocab = data.prompt_vocab(pairs)
    src_vocab = data.Vocab.build([k for k, _ in pairs])
    tgt_vocab = data.Vocab.build([e for _, e in pairs])
    assert vocab.stoi[data.SEP] == 4
    ours = list(data.prompt_batches(pairs, vocab, 32, shuffle=True, seed=7, sort_by_length=True))
    theirs = list(data.make_batches(pairs, src_vocab, tgt_vocab, 32, shuffle=True, seed=7, sort_by_length=True))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        english = [vocab.decode(row) for row in a.tgt_out]  # the answer, up to <eos>
        assert english == [tgt_vocab.decode(row) for row in b.tgt_out]
        assert a.n_tokens == b.n_tokens  # the loss counts the same tokens
        for tokens, target in zip(a.tokens.tolist(), a.tgt_out.tolist()):
            sep = tokens.index(4)
            assert set(target[:sep]) == {vocab.pad_id}  # the prompt's positions do not count
            assert target[sep] != vocab.pad_id  # the position of <sep> predicts the first word


def test_prompt_vocab_refuses_the_separator_in_the_text():
    from transformer_edu import data

    with pytest.raises(ValueError, match="contain the separator"):
        data.prompt_vocab([("a <sep> b", "c")])
    with pytest.raises(ValueError, match="has no '<sep>'"):
        data.prompt_ids("a", data.Vocab(["a"]))
