"""The figures of Chapter 10: RoPE's rotation of a query and a key, and the key/value cache as heads are grouped."""

from __future__ import annotations

import math

import torch

from .. import _validate
from ..positional import rotary_angles
from .controls import Buttons, Panel, Slider, State
from .explorer import Explorer
from .live import LiveExplorer

__all__ = ["MODEL_SHAPES", "cache_bytes", "kv_cache_explorer", "rope_explorer", "rope_playground"]

_QUERY, _KEY, _SCORE = "#1f77b4", "#d95f02", "#2ca02c"


def _pair_vectors(d_k: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A query and a key of width ``d_k`` (float64), drawn from a seeded generator."""
    generator = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, d_k, dtype=torch.float64, generator=generator)
    return q, k


def _rotate(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Turn pair i of ``x`` (d_k,) by ``angles[i]``: RoPE on one vector, in float64."""
    even, odd = x[0::2], x[1::2]  # (d_k / 2,) each
    cos, sin = torch.cos(angles), torch.sin(angles)
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten()  # (d_k,)


def _scores(q: torch.Tensor, k: torch.Tensor, m: int, offsets: range, d_k: int, pair: int) -> tuple[list, list]:
    """q at position m against k at m + o for every offset o: the whole score q·k / √d_k and pair ``pair``'s share."""
    table = rotary_angles(m + max(offsets) + 1, d_k)  # (positions, d_k / 2)
    rq = _rotate(q, table[m])
    whole, one = [], []
    for o in offsets:
        rk = _rotate(k, table[m + o])
        whole.append(float(rq @ rk) / math.sqrt(d_k))
        one.append(float(rq[2 * pair : 2 * pair + 2] @ rk[2 * pair : 2 * pair + 2]) / math.sqrt(d_k))
    return whole, one


def rope_explorer(
    d_k: int = 16,
    pairs: tuple[int, ...] = (0, 2, 4, 7),
    positions: tuple[int, ...] = (0, 5, 50, 500),
    offsets: tuple[int, ...] = tuple(range(0, 33, 2)),
    seed: int = 0,
    explorer_id: str = "ch10-rope-explorer",
) -> Explorer:
    """RoPE's rotation of one query–key pair, precomputed (Chapter 10).

    A query sits at position m and a key at m + offset. Two panels:

    - one feature pair (2i, 2i + 1) of each, drawn as arrows in its plane
      after RoPE has turned the query by m · ω_i and the key by
      (m + offset) · ω_i: the angle between them is offset · ω_i, whatever m;
    - the attention score q · k / √d_k of the whole vectors, and of the
      chosen pair alone, against the offset (the chosen one marked): the
      curve is the same for every m.

    Buttons choose the pair i (pair 0 turns fastest), sliders the position m
    and the offset.

    Args:
        d_k: width of one head (even, 2 … 256).
        pairs: the pairs offered (0 … d_k / 2 − 1).
        positions: the query positions m offered (0 … 10000).
        offsets: the offsets offered (0 … 1000).
        seed: seeds the query and the key (one pair of vectors per d_k).
        explorer_id: the explorer's HTML id.

    Returns:
        The :class:`Explorer`; controls ``pair``, ``position`` and ``offset``
        (and ``d_k``, fixed here, a control of :func:`rope_playground`).
    """
    _check_width(d_k)
    pairs = _validate.int_choices("pairs", pairs, 0, d_k // 2 - 1)
    positions = _validate.int_choices("positions", positions, 0, 10_000)
    offsets = _validate.int_choices("offsets", offsets, 0, 1_000)
    vectors: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def query_and_key(width: int) -> tuple[torch.Tensor, torch.Tensor]:
        if width not in vectors:
            vectors[width] = _pair_vectors(width, seed)
        return vectors[width]

    def plane_panel(q, k, pair: int, m: int, offset: int, d: int) -> Panel:
        table = rotary_angles(m + offset + 1, d)  # (m + offset + 1, d / 2)
        rq, rk = _rotate(q, table[m]), _rotate(k, table[m + offset])
        radius = 1.1 * max(float(x[2 * pair : 2 * pair + 2].norm()) for x in (q, k))
        traces = []
        for name, vector, color, symbol in (("query", rq, _QUERY, "circle"), ("key", rk, _KEY, "square")):
            x, y = (float(v) for v in vector[2 * pair : 2 * pair + 2])
            traces.append({"type": "scatter", "x": [0.0, x], "y": [0.0, y], "mode": "lines", "name": name,
                           "line": {"color": color, "width": 3}, "hoverinfo": "skip"})
            traces.append({
                "type": "scatter", "x": [x], "y": [y], "mode": "markers", "name": name,
                "marker": {"color": color, "size": 10, "symbol": symbol},
                "hovertemplate": f"{name}: (%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
            })
        axis = {"range": [-radius, radius], "zeroline": True, "showgrid": False}
        layout = {"xaxis": {**axis, "title": {"text": f"feature {2 * pair}"}},
                  "yaxis": {**axis, "title": {"text": f"feature {2 * pair + 1}"}, "scaleanchor": "x"},
                  "showlegend": False}
        return Panel({"data": traces, "layout": layout},
                     f"Pair {pair}: query (●) at {m}, key (■) at {m + offset}; {_degrees(offset, pair, d):.0f}° apart",
                     height=320)

    def score_panel(q, k, pair: int, m: int, offset: int, d: int) -> Panel:
        span = range(0, max(max(offsets), offset) + 1)
        whole, one = _scores(q, k, m, span, d, pair)
        traces = [
            {"type": "scatter", "x": list(span), "y": whole, "mode": "lines", "name": "whole q·k / √d_k",
             "line": {"color": _SCORE, "width": 2}, "hovertemplate": "offset %{x}: %{y:.3f}<extra></extra>"},
            {"type": "scatter", "x": list(span), "y": one, "mode": "lines", "name": f"pair {pair} alone",
             "line": {"color": "#7f7f7f", "width": 1, "dash": "dot"},
             "hovertemplate": "offset %{x}: %{y:.3f}<extra></extra>"},
            {"type": "scatter", "x": [offset], "y": [whole[offset]], "mode": "markers", "name": "chosen",
             "marker": {"color": "black", "size": 10}, "hovertemplate": "offset %{x}: %{y:.3f}<extra></extra>"},
        ]
        layout = {"xaxis": {"title": {"text": "offset n − m"}}, "yaxis": {"title": {"text": "score"}},
                  "showlegend": False}
        return Panel({"data": traces, "layout": layout},
                     f"Score against the offset, query at m = {m}: solid the whole vector, dotted pair {pair}",
                     height=320)

    def draw(pair: int, position: int, offset: int, d_k: int = d_k) -> State:
        # the live mode (Explorer.live) may offer any values: check them
        _check_width(d_k)
        _validate.int_in_range("pair", pair, 0, d_k // 2 - 1)
        _validate.int_in_range("position", position, 0, 10_000)
        _validate.int_in_range("offset", offset, 0, 1_000)
        q, k = query_and_key(d_k)
        whole = _scores(q, k, position, range(offset, offset + 1), d_k, pair)[0][0]
        return State(
            [plane_panel(q, k, pair, position, offset, d_k), score_panel(q, k, pair, position, offset, d_k)],
            f"Query at position {position}, key at {position + offset}: pair {pair} turns by "
            f"{_degrees(offset, pair, d_k):.0f}° between them; the score is {whole:.3f}, the same at every "
            "query position.",
        )

    return Explorer(
        explorer_id,
        title="RoPE: a query and a key, turned by their positions",
        description=(
            f"A query and a key of width d_k = {d_k}. Left: one feature pair of each after RoPE, an arrow in "
            "its plane; moving the query's position turns both arrows together. Right: the attention score "
            "against the offset between them, the same curve for every position."
        ),
        controls=[
            Buttons("pair", pairs, labels=[f"pair {i}" for i in pairs], label="feature pair"),
            Slider("position", positions, label="query position m"),
            Slider("offset", offsets, label="offset n − m", start=offsets[min(3, len(offsets) - 1)]),
        ],
        states=draw,
    )


def _check_width(d_k: object) -> None:
    _validate.int_in_range("d_k", d_k, 2, 256)
    _validate.even("d_k", d_k, "(features turn in pairs)")


def _degrees(offset: int, pair: int, d_k: int) -> float:
    """offset · ω_pair in degrees, modulo 360: how far apart RoPE turns a query and a key ``offset`` apart."""
    omega = float(rotary_angles(2, d_k)[1, pair])
    return math.degrees(offset * omega) % 360


def rope_playground() -> LiveExplorer:
    """Chapter 10's RoPE explorer, live: any even d_k (2 … 128), any pair, position and offset."""
    explorer = rope_explorer(d_k=16, pairs=(0,), positions=(0,), offsets=(0, 1))
    return explorer.live(controls=[
        Slider("d_k", range(2, 130, 2), start=16, label="d_k"),
        Slider("pair", range(64), start=0, label="feature pair"),
        Slider("position", range(0, 1001), start=5, label="query position m"),
        Slider("offset", range(0, 65), start=6, label="offset n − m"),
    ])


#: Sizes of real models' attention (layers, query heads, key/value heads, d_k), from their papers.
MODEL_SHAPES = {
    "Llama 2 7B": (32, 32, 32, 128),
    "Llama 2 70B": (80, 64, 8, 128),
    "Llama 3 8B": (32, 32, 8, 128),
}


def cache_bytes(n_layers: int, n_kv_heads: int, d_k: int, tokens: int, bytes_per_number: int = 2) -> int:
    """Bytes of a key/value cache: keys and values of ``n_kv_heads`` heads, every layer, every token.

    2 · n_layers · n_kv_heads · d_k · tokens numbers; ``bytes_per_number`` 2
    for 16-bit floats, 4 for float32. Chapter 10 checks it against
    :attr:`KVCache.nbytes <transformer_edu.kv_cache.KVCache.nbytes>` on a real cache.
    """
    return 2 * n_layers * n_kv_heads * d_k * tokens * bytes_per_number


def kv_cache_explorer(
    n_layers: int = 32,
    n_heads: int = 32,
    d_k: int = 128,
    lengths: tuple[int, ...] = (1024, 4096, 8192, 32768, 131072),
    explorer_id: str = "ch10-kv-cache-explorer",
) -> Explorer:
    """The key/value cache as query heads share key/value heads, precomputed (Chapter 10).

    For a model of ``n_layers`` layers and ``n_heads`` query heads of width
    ``d_k`` (default: the shape of Llama 2 7B and Llama 3 8B), in 16-bit
    floats, one sequence:

    - which key/value head each query head reads (a grid, a cell filled where one does);
    - the cache's size at the chosen context length for every number of
      key/value heads, from multi-head (H_kv = H) to multi-query (H_kv = 1)
      attention, the chosen one darker.

    Args:
        n_layers, n_heads, d_k: the model's attention (H a power of two, at most 64).
        lengths: the context lengths offered (tokens).
        explorer_id: the explorer's HTML id.

    Returns:
        The :class:`Explorer`; controls ``kv_heads`` and ``length``.
    """
    _validate.int_in_range("n_layers", n_layers, 1, 1000)
    _validate.int_in_range("n_heads", n_heads, 1, 64)
    _validate.int_in_range("d_k", d_k, 1, 1024)
    lengths = _validate.int_choices("lengths", lengths, 1, 10_000_000)
    options = [h for h in range(n_heads, 0, -1) if n_heads % h == 0]

    def grid_panel(kv_heads: int) -> Panel:
        group = n_heads // kv_heads
        z = [[1.0 if q // group == j else 0.0 for j in range(kv_heads)] for q in range(n_heads)]
        trace = {"type": "heatmap", "z": z, "x": list(range(kv_heads)), "y": list(range(n_heads)),
                 "colorscale": [[0.0, "#f7f7f7"], [1.0, "#1f77b4"]], "showscale": False, "zmin": 0, "zmax": 1,
                 "xgap": 1, "ygap": 1,
                 "hovertemplate": "query head %{y}, key/value head %{x}: %{z}<extra></extra>"}
        layout = {"xaxis": {"title": {"text": "key/value head"}, "dtick": max(1, kv_heads // 8)},
                  "yaxis": {"title": {"text": "query head"}, "autorange": "reversed", "dtick": max(1, n_heads // 8)}}
        return Panel({"data": [trace], "layout": layout},
                     f"Which key/value head each query head reads: {n_heads} query heads in {kv_heads} "
                     f"group{'s' if kv_heads > 1 else ''} of {group}", height=320)

    def size_panel(kv_heads: int, length: int) -> Panel:
        gib = [cache_bytes(n_layers, h, d_k, length) / 2**30 for h in options]
        colors = ["#1f77b4" if h == kv_heads else "#aec7e8" for h in options]
        trace = {"type": "bar", "x": [f"H_kv = {h}" for h in options], "y": gib, "marker": {"color": colors},
                 "hovertemplate": "%{x}: %{y:.2f} GiB<extra></extra>"}
        layout = {"xaxis": {"title": {"text": "key/value heads"}}, "yaxis": {"title": {"text": "GiB"}}}
        return Panel({"data": [trace], "layout": layout},
                     f"The cache of one sequence of {length:,} tokens (16-bit)", height=320)

    def draw(kv_heads: int, length: int) -> State:
        per_token = cache_bytes(n_layers, kv_heads, d_k, 1)
        total = cache_bytes(n_layers, kv_heads, d_k, length) / 2**30
        kind = ("multi-head" if kv_heads == n_heads else "multi-query" if kv_heads == 1 else "grouped-query")
        return State(
            [grid_panel(kv_heads), size_panel(kv_heads, length)],
            f"{kind} attention with {kv_heads} key/value head{'s' if kv_heads > 1 else ''}: "
            f"{per_token / 1024:.0f} KiB per token, {total:.2f} GiB for {length:,} tokens, "
            f"{n_heads // kv_heads} times less than multi-head attention.",
        )

    return Explorer(
        explorer_id,
        title="The key/value cache as query heads share key/value heads",
        description=(
            f"A model with {n_layers} layers of {n_heads} query heads of width {d_k}, in 16-bit floats. Left: "
            "which key/value head each query head reads. Right: the cache of one sequence for every choice, "
            "from multi-head (as many key/value heads as query heads) to multi-query attention (one)."
        ),
        controls=[
            Buttons("kv_heads", options, labels=[str(h) for h in options], label="key/value heads H_kv"),
            Slider("length", lengths, labels=[f"{n:,}" for n in lengths], label="context (tokens)",
                   start=lengths[min(1, len(lengths) - 1)]),
        ],
        states=draw,
    )
