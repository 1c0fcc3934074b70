"""Draw the book's map of the Transformer: every box labelled with its chapter.

Writes ``book/images/architecture.svg`` (committed; the front page shows it).
Run from the repository root after changing this script::

    python scripts/draw_architecture.py

The picture follows Figure 1 of Vaswani et al. (2017): the encoder stack on the
left, the decoder stack on the right, the data flowing upwards. Text stays text
in the SVG (selectable, searchable, small); the output carries no date, so it
only changes when the drawing does.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

OUTPUT = Path(__file__).resolve().parent.parent / "book" / "images" / "architecture.svg"

# One colour per part of the book.
PART_COLOURS = {
    1: ("#dbe9f6", "#2b5c8a"),  # Part I, Foundations: fill, edge
    2: ("#fde7c8", "#b5651d"),  # Part II, The architecture
    3: ("#d9f0dc", "#2e7d32"),  # Part III, Learning and generating
    0: ("#f2f2f2", "#666666"),  # data, not a chapter
}
CHAPTER_PART = {1: 1, 2: 1, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 3}


def box(ax, x, y, w, h, text, chapter=None, part=None, fontsize=9.5, weight="normal"):
    """A rounded box centred at (x, y) with a chapter badge on its right edge."""
    part = CHAPTER_PART.get(chapter, 0) if part is None else part
    fill, edge = PART_COLOURS[part]
    ax.add_patch(FancyBboxPatch(
        (x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.012",
        facecolor=fill, edgecolor=edge, linewidth=1.2, zorder=2,
    ))
    ax.text(x - (0.025 if chapter else 0), y, text, ha="center", va="center",
            fontsize=fontsize, weight=weight, color="#1a1a1a", zorder=3)
    if chapter:
        ax.text(x + w / 2 - 0.008, y, f"Ch. {chapter}", ha="right", va="center",
                fontsize=8, weight="bold", color=edge, zorder=3)


def arrow(ax, start, end, colour="#444444", style="-|>", connection="arc3"):
    ax.add_patch(FancyArrowPatch(
        start, end, arrowstyle=style, mutation_scale=11, linewidth=1.1,
        color=colour, connectionstyle=connection, zorder=1, shrinkA=0, shrinkB=0,
    ))


def residual(ax, x, w, y_from, y_to, colour=PART_COLOURS[1][1]):
    """A residual connection: from below a sublayer, round its left side, into add & norm."""
    side = x - w / 2 - 0.02
    ax.plot([x, side, side], [y_from, y_from, y_to], color=colour, linewidth=1.0, zorder=1)
    arrow(ax, (side, y_to), (x - w / 2, y_to), colour=colour)


def stack_frame(ax, x, y0, y1, w, label, chapter):
    """The dashed frame of a stack of N identical layers."""
    fill, edge = PART_COLOURS[CHAPTER_PART[chapter]]
    ax.add_patch(FancyBboxPatch(
        (x - w / 2, y0), w, y1 - y0, boxstyle="round,pad=0,rounding_size=0.02",
        facecolor="none", edgecolor=edge, linewidth=1.4, linestyle=(0, (5, 3)), zorder=0,
    ))
    ax.text(x - w / 2 + 0.012, y1 - 0.012, label, ha="left", va="top",
            fontsize=9, weight="bold", color=edge)
    ax.text(x + w / 2 - 0.012, y1 - 0.012, f"Ch. {chapter}", ha="right", va="top",
            fontsize=9, weight="bold", color=edge)


def draw() -> plt.Figure:
    fig = plt.figure(figsize=(7.6, 9.4))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.24)
    ax.axis("off")

    w, h = 0.36, 0.042
    ex, dx = 0.25, 0.74  # centres of the encoder and decoder columns

    # Inputs
    box(ax, ex, 0.035, w, h, "source tokens  (B, S)", part=0)
    box(ax, dx, 0.035, w, h, "target tokens, shifted right  (B, T)", part=0, fontsize=9)
    box(ax, ex, 0.11, w, h, "embedding × √D", 5)
    box(ax, dx, 0.11, w, h, "embedding × √D", 6)
    box(ax, ex, 0.185, w, h, "+ positional encoding", 3)
    box(ax, dx, 0.185, w, h, "+ positional encoding", 3)
    for x in (ex, dx):
        arrow(ax, (x, 0.035 + h / 2), (x, 0.11 - h / 2))
        arrow(ax, (x, 0.11 + h / 2), (x, 0.185 - h / 2))

    # Encoder layer (× N)
    enc = [(0.30, "multi-head self-attention", 2), (0.375, "add & layer norm", 4),
           (0.45, "feed-forward network", 4), (0.525, "add & layer norm", 4)]
    stack_frame(ax, ex, 0.255, 0.60, 0.44, "encoder layer × N", 5)
    arrow(ax, (ex, 0.185 + h / 2), (ex, enc[0][0] - h / 2))
    for (y0, *_), (y1, *_) in zip(enc, enc[1:]):
        arrow(ax, (ex, y0 + h / 2), (ex, y1 - h / 2))
    for y, text, chapter in enc:
        box(ax, ex, y, w, h, text, chapter)
    ax.text(ex + 0.01, 0.232, "padding mask (B, 1, 1, S) · Ch. 1", ha="left", va="center",
            fontsize=7.5, color=PART_COLOURS[1][1])
    residual(ax, ex, w, 0.262, 0.375)
    residual(ax, ex, w, 0.375 + h / 2 + 0.016, 0.525)

    # Decoder layer (× N)
    dec = [(0.30, "masked multi-head self-attention", 2), (0.375, "add & layer norm", 4),
           (0.45, "cross-attention", 6), (0.525, "add & layer norm", 4),
           (0.60, "feed-forward network", 4), (0.675, "add & layer norm", 4)]
    stack_frame(ax, dx, 0.255, 0.75, 0.44, "decoder layer × N", 6)
    arrow(ax, (dx, 0.185 + h / 2), (dx, dec[0][0] - h / 2))
    for (y0, *_), (y1, *_) in zip(dec, dec[1:]):
        arrow(ax, (dx, y0 + h / 2), (dx, y1 - h / 2))
    for y, text, chapter in dec:
        box(ax, dx, y, w, h, text, chapter, fontsize=9 if len(text) > 28 else 9.5)
    ax.text(dx + 0.01, 0.232, "causal & padding mask · Ch. 1", ha="left",
            va="center", fontsize=7.5, color=PART_COLOURS[1][1])
    residual(ax, dx, w, 0.262, 0.375)
    residual(ax, dx, w, 0.375 + h / 2 + 0.016, 0.525)
    residual(ax, dx, w, 0.525 + h / 2 + 0.016, 0.675)

    # The memory: encoder output into every decoder layer's cross-attention
    box(ax, ex, 0.68, w, h, "memory  (B, S, D)", part=0)
    arrow(ax, (ex, 0.525 + h / 2), (ex, 0.68 - h / 2))
    arrow(ax, (ex + w / 2, 0.68), (dx - w / 2, 0.45), colour=PART_COLOURS[2][1],
          connection="arc3,rad=-0.25")
    ax.text(ex + 0.01, 0.632, "keys, values of every cross-attention", ha="left",
            va="center", fontsize=7.5, color=PART_COLOURS[2][1])

    # Output head
    box(ax, dx, 0.80, w, h, "linear  D → V  (logits)", 6)
    box(ax, dx, 0.875, w, h, "softmax  (B, T, V)", 6)
    arrow(ax, (dx, 0.675 + h / 2), (dx, 0.80 - h / 2))
    arrow(ax, (dx, 0.80 + h / 2), (dx, 0.875 - h / 2))

    # Training and decoding
    box(ax, 0.45, 0.99, 0.50, h, "training: loss, label smoothing, warm-up", 7, fontsize=9)
    box(ax, 0.45, 1.065, 0.50, h, "decoding: greedy, beam search, KV cache", 8, fontsize=9)
    arrow(ax, (dx, 0.875 + h / 2), (0.60, 0.99 - h / 2), connection="arc3,rad=0.15")
    arrow(ax, (dx + 0.02, 0.875 + h / 2), (0.66, 1.065 - h / 2), connection="arc3,rad=0.35")

    # Where scaled dot-product attention lives
    ax.text(0.5, 1.155, "Inside every attention box: softmax(QKᵀ/√d_k)V,"
            " scaled dot-product attention (Ch. 1), in H heads (Ch. 2)",
            ha="center", va="center", fontsize=8.5, color="#333333")
    ax.text(0.5, 1.125, "Thin blue lines: residual connections (Ch. 4)."
            " Shapes: B batch, S source length, T target length, D = d_model, V vocabulary.",
            ha="center", va="center", fontsize=8, color="#333333")

    # Legend: the parts of the book
    for i, (part, name) in enumerate([(1, "Part I: Foundations"), (2, "Part II: The architecture"),
                                      (3, "Part III: Learning and generating")]):
        fill, edge = PART_COLOURS[part]
        x = 0.04 + i * 0.32
        ax.add_patch(FancyBboxPatch((x, 1.195), 0.025, 0.02, boxstyle="round,pad=0,rounding_size=0.004",
                                    facecolor=fill, edgecolor=edge, linewidth=1.2))
        ax.text(x + 0.035, 1.205, name, ha="left", va="center", fontsize=8.5, color="#1a1a1a")
    return fig


def main() -> None:
    plt.rcParams["svg.fonttype"] = "none"  # keep text as text
    plt.rcParams["svg.hashsalt"] = "transformer-architecture"  # stable element ids
    fig = draw()
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUTPUT, format="svg", metadata={"Date": None, "Creator": None})
    print(f"wrote {OUTPUT.relative_to(Path.cwd()) if OUTPUT.is_relative_to(Path.cwd()) else OUTPUT}")


if __name__ == "__main__":
    main()
