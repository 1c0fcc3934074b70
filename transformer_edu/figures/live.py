"""Live explorers: the book's figures recomputed in a running kernel.

A kernel-free :class:`~transformer_edu.figures.explorer.Explorer` shows states
computed when the notebook was executed; the HTML book can show nothing else.
In Jupyter or Colab a :class:`LiveExplorer` calls the *same* states function
with the reader's inputs and redraws: type your own tokens or sentence,
switch a mask, pass in the attention function you just wrote. One API, two
modes::

    explorer = ix.positional_explorer()   # precomputed: the HTML book
    explorer.live()                       # the same function, live
    ix.mask_playground(attention=my_attention)  # Chapter 1

Where each works:

- the kernel-free explorer: in the HTML book, and in a trusted notebook
  (Jupyter, Colab) that can load Plotly;
- a live explorer: in a running kernel only (Jupyter, JupyterLab, Colab,
  VS Code). It uses core ipywidgets only (text boxes, check boxes, toggle
  buttons, sliders, drop-downs and an ``Output``), which Colab renders without
  a custom widget manager, and it draws each state with Matplotlib as a PNG
  image: Plotly figures inside an ``Output`` widget do not reliably draw in
  Colab (googlecolab/colabtools issues 1458 and 5889), a PNG does everywhere.
  In the HTML book the cell shows a line of text naming its controls
  (``scripts/execute_notebooks.py`` stores it), never a dead widget.

Controls: the explorer's own :class:`~transformer_edu.figures.controls.Buttons`,
:class:`~transformer_edu.figures.controls.Slider` and
:class:`~transformer_edu.figures.controls.Select` (a toggle-button row, a selection
slider, a drop-down), and two that only a kernel can answer: :class:`Text`
(a text box, read when Enter is pressed) and :class:`Toggle` (a check box).

The figures of a live explorer are the states' Plotly panels drawn by
:func:`render_state` (heatmaps, bars, lines, outlines); the printed lines
under them are the state's ``summary`` and ``details``.

The chapters' playgrounds live with the chapters' other figures
(:mod:`~transformer_edu.figures.attention_figures`: Chapters 1 and 2;
:mod:`~transformer_edu.figures.position_figures`: Chapter 3;
:mod:`~transformer_edu.figures.translation_figures`: Chapters 6 to 8).
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Mapping, Sequence

import matplotlib
import numpy as np
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .. import _validate
from . import viz
from .controls import Buttons, Panel, Select, Slider, State, check_controls

__all__ = ["LiveExplorer", "Text", "Toggle", "render_state"]


def _name(kind: str, name) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            f"{kind} name must be a Python identifier (it is the keyword of "
            f"the states function), got {name!r}"
        )
    return name


def _label(kind: str, name: str, label) -> str:
    label = name.replace("_", " ") if label is None else label
    if not isinstance(label, str) or not label.strip():
        raise ValueError(
            f"{kind} {name!r}: label must be a non-empty string, got {label!r}"
        )
    return label


class Text:
    """A text box; the states function receives its text when Enter is
    pressed (or the box loses focus).

    Args:
        name: the keyword under which ``states`` receives the text.
        value: the text shown first.
        label: the box's visible name (default: ``name``).
    """

    def __init__(self, name: str, value: str, *, label: str | None = None):
        self.name = _name("Text", name)
        if not isinstance(value, str):
            raise TypeError(
                f"Text {name!r}: value must be a str, got "
                f"{type(value).__name__}"
            )
        self.label = _label("Text", name, label)
        self.start = value

    def __repr__(self) -> str:
        return f"Text({self.name!r}, {self.start!r})"


class Toggle:
    """A check box; the states function receives ``True`` or ``False``.

    Args:
        name: the keyword under which ``states`` receives the value.
        value: checked first (default ``True``).
        label: the box's visible name (default: ``name``).
    """

    def __init__(self, name: str, value: bool = True, *, label=None):
        self.name = _name("Toggle", name)
        _validate.boolean("value", value, where=f"Toggle {name!r}")
        self.label = _label("Toggle", name, label)
        self.start = value

    def __repr__(self) -> str:
        return f"Toggle({self.name!r}, {self.start!r})"


_CONTROLS = (Buttons, Slider, Select, Text, Toggle)


def _widget(control):
    """The ipywidgets control for one of ours (core widgets only)."""
    import ipywidgets as widgets

    style = {"description_width": "initial"}
    if isinstance(control, Text):
        return widgets.Text(
            value=control.start,
            description=control.label,
            continuous_update=False,
            style=style,
            layout=widgets.Layout(width="32em"),
        )
    if isinstance(control, Toggle):
        return widgets.Checkbox(
            value=control.start,
            description=control.label,
            indent=False,
            layout=widgets.Layout(width="auto"),
        )
    options = list(zip(control.labels, control.values))
    if isinstance(control, Buttons):
        return widgets.ToggleButtons(
            options=options,
            value=control.start,
            description=control.label,
            style={**style, "button_width": "auto"},
        )
    if isinstance(control, Slider):
        return widgets.SelectionSlider(
            options=options,
            value=control.start,
            description=control.label,
            continuous_update=False,
            style=style,
        )
    return widgets.Dropdown(
        options=options,
        value=control.start,
        description=control.label,
        style=style,
    )


_PX = 96.0  # Plotly px per inch of the live figure


_MARKERS = {"circle": "o", "square": "s", "diamond": "D", "x": "x"}


def _text(value) -> str:
    if isinstance(value, Mapping):
        return str(value.get("text", ""))
    return "" if value is None else str(value)


def _colormap(colorscale) -> LinearSegmentedColormap:
    return LinearSegmentedColormap.from_list(
        "panel", [(float(level), color) for level, color in colorscale]
    )


def _grid(trace: dict, name: str, size: int) -> np.ndarray:
    values = np.asarray(trace.get(name, range(size)), dtype=float)
    if values.size != size:
        raise ValueError(
            f"a heatmap's {name} has {values.size} values for {size} cells"
        )
    return values


def _heatmap(figure: Figure, ax, trace: dict) -> None:
    z = np.array(
        [[np.nan if v is None else v for v in row] for row in trace["z"]],
        dtype=float,
    )  # (R, C), NaN where blocked
    x = _grid(trace, "x", z.shape[1])
    y = _grid(trace, "y", z.shape[0])
    step_x = x[1] - x[0] if x.size > 1 else 1.0
    step_y = y[1] - y[0] if y.size > 1 else 1.0
    image = ax.imshow(
        np.ma.masked_invalid(z),
        cmap=_colormap(trace["colorscale"]),
        vmin=trace.get("zmin"),
        vmax=trace.get("zmax"),
        aspect="auto",
        interpolation="nearest",
        origin="lower",
        extent=(
            x[0] - step_x / 2,
            x[-1] + step_x / 2,
            y[0] - step_y / 2,
            y[-1] + step_y / 2,
        ),
    )
    if trace.get("showscale", True):
        bar = figure.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
        bar.set_label(_text(trace.get("colorbar", {}).get("title")))


def _scatter(ax, trace: dict) -> None:
    mode = trace.get("mode", "lines+markers")
    marker = trace.get("marker", {})
    ax.plot(
        trace["x"],
        trace["y"],
        linestyle="-" if "lines" in mode else "none",
        marker=_MARKERS.get(marker.get("symbol"), "o")
        if "markers" in mode
        else None,
        markersize=marker.get("size", 6) / 2,
        color=marker.get("color") or trace.get("line", {}).get("color"),
        linewidth=trace.get("line", {}).get("width", 1.5),
        label=trace.get("name"),
    )


def _bar(ax, trace: dict) -> None:
    color = trace.get("marker", {}).get("color", "#1f77b4")
    width = trace.get("width", 0.8)
    if trace.get("orientation") == "h":
        ax.barh(trace["y"], trace["x"], height=width, color=color)
    else:
        ax.bar(trace["x"], trace["y"], width=width, color=color)


def _axis(ax, which: str, spec: dict) -> None:
    set_label = ax.set_xlabel if which == "x" else ax.set_ylabel
    set_label(_text(spec.get("title")))
    if "tickvals" in spec:
        ticks = ax.set_xticks if which == "x" else ax.set_yticks
        labels = spec.get("ticktext") or [f"{v:g}" for v in spec["tickvals"]]
        rotation = -spec.get("tickangle", 0) if which == "x" else 0
        ticks(
            spec["tickvals"],
            labels,
            rotation=rotation,
            ha="right" if rotation else "center",
        )
    if spec.get("showticklabels") is False:
        ax.tick_params(axis=which, labelbottom=False, labelleft=False)
    limits = ax.set_xlim if which == "x" else ax.set_ylim
    if spec.get("range"):
        limits(*spec["range"])
    elif spec.get("autorange") == "reversed":
        low, high = (ax.get_xlim if which == "x" else ax.get_ylim)()
        limits(max(low, high), min(low, high))


def _shapes(ax, layout: dict) -> None:
    for shape in layout.get("shapes", []):
        if shape.get("type") != "rect" or shape.get("yref") != "y":
            continue
        low, high = ax.get_xlim()
        ax.add_patch(
            Rectangle(
                (min(low, high), shape["y0"]),
                abs(high - low),
                shape["y1"] - shape["y0"],
                fill=False,
                edgecolor=shape.get("line", {}).get("color", "black"),
                linewidth=shape.get("line", {}).get("width", 2),
                clip_on=False,
            )
        )


def _annotations(ax, layout: dict) -> None:
    for note in layout.get("annotations", []):
        on_axes = note.get("xref") == "paper"
        ax.annotate(
            _text(note.get("text")),
            (note.get("x", 0), note.get("y", 0)),
            xycoords=ax.get_yaxis_transform() if on_axes else "data",
            xytext=(0, note.get("yshift", 0)),
            textcoords="offset points",
            ha=note.get("xanchor", "left"),
            va="bottom",
            fontsize=8,
        )


def render_state(state: State, *, width: float = 10.0) -> Figure:
    """Draw a state's panels with Matplotlib, as the live mode shows them.

    The same Plotly traces the kernel-free explorer draws: heatmaps (blocked
    cells empty, on the panel's background), bars (vertical or horizontal),
    lines and markers; axis titles, tick labels and ranges, outlined rows and
    text notes from the layout. Wide panels take a row of their own, the
    others share a row, three at most.

    Args:
        state: an :class:`~transformer_edu.figures.controls.State`.
        width: the figure's width in inches.

    Returns:
        A :class:`matplotlib.figure.Figure` (not attached to pyplot), one
        axes per panel in the order of ``state.panels``.

    Raises:
        ValueError: a trace type it cannot draw (named).
    """
    if not isinstance(state, State):
        raise TypeError(
            f"state must be a figures.State, got {type(state).__name__}"
        )
    # Hangul labels, whether or not the chapter set the book's style
    with matplotlib.rc_context({"font.family": viz.font_families()}):
        return _render(state, width)


def _render(state: State, width: float) -> Figure:
    rows: list[list[Panel]] = []
    for panel in state.panels:
        if panel.wide or not rows or rows[-1][0].wide or len(rows[-1]) == 3:
            rows.append([panel])
        else:
            rows[-1].append(panel)
    heights = [max(p.height for p in row) / _PX + 0.4 for row in rows]
    figure = Figure(figsize=(width, sum(heights)), layout="constrained")
    grid = figure.add_gridspec(len(rows), 1, height_ratios=heights)
    for r, row in enumerate(rows):
        cells = grid[r].subgridspec(1, len(row))
        for c, panel in enumerate(row):
            ax = figure.add_subplot(cells[c])
            ax.set_facecolor(panel.layout.get("plot_bgcolor", "white"))
            for trace in panel.data:
                kind = trace.get("type", "scatter")
                if kind == "heatmap":
                    _heatmap(figure, ax, trace)
                elif kind == "scatter":
                    _scatter(ax, trace)
                elif kind == "bar":
                    _bar(ax, trace)
                else:
                    raise ValueError(
                        f"render_state draws heatmap, scatter and bar traces, "
                        f"got a {kind!r} trace in panel {panel.title!r}"
                    )
            _axis(ax, "x", panel.layout.get("xaxis", {}))
            _axis(ax, "y", panel.layout.get("yaxis", {}))
            _shapes(ax, panel.layout)
            _annotations(ax, panel.layout)
            ax.set_title(panel.title, fontsize=10, loc="left", wrap=True)
            if panel.layout.get("showlegend") and len(panel.data) > 1:
                ax.legend(frameon=False, fontsize=8)
    return figure


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)
    return buffer.getvalue()


class LiveExplorer:
    """An explorer recomputed in a running kernel: ipywidgets controls call
    the states function and the figure redraws.

    Args:
        states: a function of the controls' values (keyword arguments) and
            of ``fixed``, returning an
            :class:`~transformer_edu.figures.controls.State`, as for
            :class:`~transformer_edu.figures.explorer.Explorer`.
        title: the figure's name, shown above the controls.
        description: how to read it, shown under the title.
        controls: :class:`~transformer_edu.figures.controls.Buttons`,
            :class:`~transformer_edu.figures.controls.Slider`,
            :class:`~transformer_edu.figures.controls.Select`, :class:`Text` and
            :class:`Toggle` controls (distinct names).
        fixed: more keyword arguments of ``states``, never changed.

    Display it as a cell's last expression (its widget appears), or use
    :attr:`widget`. :meth:`state` and :meth:`figure` compute without a
    widget; :meth:`set` changes controls as a reader would. A states
    function that raises ``ValueError`` or ``TypeError`` (an unknown word,
    a position past the table) shows its message in place of the figure.
    """

    def __init__(
        self,
        states: Callable[..., State],
        *,
        title: str,
        description: str,
        controls: Sequence,
        fixed: Mapping | None = None,
    ) -> None:
        if not callable(states):
            raise TypeError(
                "states must be a function of the controls' values, got "
                f"{type(states).__name__}"
            )
        for name, text in (("title", title), ("description", description)):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(
                    f"{name} must be a non-empty string, got {text!r}"
                )
        names = check_controls(
            controls, _CONTROLS, "Buttons, Slider, Select, Text or Toggle"
        )
        fixed = dict(fixed or {})
        both = sorted(set(names) & set(fixed))
        if both:
            raise ValueError(
                f"{both} are both controls and fixed arguments; give each "
                "argument once"
            )
        self.states = states
        self.title = " ".join(title.split())
        self.description = " ".join(description.split())
        self.controls = list(controls)
        self.fixed = fixed
        self.values = {c.name: c.start for c in self.controls}
        self.last_state: State | None = None
        self._widget = None
        self._inputs: dict = {}
        self._output = None

    def __repr__(self) -> str:
        return (
            f"LiveExplorer({self.title!r}, controls="
            f"{[c.name for c in self.controls]})"
        )

    def state(self, **values) -> State:
        """The state for the current values, changed by ``values``."""
        unknown = sorted(set(values) - set(self.values))
        if unknown:
            raise ValueError(
                f"unknown control(s) {unknown}; the controls are "
                f"{list(self.values)}"
            )
        state = self.states(**self.fixed, **{**self.values, **values})
        if not isinstance(state, State):
            raise TypeError(
                "the states function must return a figures.State, got "
                f"{type(state).__name__}"
            )
        return state

    def figure(self, **values) -> Figure:
        """:func:`render_state` of :meth:`state`."""
        return render_state(self.state(**values))

    # -- the widget ---------------------------------------------------------

    @property
    def widget(self):
        """The widget (an ipywidgets box) with the title, the controls and
        the redrawn output."""
        if self._widget is None:
            self._widget = self._build()
        return self._widget

    def _build(self):

        import ipywidgets as widgets

        header = widgets.HTML(
            f"<b>{html.escape(self.title)}</b><br>"
            f"<span style='font-size:90%'>{html.escape(self.description)}"
            "</span>"
        )
        self._inputs = {c.name: _widget(c) for c in self.controls}
        for name, control in self._inputs.items():
            control.observe(self._changed(name), names="value")
        self._output = widgets.Output()
        box = widgets.VBox(
            [
                header,
                widgets.HBox(
                    list(self._inputs.values()),
                    layout=widgets.Layout(flex_flow="row wrap"),
                ),
                self._output,
            ]
        )
        box.add_class("tse-live")
        self._redraw()
        return box

    def _changed(self, name: str):
        def update(change) -> None:
            self.values[name] = change["new"]
            self._redraw()

        return update

    def set(self, **values) -> None:
        """Change controls as a reader would (the figure redraws)."""
        unknown = sorted(set(values) - set(self.values))
        if unknown:
            raise ValueError(
                f"unknown control(s) {unknown}; the controls are "
                f"{list(self.values)}"
            )
        for name, value in values.items():
            if name in self._inputs:
                self._inputs[name].value = value  # redraws through observe
            else:
                self.values[name] = value

    def _redraw(self) -> None:
        from IPython.display import Image, display

        with self._output:
            self._output.clear_output(wait=True)
            try:
                state = self.state()
            except (ValueError, TypeError) as error:
                self.last_state = None
                print(f"Nothing to draw: {error}")
                return
            self.last_state = state
            display(Image(data=_png(render_state(state))))
            print(state.summary)
            if state.details:
                print(state.details)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

