"""The generic explorer of transformer_edu.figures (Explorer, controls,
panels, states): coverage of the control combinations, deterministic HTML,
accessible markup, and errors that name the bad argument."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from unittest import mock

import numpy as np
import plotly.graph_objects as go
import pytest

from transformer_edu import figures as ix
from transformer_edu.figures import viz


def bars(scale: float, label: str = "x") -> go.Figure:
    return go.Figure(go.Bar(x=[label, "y"], y=np.array([1 / 3, 2 / 3]) * scale))


def make(states=None, controls=None, **kwargs) -> ix.Explorer:
    controls = controls if controls is not None else [
        ix.Buttons("scale", [1, 2], labels=["one", "two"]),
        ix.Slider("word", ["a", "b", "c"], label="word", start="b"),
    ]
    if states is None:
        def states(scale, word):
            return ix.State(
                ix.Panel(bars(scale, word), title=f"{word} × {scale}"),
                summary=f"Bars {word} scaled by {scale}.",
            )
    arguments = dict(
        title="Demo bars",
        description="Two bars that a control scales.",
        controls=controls,
        states=states,
    )
    arguments.update(kwargs)
    return ix.Explorer("demo-explorer", **arguments)


class Markup(HTMLParser):
    """Elements (tag, attributes) and text of an explorer's HTML."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script: dict | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs))
        if tag == "script":
            self._script = attrs

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self.scripts.append((self._script, data))

    def find(self, tag: str, **attrs) -> list[dict]:
        return [
            a for t, a in self.elements
            if t == tag and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]


def payload(explorer: ix.Explorer) -> dict:
    markup = Markup(explorer.html())
    (data,) = [text for attrs, text in markup.scripts if attrs.get("class") == "tse-data"]
    return json.loads(data)


def traces(data: dict, key: str, panel: int = 0) -> list[dict]:
    """The traces the browser draws for one state: each look with its data."""
    return [
        {**data["parts"][look], **data["parts"][values]}
        for look, values in data["states"][key]["p"][panel]["d"]
    ]


# ------------------------------------------------------------------ states


def test_every_combination_of_controls_has_a_state():
    calls = []

    def states(scale, word):
        calls.append((scale, word))
        return ix.State(bars(scale), summary=f"{scale} {word}")

    explorer = make(states)
    assert sorted(calls) == [(s, w) for s in (1, 2) for w in "abc"]
    data = payload(explorer)
    assert sorted(data["states"]) == [f"{i}.{j}" for i in range(2) for j in range(3)]
    for state in data["states"].values():
        for panel in state["p"]:
            ids = [part for pair in panel["d"] for part in pair] + [panel["l"]]
            assert all(0 <= part < len(data["parts"]) for part in ids)
    assert explorer.state(scale=2, word="c").summary == "2 c"
    assert explorer.start_state.summary == "1 b"


def test_a_mapping_of_states_must_cover_every_combination():
    full = {(s, w): ix.State(bars(s), f"{s}{w}") for s in (1, 2) for w in "abc"}
    assert make(full).state(scale=1, word="a").summary == "1a"
    partial = {key: state for key, state in full.items() if key != (2, "c")}
    with pytest.raises(ValueError, match=r"misses 1 of 6 combinations.*scale=2, word='c'"):
        make(partial)
    with pytest.raises(ValueError, match=r"no combination.*\(3, 'a'\)"):
        make({**full, (3, "a"): full[1, "a"]})


def test_one_control_takes_bare_keys_and_no_control_one_state():
    one = make({1: ix.State(bars(1), "one"), 2: ix.State(bars(2), "two")},
               controls=[ix.Select("scale", [1, 2])])
    assert one.state(scale=2).summary == "two"
    still = make({(): ix.State(bars(1), "A still figure.")}, controls=[])
    assert list(payload(still)["states"]) == [""]
    assert payload(still)["controls"] == []
    assert "Shown first: A still figure." in still.text()


def test_identical_traces_and_layouts_are_stored_once():
    explorer = make(lambda scale, word: ix.State(bars(1), "same"))
    data = payload(explorer)
    # one trace look, one trace's data and one layout for all six states
    assert len(data["parts"]) == 3


def test_a_trace_look_shared_by_states_is_stored_once():
    explorer = make(lambda scale, word: ix.State(bars(scale), "same look"))
    data = payload(explorer)
    assert len(data["parts"]) == 4  # one look, two data (scale 1 and 2), one layout
    (look,) = [part for part in data["parts"] if part.get("type") == "bar"]
    assert not set(look) & set(ix.TRACE_DATA_KEYS)
    assert traces(data, "1.2") == [{**look, "x": ["x", "y"], "y": [0.6667, 1.3333]}]


def test_a_figure_or_panel_is_a_state_with_a_summary_of_the_controls():
    explorer = make(lambda scale, word: bars(scale))
    assert explorer.state(scale=2, word="c").summary == "scale: two; word: c"


def test_states_must_keep_their_panels():
    def states(scale, word):
        return ix.State(ix.Panel(bars(scale), height=300 + scale), "s")

    with pytest.raises(ValueError, match="every state needs the same panels"):
        make(states)


# ------------------------------------------------------------------ HTML


def test_html_and_text_are_deterministic_and_rounded():
    first, second = make(), make()
    assert first.html() == second.html()
    assert first.text() == second.text()
    html = first.html()
    assert "0.3333" in html and "0.33333" not in html
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}", html)  # no uuid
    assert first._repr_mimebundle_() == {"text/html": html, "text/plain": first.text()}


def test_numpy_typed_arrays_are_decoded_and_rounded():
    fig = go.Figure(go.Heatmap(z=np.array([[1 / 3, -1e-9], [np.nan, 2.0]])))
    explorer = make({(): ix.State(fig, "a heatmap")}, controls=[])
    (trace,) = traces(payload(explorer), "")
    assert trace["z"] == [[0.3333, 0.0], [None, 2.0]]


def test_panels_are_drawn_in_the_book_look_without_plotly_templates():
    panel = ix.Panel(bars(1), height=250)
    assert "template" not in panel.layout
    assert panel.layout["font"] == ix.BOOK_LAYOUT["font"]
    assert panel.layout["xaxis"]["fixedrange"] is True and panel.layout["dragmode"] is False
    narrow = ix.Panel(bars(1), narrow={"margin": {"l": 20}})
    explorer = make({(): ix.State(narrow, "n")}, controls=[])
    (state,) = payload(explorer)["states"].values()
    assert payload(explorer)["parts"][state["p"][0]["n"]] == {"margin": {"l": 20}}


def test_controls_are_real_labelled_html_controls():
    explorer = make(controls=[
        ix.Buttons("scale", [1, 2], labels=["one", "two"], start=2),
        ix.Slider("word", ["a", "b"], label="the word"),
        ix.Select("pick", [0.5, 1.0], label="a choice", start=1.0),
    ], states=lambda scale, word, pick: ix.State(bars(scale), f"{scale}{word}{pick}"))
    markup = Markup(explorer.html())
    buttons = markup.find("button")
    assert [b["aria-pressed"] for b in buttons] == ["false", "true"]
    assert all(b["type"] == "button" for b in buttons)
    (group,) = markup.find("div", role="group")
    assert markup.find("span", id=group["aria-labelledby"])
    (slider,) = markup.find("input", type="range")
    assert (slider["min"], slider["max"], slider["value"]) == ("0", "1", "0")
    assert slider["aria-valuetext"] == "a"
    assert json.loads(slider["data-tse-labels"]) == ["a", "b"]
    (select,) = markup.find("select")
    labels = {a["for"] for a in markup.find("label")}
    assert {slider["id"], select["id"]} <= labels
    options = markup.find("option")
    assert [("selected" in o) for o in options] == [False, True]


def test_explorer_is_a_named_described_figure_with_live_summary_and_fallback():
    explorer = make()
    html = explorer.html()
    markup = Markup(html)
    (figure,) = markup.find("figure")
    assert figure["id"] == "demo-explorer"
    assert markup.find("p", id=figure["aria-labelledby"])
    assert markup.find("p", id=figure["aria-describedby"])
    (summary,) = markup.find("p", **{"aria-live": "polite"})
    assert "Bars b scaled by 1." in html
    assert markup.find("p", **{"class": "tse-fallback"})
    assert "needs JavaScript" in html
    plots = markup.find("div", role="img")
    assert len(plots) == 1 and plots[0]["style"] == "height:360px"
    # the plot is named by its panel title
    assert markup.find("p", id=plots[0]["aria-labelledby"])
    # the inline copy of the runtime steps aside in the book
    (boot,) = [text for attrs, text in markup.scripts if "data-tse-inline" in attrs]
    assert boot.index("data-tse-explorers") < boot.index("TSEExplorers.inline")
    assert "cdn.plot.ly/plotly-" in boot


def test_labels_cannot_end_the_script():
    explorer = make(lambda scale, word: ix.State(bars(scale, "</script>"), "s"))
    assert explorer.html().count("</script>") == 2  # the data and the runtime


def test_text_lines_fit_79_display_columns():
    long = "고양이가 생선을 먹었다 " * 12
    explorer = make(description=long)
    lines = explorer.text().splitlines()
    assert lines[0] == "Interactive figure: Demo bars."
    assert all(viz.text_width(line) <= 79 for line in lines)
    assert "- scale: one, two" in lines


def test_show_displays_the_bundle_and_refuses_a_bare_figure():
    bundles = []
    with mock.patch("IPython.display.display", side_effect=lambda b, raw: bundles.append((b, raw))):
        ix.show(make())
    assert bundles == [(make()._repr_mimebundle_(), True)]
    with pytest.raises(TypeError, match="Explorer"):
        ix.show(bars(1))


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("build, error, match", [
    (lambda: ix.Buttons("scale", []), ValueError, "values must not be empty"),
    (lambda: ix.Buttons("scale", [1, 1]), ValueError, "must not repeat"),
    (lambda: ix.Buttons("scale", "ab"), TypeError, "values must be a sequence"),
    (lambda: ix.Buttons("scale", [[1]]), TypeError, "values must be int"),
    (lambda: ix.Buttons("scale", [np.int64(1)]), TypeError, r"\.item\(\)"),
    (lambda: ix.Buttons("2d", [1]), ValueError, "name must be a Python identifier"),
    (lambda: ix.Slider("scale", [1, 2], labels=["a"]), ValueError, "1 labels for 2 values"),
    (lambda: ix.Slider("scale", [1, 2], labels="ab"), TypeError, "labels must be a sequence"),
    (lambda: ix.Select("scale", [1, 2], start=3), ValueError, "start must be one of"),
    (lambda: ix.Select("scale", [1], label=" "), ValueError, "label must be a non-empty"),
    (lambda: ix.Panel([1, 2]), TypeError, "figure must be"),
    (lambda: ix.Panel(bars(1), height=10), ValueError, "height must be"),
    (lambda: ix.Panel(bars(1), narrow=3), TypeError, "narrow must be"),
    (lambda: ix.Panel(bars(1), title=3), TypeError, "title must be a str"),
    (lambda: ix.State(bars(1), summary=""), ValueError, "summary must be"),
    (lambda: ix.State([], summary="s"), ValueError, "at least one panel"),
    (lambda: ix.Explorer("1x", title="t", description="d", controls=[], states={}), ValueError, "explorer_id"),
    (lambda: make(title=""), ValueError, "title must be"),
    (lambda: make(description=None), ValueError, "description must be"),
    (lambda: make(controls=ix.Buttons("a", [1])), TypeError, "controls must be a list"),
    (lambda: make(controls=["a"]), TypeError, "controls must hold"),
    (lambda: make(controls=[ix.Buttons("a", [1]), ix.Slider("a", [1])]), ValueError, "distinct names"),
    (lambda: make(states=[1, 2]), TypeError, "states must be a function"),
    (lambda: make(states=lambda scale, word: "nope"), TypeError, r"state for scale=1, word='a' must be"),
    (lambda: make(decimals=11), ValueError, "decimals must be"),
])
def test_bad_arguments_are_named(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_state_lookup_names_bad_controls_and_values():
    explorer = make()
    with pytest.raises(ValueError, match="unknown control"):
        explorer.state(size=1)
    with pytest.raises(ValueError, match="word must be one of"):
        explorer.state(word="z")


# ------------------------------------------------------------------ heatmap panel


def test_heatmap_panel_labels_blocks_and_outlines():
    weights = np.array([[1.0, 0.0], [0.25, 0.75]])
    blocked = np.array([[False, True], [False, False]])
    panel = ix.heatmap_panel(weights, ["a", "b"], blocked=blocked, highlight_row=1, title="t")
    (trace,) = panel.data
    assert trace["z"][0][1] is None and trace["z"][1] == [0.25, 0.75]
    assert trace["hovertemplate"] == "weight %{z:.4f}<extra></extra>"
    assert trace["hoverongaps"] is False  # blocked cells are gaps: no hover
    assert panel.layout["yaxis"]["ticktext"] == ["a", "b"]
    assert panel.layout["yaxis"]["range"] == [1.5, -0.5]  # row 0 on top
    (shape,) = panel.layout["shapes"]
    assert (shape["y0"], shape["y1"]) == (0.5, 1.5)
    assert panel.layout["plot_bgcolor"] == viz.BLOCKED_COLOR
    with pytest.raises(ValueError, match="2 row_labels and 3 col_labels"):
        ix.heatmap_panel(weights, ["a", "b"], ["x", "y", "z"])
    with pytest.raises(ValueError, match="highlight_row"):
        ix.heatmap_panel(weights, ["a", "b"], highlight_row=2)
    with pytest.raises(ValueError, match="does not broadcast"):
        ix.heatmap_panel(weights, ["a", "b"], blocked=np.ones(3, dtype=bool))
