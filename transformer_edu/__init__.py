"""transformer_edu: the finished reference code of *The Transformer, Step by Step*.

Each module holds the code of one chapter; the chapters build a didactic
version in the open and check it against these. Shape legend: B batch,
S source length, T target length, L any length, D = d_model, H heads,
d_k = D / H, V vocabulary size. Boolean masks: ``True`` = may attend.
"""

from .attention import MultiHeadAttention, record_attention, scaled_dot_product_attention
from .checkpoint import load_checkpoint, load_model, save_checkpoint
from .data import Vocab, load_tsv_pairs, make_batches, toy_translation_splits
from .decoder import Decoder, DecoderLayer, KVCache
from .decoding import beam_search, greedy_decode, sample
from .encoder import Encoder, EncoderLayer
from .interop import copy_weights_from_torch
from .layers import LayerNorm, PositionwiseFeedForward
from .masks import causal_mask, padding_mask, target_mask
from .model import Transformer, TransformerConfig, count_parameters
from .positional import SinusoidalPositionalEncoding, sinusoidal_table
from .training import LabelSmoothingLoss, fit, make_optimizer, warmup_schedule
from .translation.translator import OutsideGrammarWarning, Translator

__version__ = "0.1.0"

# Modules with heavier dependencies (matplotlib, plotly, sacrebleu, tqdm) load
# on first use, so `import transformer_edu` stays quick: `te.viz`, `te.checks`, …
_LAZY_MODULES = {"checks", "cli", "interactive", "metrics", "recipes", "translation", "viz"}


def __getattr__(name: str):
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'transformer_edu' has no attribute {name!r}")

__all__ = [
    "scaled_dot_product_attention",
    "MultiHeadAttention",
    "record_attention",
    "padding_mask",
    "causal_mask",
    "target_mask",
    "sinusoidal_table",
    "SinusoidalPositionalEncoding",
    "LayerNorm",
    "PositionwiseFeedForward",
    "EncoderLayer",
    "Encoder",
    "DecoderLayer",
    "Decoder",
    "KVCache",
    "TransformerConfig",
    "Transformer",
    "count_parameters",
    "copy_weights_from_torch",
    "toy_translation_splits",
    "Vocab",
    "make_batches",
    "load_tsv_pairs",
    "LabelSmoothingLoss",
    "make_optimizer",
    "warmup_schedule",
    "fit",
    "save_checkpoint",
    "load_checkpoint",
    "load_model",
    "greedy_decode",
    "beam_search",
    "sample",
    "OutsideGrammarWarning",
    "Translator",
]
