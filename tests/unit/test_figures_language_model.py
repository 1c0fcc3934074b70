"""Chapter 10's figures: RoPE's rotation of a query and a key, and the key/value cache as heads are grouped."""

from __future__ import annotations

import math

import pytest
import torch

import transformer_edu as te
from transformer_edu import figures


@pytest.fixture(scope="module")
def rope() -> figures.Explorer:
    return figures.rope_explorer(d_k=16, pairs=(0, 7), positions=(0, 50, 500), offsets=(0, 3, 6))


def test_rope_explorer_has_pair_buttons_and_two_sliders(rope):
    pair, position, offset = rope.controls
    assert isinstance(pair, figures.Buttons) and pair.values == (0, 7)
    assert isinstance(position, figures.Slider) and position.values == (0, 50, 500)
    assert isinstance(offset, figures.Slider) and offset.values == (0, 3, 6)
    plane, score = rope.start_state.panels
    assert [t["type"] for t in plane.data] == ["scatter"] * 4  # two arrows, two tips
    assert [t["type"] for t in score.data] == ["scatter"] * 3


def test_rope_scores_and_angles_do_not_depend_on_the_position(rope):
    for pair in (0, 7):
        for offset in (0, 3, 6):
            states = [rope.state(pair=pair, position=m, offset=offset) for m in (0, 50, 500)]
            curves = [figures.rounded(s.panels[1].data[0]["y"], 6) for s in states]
            assert curves[0] == curves[1] == curves[2]
            tips = [(s.panels[0].data[1]["x"][0], s.panels[0].data[1]["y"][0]) for s in states]
            keys = [(s.panels[0].data[3]["x"][0], s.panels[0].data[3]["y"][0]) for s in states]
            angles = [math.atan2(k[1], k[0]) - math.atan2(q[1], q[0]) for q, k in zip(tips, keys)]
            assert all(abs(math.remainder(a - angles[0], 2 * math.pi)) < 1e-6 for a in angles)


def test_rope_score_is_the_package_rotation_in_attention(rope):
    # The explorer's score at offset 6 is q · k / √d_k after te.RotaryPositionalEncoding.
    from transformer_edu.figures.language_model_figures import _pair_vectors

    q, k = _pair_vectors(16, 0)
    rotary = te.RotaryPositionalEncoding(16, 600).double()
    expected = float(rotary(q[None], 50) @ rotary(k[None], 56).T) / 4
    state = rope.state(pair=0, position=50, offset=6)
    assert state.panels[1].data[2]["y"][0] == pytest.approx(expected, abs=1e-6)
    assert f"{expected:.3f}" in state.summary


def test_rope_playground_takes_any_head_width_and_names_a_bad_pair():
    live = figures.rope_playground()
    state = live.state(d_k=64, pair=31, position=900, offset=6)
    assert "pair 31" in state.summary
    with pytest.raises(ValueError, match="pair must be in 0 … 3"):
        live.state(d_k=8, pair=7)
    with pytest.raises(ValueError, match="d_k must be even"):
        figures.rope_explorer(d_k=15)


def test_cache_bytes_is_what_the_kv_cache_holds():
    config = te.LanguageModelConfig(50, d_model=32, n_heads=4, n_kv_heads=2, d_ff=64, n_layers=3, max_len=40)
    model = te.LanguageModel(config).eval()
    cache = model.new_cache()
    with torch.no_grad():
        model(torch.randint(1, 50, (2, 9)), cache=cache)
    assert cache.nbytes == 2 * figures.cache_bytes(3, 2, 8, 9, bytes_per_number=4)  # two sequences


def test_kv_cache_explorer_offers_every_divisor_and_sizes_the_cache():
    explorer = figures.kv_cache_explorer(n_layers=80, n_heads=64, d_k=128, lengths=(4096,))
    heads, length = explorer.controls
    assert heads.values == (64, 32, 16, 8, 4, 2, 1) and length.values == (4096,)
    state = explorer.state(kv_heads=8)
    grid, sizes = state.panels
    z = grid.data[0]["z"]
    assert len(z) == 64 and all(sum(row) == 1 for row in z)  # each query head reads one key/value head
    assert [row.index(1) for row in z] == [q // 8 for q in range(64)]
    gib = dict(zip(sizes.data[0]["x"], sizes.data[0]["y"]))
    assert gib["H_kv = 64"] == pytest.approx(10.0) and gib["H_kv = 8"] == pytest.approx(1.25)
    assert "320 KiB per token" in state.summary and "8 times less" in state.summary
    live = explorer.live()
    assert live.figure(kv_heads=1) is not None


def test_text_windows_overlap_with_a_stride():
    sentences = ["a b c", "d e", "f g h i"] * 5
    vocab = te.Vocab.build(sentences)
    plain = te.data.text_windows(sentences, vocab, 4, 100)[0]
    dense = te.data.text_windows(sentences, vocab, 4, 100, stride=1)[0]
    assert len(plain) == 14 and len(dense) == 56  # 60 ids: windows of 5 start every 4, or every 1
    assert torch.equal(dense.tokens[4], plain.tokens[1]) and torch.equal(dense.tgt_out[1, :3], dense.tokens[2, :3])
    assert dense.n_tokens == dense.tokens.numel()
