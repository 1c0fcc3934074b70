"""The figures of Chapters 1 and 2: the attention-mask explorer and the mask and heads playgrounds."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence

import torch

from ..attention import MultiHeadAttention, scaled_dot_product_attention
from ..masks import causal_mask, padding_mask
from ..positional import sinusoidal_table
from . import viz
from .. import _validate
from .controls import Buttons, Slider, State
from .explorer import Explorer, heatmap_panel
from .live import LiveExplorer, Text, Toggle

__all__ = [
    "MAX_TOKENS",
    "heads_playground",
    "heads_state",
    "mask_explorer",
    "mask_playground",
    "mask_state",
]


_MASK_MODES = (
    ("no mask", False, False),
    ("padding mask", True, False),
    ("causal mask", False, True),
    ("padding + causal", True, True),
)


def _mask_explorer_states(
    tokens: list[str], max_pad: int, d_model: int, seed: int
) -> list[dict]:
    """Attention weights and output changes for every pad count and mask."""
    generator = torch.Generator().manual_seed(seed)
    vocab = sorted(set(tokens)) + ["<pad>"]
    # one vector per word
    embedding = torch.randn(len(vocab), d_model, generator=generator)
    w_q, w_k, w_v = (
        torch.randn(d_model, d_model, generator=generator)
        / math.sqrt(d_model)
        for _ in range(3)
    )
    pad_id = len(vocab) - 1

    def attend(n_pad: int, use_padding: bool, use_causal: bool):
        ids = torch.tensor(
            [[vocab.index(t) for t in tokens] + [pad_id] * n_pad]
        )  # (1, L)
        # (1, 1, L, D): batch and one head, as the masks expect
        x = embedding[ids][:, None]
        length = ids.shape[1]
        allowed = torch.ones(1, 1, length, length, dtype=torch.bool)
        if use_padding:
            allowed = allowed & padding_mask(ids, pad_id)  # (1, 1, 1, L)
        if use_causal:
            allowed = allowed & causal_mask(length)  # (1, 1, L, L)
        out, weights = scaled_dot_product_attention(
            x @ w_q, x @ w_k, x @ w_v, allowed
        )
        # (L, D), (L, L), (L, L)
        return out[0, 0], weights[0, 0], allowed[0, 0].expand_as(weights[0, 0])

    states = []
    for n_pad in range(max_pad + 1):
        panels = []
        for name, use_padding, use_causal in _MASK_MODES:
            out, weights, allowed = attend(n_pad, use_padding, use_causal)
            # the same sentence without padding
            reference, _, _ = attend(0, use_padding, use_causal)
            moved = (out[: len(tokens)] - reference).norm(dim=-1).max().item()
            panels.append(
                {
                    "name": name,
                    "weights": weights,
                    "allowed": allowed,
                    "moved": moved,
                }
            )
        states.append(
            {
                "n_pad": n_pad,
                "labels": tokens + ["<pad>"] * n_pad,
                "panels": panels,
            }
        )
    return states


def mask_explorer(
    sentence: str = "the cat sat on the mat",
    max_pad: int = 3,
    start_pad: int = 2,
    d_model: int = 16,
    seed: int = 0,
    explorer_id: str = "ch01-mask-explorer",
) -> Explorer:
    """The attention-mask explorer of Chapter 1, precomputed for the book.

    A real sentence, embedded with a seeded random table and projected by
    seeded random W_Q, W_K, W_V, goes through
    :func:`~transformer_edu.scaled_dot_product_attention` with four masks:
    none, padding (:func:`~transformer_edu.padding_mask`), causal
    (:func:`~transformer_edu.causal_mask`) and both; one heatmap panel each.
    Two rows of buttons: how many ``<pad>`` tokens follow the sentence
    (0 … ``max_pad``), and which query token's row to outline.

    Each panel's title gives how far the real tokens' outputs moved compared
    with the unpadded sentence (the largest norm of the change): 0 exactly
    when the mask keeps the pads out. Blocked cells are empty (grey).

    Args:
        sentence: space-separated tokens.
        max_pad: the largest number of pad tokens offered (0 … 8).
        start_pad: the number of pads shown first.
        d_model: width of the random embeddings.
        seed: seed of the embeddings and projections.
        explorer_id: the explorer's HTML id.

    Returns:
        The :class:`Explorer`; controls ``pads`` and ``query`` (-1: none).
    """
    if not isinstance(sentence, str) or not sentence.split():
        raise ValueError(
            "sentence must be a non-empty string of space-separated tokens, "
            f"got {sentence!r}"
        )
    tokens = sentence.split()
    if "<pad>" in tokens:
        raise ValueError(
            "sentence must not contain '<pad>': the figure adds the pads"
        )
    _validate.int_in_range("max_pad", max_pad, 0, 8)
    _validate.int_in_range("start_pad", start_pad, 0, max_pad, why=" (max_pad)")
    _validate.positive_int("d_model", d_model)
    computed = _mask_explorer_states(tokens, max_pad, d_model, seed)

    def draw(pads: int, query: int) -> State:
        state = computed[pads]
        panels = [
            heatmap_panel(
                panel["weights"],
                state["labels"],
                title=f"{panel['name']}: moved {panel['moved']:.4f}",
                blocked=~panel["allowed"],
                highlight_row=None if query < 0 else query,
                height=380,
            )
            for panel in state["panels"]
        ]
        moved = ", ".join(
            f"{panel['name']} {panel['moved']:.4f}"
            for panel in state["panels"]
        )
        plural = "s" if pads != 1 else ""
        summary = (
            f"{pads} pad token{plural} after the sentence. Largest change of "
            f"a real token's output: {moved}."
        )
        if query >= 0:
            summary += f" Outlined: the row of query {tokens[query]!r}."
        return State(panels, summary)

    return Explorer(
        explorer_id,
        title="Attention weights under four masks",
        description=(
            f"Attention of the sentence “{sentence}” followed by pad tokens, "
            "under no mask, the padding mask, the causal mask and both. Rows "
            "are queries, columns keys; white is weight 0, dark blue 1, grey "
            "a blocked cell. Each title says how far the real tokens' "
            "outputs moved (the largest norm of the change) compared with "
            "the unpadded sentence: 0 when the mask keeps the pads out."
        ),
        controls=[
            Buttons(
                "pads",
                range(max_pad + 1),
                labels=[
                    f"{n} pad{'s' if n != 1 else ''}"
                    for n in range(max_pad + 1)
                ],
                label="pad tokens",
                start=start_pad,
            ),
            Buttons(
                "query",
                range(-1, len(tokens)),
                labels=["none"] + tokens,
                label="outline query",
                start=-1,
            ),
        ],
        states=draw,
    )


MAX_TOKENS = 16
"""The most tokens a playground takes (its figure stays readable)."""


def _tokens(name: str, text, limit: int = MAX_TOKENS) -> list[str]:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    tokens = text.split()
    if not tokens:
        raise ValueError(f"{name} must hold at least one token, got {text!r}")
    if len(tokens) > limit:
        raise ValueError(
            f"{name} must hold at most {limit} tokens, got {len(tokens)}"
        )
    if "<pad>" in tokens:
        raise ValueError(
            f"{name} must not contain '<pad>': the pads control adds them"
        )
    return tokens


def _word_vectors(words: Sequence[str], d_model: int, seed: int):
    """A seeded random vector per word, the same whatever the other words
    are (the seed mixes in a checksum of the word). (L, D)"""
    rows = []
    for word in words:
        generator = torch.Generator().manual_seed(
            1_000_003 * seed + zlib.crc32(word.encode("utf-8"))
        )
        rows.append(torch.randn(d_model, generator=generator))
    return torch.stack(rows)


def _matrix_text(values, rows: Sequence[str], cols: Sequence[str]) -> str:
    """A small matrix as aligned text, 3 decimals, blocked (NaN) as ·."""
    width = max(viz.text_width(t) for t in rows)
    lines = []
    for label, row in zip(rows, values.tolist()):
        cells = " ".join(
            "    · " if math.isnan(v) else f"{v:6.3f}" for v in row
        )
        pad = " " * (width - viz.text_width(label))
        lines.append(f"{label}{pad} {cells}")
    return "\n".join(lines)


def _attention_call(attention, q, k, v, mask):
    result = attention(q, k, v, mask)
    if not (
        isinstance(result, tuple)
        and len(result) == 2
        and all(isinstance(t, torch.Tensor) for t in result)
    ):
        raise TypeError(
            "attention must return (output, weights) as two tensors, like "
            "te.scaled_dot_product_attention; got "
            f"{type(result).__name__}"
        )
    out, weights = result
    length = q.shape[-2]
    if tuple(weights.shape[-2:]) != (length, length) or tuple(
        out.shape
    ) != tuple(v.shape):
        raise ValueError(
            f"attention returned output {tuple(out.shape)} and weights "
            f"{tuple(weights.shape)}; expected {tuple(v.shape)} and "
            f"(…, {length}, {length})"
        )
    return out, weights


def mask_state(
    tokens: str,
    pads: int = 2,
    padding: bool = True,
    causal: bool = False,
    polarity: str = "allowed",
    *,
    attention: Callable | None = None,
    d_model: int = 16,
    seed: int = 0,
) -> State:
    """One state of the mask playground of Chapter 1.

    The tokens, followed by ``pads`` ``<pad>`` tokens, get seeded random
    vectors (a word's vector does not depend on the other words) and seeded
    random projections W_Q, W_K, W_V; ``attention`` attends with the padding
    mask (:func:`~transformer_edu.padding_mask`) and the causal mask
    (:func:`~transformer_edu.causal_mask`) as chosen.

    Args:
        tokens: space-separated tokens (1 … :data:`MAX_TOKENS`).
        pads: how many ``<pad>`` tokens follow (0 … 8).
        padding, causal: apply the padding mask, the causal mask.
        polarity: ``"allowed"`` passes the masks as the book writes them
            (``True`` = may attend); ``"blocked"`` passes their negation,
            the mistake of a reader who takes ``True`` for blocked.
        attention: ``attention(query, key, value, mask)`` returning
            ``(output, weights)``, e.g. your own; default
            :func:`~transformer_edu.scaled_dot_product_attention`.
        d_model: width of the vectors.
        seed: seed of the vectors and projections.

    Returns:
        The :class:`~transformer_edu.figures.controls.State`: the weights (L, L),
        blocked cells empty, and the outputs (L, D); its summary gives the
        largest change of a real token's output caused by the pads, its
        details the weights to 3 decimals.
    """
    words = _tokens("tokens", tokens)
    pads = _validate.int_in_range("pads", pads, 0, 8)
    d_model = _validate.int_in_range("d_model", d_model, 1, 256)
    if polarity not in ("allowed", "blocked"):
        raise ValueError(
            f"polarity must be 'allowed' or 'blocked', got {polarity!r}"
        )
    attention = (
        scaled_dot_product_attention if attention is None else attention
    )
    if not callable(attention):
        raise TypeError(
            f"attention must be a function, got {type(attention).__name__}"
        )
    generator = torch.Generator().manual_seed(seed)
    w_q, w_k, w_v = (
        torch.randn(d_model, d_model, generator=generator) / math.sqrt(d_model)
        for _ in range(3)
    )
    vectors = _word_vectors(sorted(set(words)) + ["<pad>"], d_model, seed)
    index = {w: i for i, w in enumerate(sorted(set(words)) + ["<pad>"])}

    def run(n_pad: int):
        labels = words + ["<pad>"] * n_pad
        ids = torch.tensor([[index[w] for w in labels]])  # (1, L)
        x = vectors[ids][:, None]  # (B, H, L, D) = (1, 1, L, D)
        length = len(labels)
        allowed = torch.ones(1, 1, length, length, dtype=torch.bool)
        if padding:
            allowed = allowed & padding_mask(ids, index["<pad>"])
        if causal:
            allowed = allowed & causal_mask(length)
        passed = allowed if polarity == "allowed" else ~allowed
        out, weights = _attention_call(
            attention, x @ w_q, x @ w_k, x @ w_v, passed
        )
        # (L, D), (L, L), (L, L)
        return out[0, 0], weights.reshape(length, length), passed[0, 0]

    out, weights, passed = run(pads)
    alone, _, _ = run(0)
    moved = (out[: len(words)] - alone).norm(dim=-1).max().item()
    labels = words + ["<pad>"] * pads
    title = (
        f"padding mask {'on' if padding else 'off'}, causal mask "
        f"{'on' if causal else 'off'}"
        + (", polarity flipped" if polarity == "blocked" else "")
    )
    panels = [
        heatmap_panel(
            weights.detach(),
            labels,
            title=f"weights: {title}",
            blocked=~passed,
            height=360,
        ),
        heatmap_panel(
            out.detach(),
            labels,
            [str(d) for d in range(d_model)],
            title="outputs (one row per token)",
            signed=True,
            zmin=-2.0,
            zmax=2.0,
            value_name="value",
            xlabel="dimension",
            ylabel="token",
            height=360,
        ),
    ]
    flipped = (
        " The mask's polarity is flipped: every query attends to exactly the "
        "keys it should not (a row with none left gets no weight)."
        if polarity == "blocked"
        else ""
    )
    plural = "s" if pads != 1 else ""
    summary = (
        f"{len(words)} tokens and {pads} pad{plural}; {title}. Largest "
        f"change of a real token's output caused by the pads: {moved:.4f}."
        + flipped
    )
    shown = weights.detach().masked_fill(~passed, float("nan"))
    details = "weights (rows: queries, · blocked)\n" + _matrix_text(
        shown, labels, labels
    )
    return State(panels, summary, details)


def mask_playground(
    tokens: str = "the cat sat on the mat",
    *,
    attention: Callable | None = None,
    d_model: int = 16,
    seed: int = 0,
) -> LiveExplorer:
    """Chapter 1's mask playground: your tokens, the masks, your attention.

    A text box for the tokens, a slider for the number of pads, check boxes
    for the padding and causal masks and buttons for the mask's polarity;
    see :func:`mask_state`.

    Args:
        tokens: the tokens shown first.
        attention: your ``attention(query, key, value, mask)`` returning
            ``(output, weights)``; default the package's.
        d_model, seed: as in :func:`mask_state`.

    Returns:
        The :class:`LiveExplorer`.
    """
    return LiveExplorer(
        mask_state,
        title="Mask playground: your tokens, the masks, "
        + ("your attention" if attention is not None else "the attention"),
        description="Type tokens (Enter redraws), add pads, switch the "
        "masks. Left: the attention weights, rows are queries, columns "
        "keys, grey cells blocked. Right: each token's output.",
        controls=[
            Text("tokens", tokens),
            Slider("pads", range(5), start=2, label="pad tokens"),
            Toggle("padding", True, label="padding mask"),
            Toggle("causal", False, label="causal mask"),
            Buttons(
                "polarity",
                ["allowed", "blocked"],
                labels=["True = may attend", "True = blocked (wrong)"],
                label="mask passed as",
            ),
        ],
        fixed={"attention": attention, "d_model": d_model, "seed": seed},
    )


def heads_state(
    tokens: str,
    n_heads: int = 4,
    causal: bool = False,
    *,
    d_model: int = 16,
    seed: int = 0,
) -> State:
    """One state of the heads playground of Chapter 2.

    The tokens get seeded random vectors plus the sinusoidal encoding of
    their positions, and go through a seeded, untrained
    :class:`~transformer_edu.MultiHeadAttention` (self-attention).

    Args:
        tokens: space-separated tokens (1 … :data:`MAX_TOKENS`).
        n_heads: the number of heads H (divides ``d_model``).
        causal: apply the causal mask.
        d_model: the width D.
        seed: seed of the vectors and of the layer's weights.

    Returns:
        The :class:`~transformer_edu.figures.controls.State`: one heatmap per
        head; its details give each head's strongest key for each query.
    """

    words = _tokens("tokens", tokens)
    n_heads = _validate.int_in_range("n_heads", n_heads, 1, 16)
    d_model = _validate.int_in_range("d_model", d_model, 2, 256)
    if d_model % n_heads:
        raise ValueError(
            f"n_heads must divide d_model = {d_model}, got {n_heads}"
        )
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    layer = MultiHeadAttention(d_model, n_heads).eval()
    torch.random.set_rng_state(generator_state)  # the caller's draws go on
    length = len(words)
    x = _word_vectors(words, d_model, seed) + sinusoidal_table(
        length, d_model
    )  # (L, D)
    mask = causal_mask(length) if causal else None
    with torch.no_grad():
        _, weights = layer(x[None], x[None], x[None], mask)  # (1, H, L, L)
    weights = weights[0]  # (H, L, L)
    blocked = None if mask is None else ~mask[0, 0]
    panels = [
        heatmap_panel(
            weights[h],
            words,
            title=f"head {h + 1} of {n_heads}",
            blocked=blocked,
            colorbar=False,
            height=260,
        )
        for h in range(n_heads)
    ]
    strongest = weights.argmax(-1)  # (H, L)
    details = "\n".join(
        f"head {h + 1}: "
        + ", ".join(
            f"{q}→{words[k]}" for q, k in zip(words, strongest[h].tolist())
        )
        for h in range(n_heads)
    )
    summary = (
        f"{n_heads} heads of width d_k = {d_model // n_heads} on "
        f"{length} tokens, causal mask {'on' if causal else 'off'}; "
        "each query's strongest key per head is printed below."
    )
    return State(panels, summary, details)


def heads_playground(
    tokens: str = "the cat sat on the mat", *, d_model: int = 16, seed=0
) -> LiveExplorer:
    """Chapter 2's heads playground: every head of an untrained layer on
    your tokens, with 1, 2, 4 or 8 heads and the causal mask switchable.

    Args:
        tokens: the tokens shown first.
        d_model, seed: as in :func:`heads_state`.

    Returns:
        The :class:`LiveExplorer`.
    """
    return LiveExplorer(
        heads_state,
        title="Heads on your tokens",
        description="Each head's attention weights (rows are queries, "
        "columns keys). An untrained layer: the heads differ because their "
        "random projections do.",
        controls=[
            Text("tokens", tokens),
            Buttons(
                "n_heads",
                [1, 2, 4, 8],
                labels=["1 head", "2 heads", "4 heads", "8 heads"],
                start=4,
                label="heads",
            ),
            Toggle("causal", False, label="causal mask"),
        ],
        fixed={"d_model": d_model, "seed": seed},
    )
