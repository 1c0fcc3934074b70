"""The book's figures: static plots, kernel-free explorers and live playgrounds (all chapters).

Read in this order:

* :mod:`~transformer_edu.figures.viz`: the book's look and its static figures
  (attention heatmaps, line plots), drawn with Matplotlib;
* :mod:`~transformer_edu.figures.controls`: controls, panels and states, the
  building blocks of an explorer;
* :mod:`~transformer_edu.figures.live`: a :class:`LiveExplorer` recomputes a
  figure in a running kernel (Jupyter, Colab) from the reader's input;
* :mod:`~transformer_edu.figures.explorer`: an :class:`Explorer` precomputes
  every state of a figure so that it works in the HTML book, without a kernel;
* the chapters' figures: :mod:`~transformer_edu.figures.attention_figures`
  (Chapters 1 and 2), :mod:`~transformer_edu.figures.position_figures`
  (Chapter 3), :mod:`~transformer_edu.figures.translation_figures`
  (Chapters 6 to 8), :mod:`~transformer_edu.figures.beam_figures` (Chapter 8)
  and :mod:`~transformer_edu.figures.language_model_figures` (Chapter 10).

Every public name of the explorer and playground modules is importable from
``transformer_edu.figures`` itself::

    from transformer_edu import figures

    figures.mask_explorer()                         # in the book
    figures.mask_playground(attention=my_attention)  # live, in a kernel
"""

from . import viz
from .attention_figures import (
    MAX_TOKENS,
    heads_playground,
    heads_state,
    mask_explorer,
    mask_playground,
    mask_state,
)
from .beam_figures import beam_explorer
from .controls import (
    BOOK_LAYOUT,
    DECIMALS,
    Buttons,
    Panel,
    Select,
    Slider,
    State,
    check_controls,
    rounded,
)
from .explorer import (
    RUNTIME_CSS,
    RUNTIME_JS,
    TRACE_DATA_KEYS,
    Explorer,
    heatmap_panel,
    show,
)
from .language_model_figures import (
    MODEL_SHAPES,
    cache_bytes,
    kv_cache_explorer,
    rope_explorer,
    rope_playground,
)
from .live import LiveExplorer, Text, Toggle, render_state
from .position_figures import positional_explorer, positional_playground
from .translation_figures import (
    PAD_EXTRA,
    attention_playground,
    beam_state,
    decoder_playground,
    translation_run,
    translation_state,
    translator_playground,
)

__all__ = [
    "BOOK_LAYOUT",
    "DECIMALS",
    "MAX_TOKENS",
    "MODEL_SHAPES",
    "PAD_EXTRA",
    "RUNTIME_CSS",
    "RUNTIME_JS",
    "TRACE_DATA_KEYS",
    "Buttons",
    "Explorer",
    "LiveExplorer",
    "Panel",
    "Select",
    "Slider",
    "State",
    "Text",
    "Toggle",
    "attention_playground",
    "beam_explorer",
    "beam_state",
    "cache_bytes",
    "check_controls",
    "decoder_playground",
    "heads_playground",
    "heads_state",
    "heatmap_panel",
    "kv_cache_explorer",
    "mask_explorer",
    "mask_playground",
    "mask_state",
    "positional_explorer",
    "positional_playground",
    "render_state",
    "rope_explorer",
    "rope_playground",
    "rounded",
    "show",
    "translation_run",
    "translation_state",
    "translator_playground",
    "viz",
]
