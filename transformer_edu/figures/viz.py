"""The book's one look: theme, colour maps and attention heatmaps (all chapters).

Every static figure of the book goes through this module, so the chapters
share fonts, sizes and colours, and every attention picture has the actual
tokens on its axes::

    from transformer_edu.figures import viz

    viz.use_book_style()
    viz.attention_heatmap(weights, query_tokens, key_tokens, title="head 0")

Korean tokens (the toy translation task of Chapter 7) need a font with Hangul
glyphs. :func:`use_book_style` picks one when the machine has one (on Debian:
``apt-get install fonts-nanum``); otherwise it keeps the default font and
silences matplotlib's "Glyph missing" warnings, so the book's pages stay
clean (the Hangul then shows as boxes).

Shape legend: H heads, Lq query length, Lk key length.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.colors import Colormap, LinearSegmentedColormap
from matplotlib.figure import Figure

from .. import _validate

__all__ = [
    "ATTENTION_CMAP",
    "BOOK_WIDTH",
    "DIVERGING_CMAP",
    "DPI",
    "MIN_FONT_PT",
    "attention_grid",
    "attention_heatmap",
    "font_families",
    "korean_font",
    "line_plot",
    "matrix_heatmap",
    "pad",
    "plotly_colorscale",
    "text_width",
    "to_numpy",
    "use_book_style",
    "wrap",
]

BOOK_WIDTH = 5.5
"""The widest figure, in inches: 550 CSS px at the book's 100 dpi.

Sized for phones: a figure this wide is shown at about 340 px in a 390 px
wide phone's column (a scale of 0.62), where text of :data:`MIN_FONT_PT`
points is still 9.5 CSS px tall. On a desktop it is shown at full size.
"""

MIN_FONT_PT = 11
"""The smallest font size, in points, of every text in the book's figures."""

DPI = 100
"""Figure dots per inch: one CSS pixel per dot (PNGs are saved at twice it)."""

ATTENTION_CMAP: Colormap = LinearSegmentedColormap.from_list(
    "book_attention", ["#ffffff", "#c6dbef", "#6baed6", "#2171b5", "#08306b"]
)
"""Sequential map for attention weights in [0, 1]: white is 0, dark blue is 1."""

DIVERGING_CMAP: Colormap = LinearSegmentedColormap.from_list(
    "book_diverging", ["#2166ac", "#92c5de", "#f7f7f7", "#f4a582", "#b2182b"]
)
"""Diverging map for signed values (encodings, activations): blue < 0 < red, white at 0."""

BLOCKED_COLOR = "#d9d9d9"
"""Background of cells a mask blocks, so that "blocked" reads differently from "weight 0"."""

# Families with Hangul glyphs, best first: Debian's fonts-nanum, Noto CJK, then
# the fonts shipped with macOS and Windows.
_KOREAN_FAMILIES = (
    "NanumGothic",
    "NanumBarunGothic",
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "Source Han Sans KR",
    "Apple SD Gothic Neo",
    "AppleGothic",
    "Malgun Gothic",
    "UnDotum",
    "Baekmuk Gulim",
)
_KOREAN_FILE = re.compile(
    r"nanum|notosanscjk|notosanskr|notoserifcjk|sourcehansans|applesdgothic|applegothic|malgun|undotum|baekmuk",
    re.IGNORECASE,
)
_LATIN_FAMILY = "DejaVu Sans"


def korean_font() -> str | None:
    """Return the name of an installed font family with Hangul glyphs, or ``None``.

    Looks in matplotlib's font list first; if none is there (matplotlib caches
    its list, so fonts installed after the cache was built are missing from
    it), scans the system's font files once and registers the Korean ones.
    """
    known = {font.name for font in font_manager.fontManager.ttflist}
    for family in _KOREAN_FAMILIES:
        if family in known:
            return family
    for path in font_manager.findSystemFonts():
        if _KOREAN_FILE.search(Path(path).name):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # unreadable or unsupported file
                continue
    known = {font.name for font in font_manager.fontManager.ttflist}
    return next((family for family in _KOREAN_FAMILIES if family in known), None)


def font_families() -> list[str]:
    """The book's font list: DejaVu Sans (Latin, U+2212) and the Korean family, if one is installed.

    Matplotlib falls back glyph by glyph along it; :func:`use_book_style`
    sets it globally, and a figure drawn under ``matplotlib.rc_context``
    can use it alone.
    """
    korean = korean_font()
    return [_LATIN_FAMILY] + ([korean] if korean else [])


def use_book_style() -> str | None:
    """Apply the book's theme to matplotlib and seaborn.

    Sets a white seaborn theme; fonts of at least :data:`MIN_FONT_PT` points
    (readable when a figure is scaled down to a phone's column); a default
    figure size of :data:`BOOK_WIDTH` × 3 inches; a font list that covers
    Latin (DejaVu Sans) and Hangul (the first Korean font found). In a
    notebook it also makes inline figures 2× PNGs ("retina"), sharp on
    high-density screens and shown at :data:`DPI`. Without a Korean font,
    matplotlib's "Glyph … missing" warnings are silenced.

    Keep figures at most :data:`BOOK_WIDTH` inches wide and their fonts at
    least :data:`MIN_FONT_PT` points: the book's browser test checks that no
    figure is shrunk below that on a phone.

    Returns:
        The Korean font family in use, or ``None`` when there is none.
    """
    sns.set_theme(style="white", context="notebook")
    families = font_families()
    korean = families[1] if len(families) > 1 else None
    small, medium, large = MIN_FONT_PT, MIN_FONT_PT + 1, MIN_FONT_PT + 2
    matplotlib.rcParams.update(
        {
            "figure.figsize": (BOOK_WIDTH, 3.0),
            "figure.dpi": DPI,
            "savefig.dpi": 2 * DPI,
            "savefig.bbox": "tight",
            # matplotlib falls back glyph by glyph along this list of
            # families (3.6+).
            "font.family": families,
            "font.sans-serif": families + ["sans-serif"],
            "font.size": medium,
            "axes.titlesize": large,
            "axes.labelsize": medium,
            "figure.titlesize": large,
            "xtick.labelsize": small,
            "ytick.labelsize": small,
            "legend.fontsize": small,
            "legend.title_fontsize": small,
            "axes.spines.top": False,
            "axes.spines.right": False,
            # DejaVu Sans, first in the list, has U+2212
            "axes.unicode_minus": True,
            "image.cmap": "viridis",
        }
    )
    if korean is None:
        warnings.filterwarnings(
            "ignore", message=r"Glyph \d+ .*missing from", category=UserWarning
        )
    _use_retina_inline_figures()
    return korean


def _use_retina_inline_figures() -> None:
    """In IPython, show inline figures as 2× PNGs (their ``width`` is half
    their pixels), so they are sharp on high-density screens."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - notebooks always have IPython
        return
    if get_ipython() is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats("retina")


def to_numpy(values) -> np.ndarray:
    """A float NumPy copy of a tensor (any device, with or without grad) or array."""
    if hasattr(values, "detach"):  # a torch.Tensor
        values = values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=float)


def _labels(name: str, tokens: Sequence | None, size: int, other: str) -> list[str]:
    if tokens is None:
        return [str(i) for i in range(size)]
    if isinstance(tokens, str):
        raise TypeError(f"{name} must be a sequence of tokens, got the string {tokens!r}; use {tokens!r}.split()")
    tokens = [str(t) for t in tokens]
    if len(tokens) != size:
        raise ValueError(f"{name} has {len(tokens)} tokens but {other} has {size}: they must match")
    return tokens


def _square_2d(name: str, values) -> np.ndarray:
    array = to_numpy(values)
    while array.ndim > 2 and array.shape[0] == 1:  # (1, 1, Lq, Lk) → (Lq, Lk)
        array = array[0]
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (Lq, Lk) (leading dimensions of size 1 are dropped), "
            f"got shape {tuple(to_numpy(values).shape)}; pick one batch element and head, e.g. weights[0, h]"
        )
    return array


def matrix_heatmap(
    values,
    row_labels: Sequence | None = None,
    col_labels: Sequence | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    signed: bool = False,
    annotate: bool = False,
    cmap: Colormap | str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    blocked=None,
    colorbar: bool = True,
    xlabel: str | None = None,
    ylabel: str | None = None,
    fmt: str = ".2f",
) -> Axes:
    """Draw a labelled matrix as a heatmap.

    Args:
        values: a 2-D tensor or array (R, C).
        row_labels, col_labels: one label per row / column (default: indices).
        ax: the axes to draw on (default: a new figure sized for the book).
        title: the axes title.
        signed: use :data:`DIVERGING_CMAP`, centred at 0, for values of both signs.
        annotate: write each value in its cell.
        cmap: a colour map overriding the default.
        vmin, vmax: the colour range (default: the data's range, symmetric if ``signed``).
        blocked: optional boolean (R, C) array, ``True`` where a cell is
            blocked; such cells are left grey and hatched instead of coloured.
        colorbar: draw a colour bar.
        xlabel, ylabel: axis titles.
        fmt: format of the annotations.

    Returns:
        The axes.
    """
    array = _square_2d("values", values)
    rows = _labels("row_labels", row_labels, array.shape[0], f"values (shape {array.shape}) axis 0")
    cols = _labels("col_labels", col_labels, array.shape[1], f"values (shape {array.shape}) axis 1")
    hidden = None
    if blocked is not None:
        hidden = _square_2d("blocked", blocked).astype(bool)
        if hidden.shape != array.shape:
            raise ValueError(f"blocked has shape {hidden.shape} but values has shape {array.shape}")
    if ax is None:
        width = min(BOOK_WIDTH, 1.2 + 0.45 * len(cols))
        _, ax = plt.subplots(figsize=(width, min(BOOK_WIDTH, 0.8 + 0.4 * len(rows))))
    if signed:
        limit = float(np.nanmax(np.abs(array))) if array.size else 1.0
        vmin = -limit if vmin is None else vmin
        vmax = limit if vmax is None else vmax
    sns.heatmap(
        array,
        ax=ax,
        cmap=cmap or (DIVERGING_CMAP if signed else ATTENTION_CMAP),
        center=0.0 if signed else None,
        vmin=vmin,
        vmax=vmax,
        mask=hidden,
        annot=annotate,
        fmt=fmt,
        annot_kws={"fontsize": MIN_FONT_PT},
        cbar=colorbar,
        linewidths=0.5,
        linecolor="white",
        xticklabels=cols,
        yticklabels=rows,
        square=False,
    )
    if hidden is not None:
        ax.set_facecolor(BLOCKED_COLOR)
        ax.patch.set_hatch("//")
        ax.patch.set_edgecolor("white")
    rotate = max((len(c) for c in cols), default=0) > 2
    ax.set_xticklabels(cols, rotation=45 if rotate else 0, ha="right" if rotate else "center")
    ax.set_yticklabels(rows, rotation=0)
    ax.tick_params(length=0)
    _label(ax, title, xlabel, ylabel)
    return ax


def attention_heatmap(
    weights,
    query_tokens: Sequence | None,
    key_tokens: Sequence | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool = False,
    cmap: Colormap | str | None = None,
    mask=None,
    colorbar: bool = True,
) -> Axes:
    """Draw one attention matrix with the query tokens down and the key tokens across.

    Row ``i`` shows where query ``i`` looks: the weights over the keys, which
    sum to 1. The colour range is fixed to [0, 1], so pictures compare.

    Args:
        weights: attention weights (Lq, Lk); leading dimensions of size 1,
            e.g. (1, 1, Lq, Lk), are dropped.
        query_tokens: the Lq query tokens (row labels).
        key_tokens: the Lk key tokens (column labels); default: the query tokens
            (self-attention).
        ax: the axes to draw on (default: a new figure).
        title: the axes title.
        annotate: write each weight in its cell (readable up to about 10 × 10).
        cmap: a colour map overriding :data:`ATTENTION_CMAP`.
        mask: optional boolean mask broadcastable to (Lq, Lk), ``True`` = may
            attend (the package's polarity); blocked cells are drawn grey and hatched.
        colorbar: draw a colour bar.

    Returns:
        The axes.

    Raises:
        ValueError: when the weights' shape does not match the numbers of tokens.
    """
    array = _square_2d("weights", weights)
    for name, tokens in (("query_tokens", query_tokens), ("key_tokens", key_tokens)):
        if isinstance(tokens, str):
            raise TypeError(f"{name} must be a sequence of tokens, got the string {tokens!r}; use {tokens!r}.split()")
    keys = query_tokens if key_tokens is None else key_tokens
    n_query = array.shape[0] if query_tokens is None else len(query_tokens)
    n_key = array.shape[1] if keys is None else len(keys)
    if (n_query, n_key) != array.shape:
        raise ValueError(
            f"weights has shape {array.shape} (Lq, Lk) but there are {n_query} query_tokens "
            f"and {n_key} key_tokens; row i holds query token i's weights over the key tokens"
        )
    blocked = None
    if mask is not None:
        allowed = to_numpy(mask).astype(bool)
        allowed = allowed.reshape(_drop_ones(allowed.shape))  # (1, 1, 1, Lk) → (1, Lk)
        try:
            blocked = ~np.broadcast_to(allowed, array.shape)
        except ValueError:
            raise ValueError(
                f"mask of shape {tuple(to_numpy(mask).shape)} does not broadcast to the weights' shape {array.shape}"
            ) from None
    return matrix_heatmap(
        array,
        query_tokens,
        keys,
        ax=ax,
        title=title,
        annotate=annotate,
        cmap=cmap,
        vmin=0.0,
        vmax=1.0,
        blocked=blocked,
        colorbar=colorbar,
        xlabel="key",
        ylabel="query",
    )


def _drop_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    shape = tuple(shape)
    while len(shape) > 2 and shape[0] == 1:
        shape = shape[1:]
    return shape


def attention_grid(
    weights,
    query_tokens: Sequence | None,
    key_tokens: Sequence | None = None,
    titles: Sequence[str] | None = None,
    ncols: int = 4,
    annotate: bool = False,
    suptitle: str | None = None,
) -> Figure:
    """Draw one attention heatmap per head side by side, with one shared colour bar.

    Args:
        weights: attention weights (H, Lq, Lk), or (1, H, Lq, Lk) for one batch element.
        query_tokens: the Lq query tokens.
        key_tokens: the Lk key tokens (default: the query tokens).
        titles: one title per head (default: "head 0", "head 1", …).
        ncols: heads per row.
        annotate: write each weight in its cell.
        suptitle: a title above the grid.

    Returns:
        The figure.
    """
    array = to_numpy(weights)
    if array.ndim == 4 and array.shape[0] == 1:
        array = array[0]
    if array.ndim != 3:
        raise ValueError(
            f"weights must be 3-D (H, Lq, Lk) or (1, H, Lq, Lk), got shape {tuple(to_numpy(weights).shape)}; "
            "for a batch, pick one element: weights[b]"
        )
    n_heads = array.shape[0]
    titles = [f"head {h}" for h in range(n_heads)] if titles is None else list(titles)
    if len(titles) != n_heads:
        raise ValueError(f"titles has {len(titles)} entries but weights has {n_heads} heads (shape {array.shape})")
    _validate.positive_int("ncols", ncols)
    ncols = min(ncols, n_heads)
    nrows = -(-n_heads // ncols)
    side = min(BOOK_WIDTH / ncols, 2.6)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(min(BOOK_WIDTH, side * ncols + 0.8), side * nrows + 0.6),
        squeeze=False,
        layout="constrained",
    )
    for h, ax in enumerate(axes.flat):
        if h >= n_heads:
            ax.axis("off")
            continue
        attention_heatmap(array[h], query_tokens, key_tokens, ax=ax, title=titles[h], annotate=annotate, colorbar=False)
        if h % ncols:  # only the first column keeps the query labels
            ax.set_ylabel("")
            ax.set_yticklabels([])
        if h + ncols < n_heads:  # only the lowest panel of each column keeps the key labels
            ax.set_xlabel("")
            ax.set_xticklabels([])
    fig.colorbar(
        matplotlib.cm.ScalarMappable(norm=matplotlib.colors.Normalize(0, 1), cmap=ATTENTION_CMAP),
        ax=axes.ravel().tolist(),
        shrink=0.8,
        label="weight",
    )
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def line_plot(
    x,
    ys: Mapping[str, object],
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    logy: bool = False,
    marker: str | None = "o",
) -> Axes:
    """Plot one or more curves against a shared x, with a legend.

    Args:
        x: the x values (N,).
        ys: label → y values (N,), one curve each.
        ax: the axes to draw on (default: a new figure).
        title, xlabel, ylabel: texts.
        logx, logy: logarithmic axes.
        marker: point marker (``None`` for plain lines).

    Returns:
        The axes.
    """
    xs = to_numpy(x).ravel()
    if not ys:
        raise ValueError("ys is empty: give at least one curve as {label: values}")
    if ax is None:
        _, ax = plt.subplots()
    for label, y in ys.items():
        values = to_numpy(y).ravel()
        if values.shape != xs.shape:
            raise ValueError(f"curve {label!r} has {values.size} values but x has {xs.size}")
        ax.plot(xs, values, marker=marker, markersize=4, label=str(label))
    if logx:
        ax.set_xscale("log", base=2 if np.all(np.log2(xs[xs > 0]) % 1 == 0) else 10)
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if len(ys) > 1:
        ax.legend(frameon=False)
    _label(ax, title, xlabel, ylabel)
    return ax


def _label(ax: Axes, title: str | None, xlabel: str | None, ylabel: str | None) -> None:
    """Set whichever of the title and axis labels are given."""
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)


def plotly_colorscale(cmap: Colormap = ATTENTION_CMAP, steps: int = 11) -> list[list]:
    """The colour map as a Plotly colorscale, so interactive figures share the book's colours."""
    levels = np.linspace(0.0, 1.0, steps)
    return [
        [round(float(level), 4), "#{:02x}{:02x}{:02x}".format(*(int(round(255 * c)) for c in cmap(level)[:3]))]
        for level in levels
    ]


def text_width(text: str) -> int:
    """The number of columns ``text`` takes in a monospaced output.

    Wide characters (Hangul syllables and jamo, CJK ideographs, full-width
    forms) take two columns, combining marks and zero-width characters
    none, everything else one. Use it to align printed columns that hold
    Korean: ``len("고양이가")`` is 4, but it is 8 columns wide.

    Args:
        text: one line of text (no tabs or newlines).

    Returns:
        The width in columns.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if "\t" in text or "\n" in text:
        raise ValueError(
            f"text must be one line without tabs, got {text!r}"
        )
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in (
            "Cf",
            "Mn",
            "Me",
        ):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def pad(text, width: int, align: str = "left") -> str:
    """``text`` padded with spaces to ``width`` display columns.

    Like ``f"{text:<{width}}"``, but counting a Hangul syllable as two
    columns (see :func:`text_width`), so columns of Korean and English line
    up in a monospaced output::

        for ko, en in pairs:
            print(viz.pad(ko, 24), en)

    Args:
        text: the text (anything else is passed through ``str``).
        width: the width to fill, in columns; a wider text is returned
            unchanged.
        align: ``"left"``, ``"right"`` or ``"center"``.

    Returns:
        The padded text.
    """
    text = str(text)
    _validate.int_in_range("width", width, 0)
    if align not in ("left", "right", "center"):
        raise ValueError(
            f"align must be 'left', 'right' or 'center', got {align!r}"
        )
    missing = max(0, width - text_width(text))
    if align == "left":
        return text + " " * missing
    if align == "right":
        return " " * missing + text
    left = missing // 2
    return " " * left + text + " " * (missing - left)


def wrap(text: str, width: int = 78, indent: str = "") -> str:
    """``text`` broken into lines of at most ``width`` display columns.

    Like ``textwrap.fill``, but counting a Hangul syllable as two
    columns (see :func:`text_width`), so that a printed message with Korean
    in it fits the book's 80-column outputs. Breaks only at spaces; a single
    word wider than a line stays whole on a line of its own.

    Args:
        text: the text; runs of whitespace (newlines included) count as one
            space.
        width: the most columns per line, ``indent`` included.
        indent: written at the start of every line, e.g. ``"  "``.

    Returns:
        The lines joined by ``"\\n"``.
    """
    _validate.text("text", text)
    _validate.int_in_range("width", width, text_width(indent) + 1, why=f" (wider than the indent {indent!r})")
    lines, line = [], ""
    for word in text.split():
        if line and text_width(indent + line + " " + word) > width:
            lines.append(indent + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join(lines + [indent + line])
