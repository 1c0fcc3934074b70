"""Data for the first training runs: toy tasks, a vocabulary and batching.

Chapter 7 trains the whole Transformer for the first time, on data generated
here, offline and from a fixed seed:

* a **copy task** (``"7 3 9 1" -> "7 3 9 1"``) and its **reverse** twin
  (``"7 3 9 1" -> "1 9 3 7"``), the smallest problems that need attention;
* a **toy Korean→English translation task** generated from a small grammar
  that cannot be solved by looking words up. People and animals are both
  subjects and objects (고양이가 개를 쫓았다 "the cat chased the dog", 개가
  고양이를 쫓았다 "the dog chased the cat"), so only the case particles
  (이/가, 을/를, …) say who did what to whom; the particles are separate tokens
  (``고양이 가 개 를 쫓았다``) that the model must read, and a share of the
  sentences put the object first (개를 고양이가 쫓았다, the same English).
  Subject–object–verb becomes subject–verb–object, adverbials move to the
  end, tense, negation (안) and agreement change the English, the English verb
  of 쓰다 and 짓다 depends on the object (편지를 쓰다 "write", 모자를 쓰다
  "wear", 돈을 쓰다 "spend"), and two clauses join with the connective -고,
  whose clause takes its tense from the last verb.

Every task is a list of ``(source, target)`` string pairs whose tokens are
separated by single spaces, so one :class:`Vocab` and one :func:`make_batches`
serve them all, and :func:`load_tsv_pairs` brings your own sentence pairs into
the same shape. The Korean side is stored as tokens; :func:`tokenize_korean`
and :func:`detokenize_korean` convert between them and written Korean.

The modules, in the order Chapter 7 uses them:

* :mod:`~transformer_edu.data.copy_task`: the copy and reverse tasks;
* :mod:`~transformer_edu.data.lexicon`: the grammar's words and particles;
* :mod:`~transformer_edu.data.tokenizer`: written Korean ↔ tokens;
* :mod:`~transformer_edu.data.grammar`: parsing, the rule translation, perturbations;
* :mod:`~transformer_edu.data.translation_task`: the translation task's splits;
* :mod:`~transformer_edu.data.vocab`: :class:`Vocab`;
* :mod:`~transformer_edu.data.batching`: padded batches;
* :mod:`~transformer_edu.data.tsv`: your own sentence pairs;
* :mod:`~transformer_edu.data.subword`: a learned subword vocabulary (Chapter 9);
* :mod:`~transformer_edu.data.sequences`: one sequence per example, for the
  decoder-only model: a translation as a prompt, windows of text (Chapter 10).

Everything public is importable from ``transformer_edu.data`` itself.

Shape legend: B batch, S source length, T target length.
"""

from ._types import Pair
from .batching import Batch, make_batches, pad_batch
from .copy_task import copy_task_pairs, copy_task_splits
from .grammar import (
    Clause,
    Sentence,
    Triple,
    bag_of_tokens,
    grammar_problem,
    grammar_spec,
    parse_sentence,
    reorder,
    swap_roles,
    translate_by_rule,
)
from .lexicon import (
    ANIMATES,
    MOTION_VERBS,
    NEGATION,
    PARTICLES,
    PLACES,
    RUNNING_EXAMPLES,
    THINGS,
    TIME_ADVERBIALS,
    TRANSITIVE_VERBS,
    EnglishVerb,
    Noun,
    Place,
    Thing,
    TimeAdverbial,
    Verb,
    has_batchim,
    with_particle,
    word_hint,
)
from .tokenizer import (
    KOREAN_TOKENIZER,
    KoreanTokenizer,
    detokenize_korean,
    korean_tokenizer_spec,
    tokenize_korean,
)
from .translation_task import (
    MULTI_SENSE_VERBS,
    held_out_compositions,
    same_verb_senses,
    sense_words,
    toy_translation_splits,
)
from .sequences import SEP, SequenceBatch, prompt_batches, prompt_ids, prompt_vocab, text_windows
from .subword import SubwordTokenizer, tokenizer_from_dict
from .tsv import TsvCorpus, guess_encoding, load_tsv_pairs, read_tsv_corpus
from .vocab import Vocab

__all__ = [
    "ANIMATES",
    "KOREAN_TOKENIZER",
    "MOTION_VERBS",
    "MULTI_SENSE_VERBS",
    "NEGATION",
    "PARTICLES",
    "PLACES",
    "RUNNING_EXAMPLES",
    "SEP",
    "THINGS",
    "TIME_ADVERBIALS",
    "TRANSITIVE_VERBS",
    "Batch",
    "Clause",
    "EnglishVerb",
    "KoreanTokenizer",
    "Noun",
    "Pair",
    "Place",
    "Sentence",
    "SequenceBatch",
    "SubwordTokenizer",
    "Thing",
    "TimeAdverbial",
    "TsvCorpus",
    "Triple",
    "Verb",
    "Vocab",
    "bag_of_tokens",
    "copy_task_pairs",
    "copy_task_splits",
    "detokenize_korean",
    "grammar_problem",
    "grammar_spec",
    "has_batchim",
    "held_out_compositions",
    "korean_tokenizer_spec",
    "load_tsv_pairs",
    "read_tsv_corpus",
    "guess_encoding",
    "tokenizer_from_dict",
    "make_batches",
    "pad_batch",
    "parse_sentence",
    "prompt_batches",
    "prompt_ids",
    "prompt_vocab",
    "reorder",
    "same_verb_senses",
    "sense_words",
    "swap_roles",
    "text_windows",
    "tokenize_korean",
    "toy_translation_splits",
    "translate_by_rule",
    "with_particle",
    "word_hint",
]
