"""transformer_edu: the finished reference code of *The Transformer, Step by Step*.

Each module holds the code of one chapter; the chapters build a didactic
version in the open and check it against these. Read in this order:

=====================  ==========================================================  =======
Module                 What it holds                                               Chapter
=====================  ==========================================================  =======
``masks``              padding, causal and target masks (``True`` = may attend)    1
``attention``          scaled dot-product attention, multi-head attention          1, 2
``positional``         the sinusoidal positional encoding; rotary embeddings       3, 10
``layers``             layer normalisation, the position-wise feed-forward net;    4, 10
                       RMSNorm and the SwiGLU block
``encoder``            the encoder layer and stack                                 5
``decoder``            the decoder layer and stack                                 6
``model``              the whole Transformer and its configuration                 6
``interop``            copying weights from PyTorch's modules and Hugging Face's   4-6, 10
``data``               toy tasks, the Korean grammar, vocabulary, batches;         7, 9, 10
                       your own corpus, the learned subword vocabulary;
                       prompts and windows of text for the decoder-only model
``training``           the loss, the schedule, ``fit``, checkpoints, the book's    7, 9
                       recipes (``train_task``), several processes, 16 bits
``metrics``            exact match and BLEU                                        7
``seeds``              recording a run, checking a claim, the spread over seeds   7-10
``kv_cache``           the key/value cache of step-by-step decoding                8
``decoding``           greedy decoding, beam search, sampling                      8
``translation``        the Translator, the shipped model, its ONNX export          8
``profiling``          where a decoding step's time goes                           8
``language_model``     the decoder-only model, its configuration, generation       10
``checks``             checks of your own implementations, with a diagnosis        1-4
``figures``            the book's plots, explorers and live playgrounds            all
=====================  ==========================================================  =======

The command lines are modules of their own: ``python -m transformer_edu.train``
(Chapters 7, 9), ``python -m transformer_edu.translate`` and
``python -m transformer_edu.export`` (Chapter 8); ``--help`` says more.

Argument checks sit at the public entry points, the doors (``_validate``):
a call from outside the package checks its arguments once, and the layers
and decoding steps it runs compute without checking again. Shape legend:
B batch, S source length, T target length, L any length, D = d_model,
H heads, d_k = D / H, V vocabulary size. Boolean masks: ``True`` = may attend.
"""

from .attention import MultiHeadAttention, record_attention, scaled_dot_product_attention
from .data import Vocab, load_tsv_pairs, make_batches, toy_translation_splits
from .decoder import Decoder, DecoderLayer
from .decoding import beam_search, greedy_decode, sample
from .encoder import Encoder, EncoderLayer
from .interop import copy_weights_from_torch
from .kv_cache import KVCache
from .language_model import LanguageModel, LanguageModelConfig, generate
from .layers import LayerNorm, PositionwiseFeedForward, RMSNorm, SwiGLUFeedForward
from .masks import causal_mask, padding_mask, target_mask
from .model import Transformer, TransformerConfig, count_parameters
from .positional import RotaryPositionalEncoding, SinusoidalPositionalEncoding, rotary_angles, sinusoidal_table
from .training import LabelSmoothingLoss, fit, make_optimizer, warmup_schedule
from .training.checkpoint import load_checkpoint, load_model, save_checkpoint
from .translation.translator import OutsideGrammarWarning, Translator

__version__ = "0.2.0"

# Modules with heavier dependencies (matplotlib, plotly, sacrebleu, tqdm) load
# on first use, so `import transformer_edu` stays quick: `te.figures`, `te.checks`, …
_LAZY_MODULES = {"checks", "figures", "metrics", "translation"}


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
    "rotary_angles",
    "RotaryPositionalEncoding",
    "LayerNorm",
    "RMSNorm",
    "PositionwiseFeedForward",
    "SwiGLUFeedForward",
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
    "LanguageModelConfig",
    "LanguageModel",
    "generate",
]
