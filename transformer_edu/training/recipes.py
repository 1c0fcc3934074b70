"""The book's training recipes, and training one from Python (Chapters 7 and 9).

A :class:`Recipe` holds everything a run needs besides its seed: the model
(a :class:`~transformer_edu.TransformerConfig`), the optimizer and schedule,
the batches, the epochs, the decoding used to test it. :data:`RECIPES` has
one per task: ``ko-en`` (the toy Korean→English grammar), ``copy`` and
``reverse`` (digit sequences), ``tsv`` (your own corpus).

``translator, metrics = train_task("ko-en")`` trains one and tests it on the
held-out split; an ablation passes a changed recipe, e.g. without the source
positional encoding:
``train_task("ko-en", recipe=RECIPES["ko-en"].changed(src_positional=False))``.
The command line ``python -m transformer_edu.train`` runs the same function.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import torch

from .. import _validate, data
from ..metrics import corpus_bleu, exact_match
from ..model import Transformer, TransformerConfig
from ..translation.translator import Translator, UnknownWordsError
from .checkpoint import CHECKPOINT_NAME, RESUME_NAME, load_training_state, resume as resume_training
from .checkpoint import save_checkpoint, save_training_state
from .distributed import World
from .loop import evaluate
from .loss import LabelSmoothingLoss
from .scale import Updater, autocast, check_amp, fit_at_scale
from .schedule import make_optimizer, warmup_schedule
from .weights import AveragedWeights, BestWeights

__all__ = ["RECIPES", "Recipe", "SettingError", "recipe_model", "task_splits", "train_task"]


class SettingError(ValueError):
    """A setting of :func:`train_task` that cannot work with its data or its run.

    ``setting`` names it (a recipe field such as ``"vocab_size"``, or an
    argument such as ``"train"``), ``value`` is what was asked for and
    ``problem`` says what is wrong and what to do; the command line names
    the option (``--vocab-size 100: …``).
    """

    def __init__(self, setting: str, value: object, problem: str) -> None:
        super().__init__(f"{setting}={value!r}: {problem}")
        self.setting, self.value, self.problem = setting, value, problem


def recipe_model(**sizes) -> TransformerConfig:
    """The model of a recipe: a :class:`~transformer_edu.TransformerConfig` of these sizes.

    Its vocabulary sizes, ``pad_id`` and embedding sharing depend on the
    data: :func:`train_task` sets them from the vocabularies it builds. Here
    they hold the smallest values a config takes (the 4 special tokens).
    """
    return TransformerConfig(src_vocab_size=len(data.Vocab.SPECIALS), tgt_vocab_size=len(data.Vocab.SPECIALS),
                             **sizes)


@dataclass(frozen=True)
class Recipe:
    """The model, training and decoding settings of one task.

    ``model`` is the Transformer's configuration (its size, dropout,
    ``max_len``, and ``src_positional=False`` for the ablation without the
    source positional encoding); its vocabulary sizes are set when the
    vocabularies are built (:func:`recipe_model`). ``average_last`` is the
    number of last epochs whose weights are averaged (the paper averages its
    last 5 checkpoints; 1 turns averaging off).

    Chapter 9 adds: ``tokenizer``, ``"words"`` (whitespace words; for the
    toy task, the grammar's tokens) or ``"bpe"`` (a learned
    :class:`~transformer_edu.data.subword.SubwordTokenizer` of at most
    ``vocab_size`` pieces); ``shared_vocab``, one vocabulary for both
    languages and one embedding matrix, also used by the output layer (the
    paper's setting); ``select``, which average is kept: the best valid
    ``"exact_match"`` (greedy, and training stops once it is perfect) or the
    lowest valid ``"loss"`` (for real corpora, where no translation is
    exact); ``accumulate``, micro-batches per update.
    """

    model: TransformerConfig
    batch_size: int
    epochs: int
    warmup: int
    lr_factor: float
    smoothing: float
    clip_norm: float
    beam_size: int
    length_penalty: float
    average_last: int = 1
    tokenizer: str = "words"
    vocab_size: int = 8000
    shared_vocab: bool = False
    select: str = "exact_match"
    accumulate: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.model, TransformerConfig):
            raise TypeError(f"model must be a TransformerConfig, got {type(self.model).__name__}")
        for name in ("batch_size", "epochs", "warmup", "beam_size", "average_last", "vocab_size", "accumulate"):
            _validate.positive_int(name, getattr(self, name))
        for name in ("lr_factor", "clip_norm"):
            _validate.positive_number(name, getattr(self, name))
        _validate.probability("smoothing", self.smoothing)
        if isinstance(self.length_penalty, bool) or not isinstance(self.length_penalty, (int, float)) \
                or self.length_penalty < 0:
            raise ValueError(f"length_penalty must be a number >= 0, got {self.length_penalty!r}")
        _validate.one_of("tokenizer", self.tokenizer, ("words", "bpe"))
        _validate.one_of("select", self.select, ("exact_match", "loss"))
        if not isinstance(self.shared_vocab, bool):
            raise TypeError(f"shared_vocab must be a bool, got {self.shared_vocab!r}")

    def changed(self, **changes) -> Recipe:
        """A copy with ``changes``, the model's fields (``d_model``, ``dropout``, …) among them."""
        model_fields = {f.name for f in fields(TransformerConfig)}
        model = {k: v for k, v in changes.items() if k in model_fields}
        rest = {k: v for k, v in changes.items() if k not in model_fields}
        return replace(self, model=replace(self.model, **model), **rest) if model else replace(self, **rest)


RECIPES = {
    # ko-en differs from the paper's base recipe in size (D = 64, two layers), in P_drop = 0 (measured
    # 2026-11-23: with dropout 0.1 validation is perfect after 17 epochs and 173 s of CPU time, over
    # the 150 s CPU-time budget, instead of 9 epochs and 67 s; both reach 100 % on test) and in
    # averaging the last 5 epochs' weights where the paper averages its last 5 checkpoints, and in
    # clipping gradients (our addition);
    # warm-up, Adam, label smoothing and beam search (K = 4, α = 0.6) are the paper's.
    "ko-en": Recipe(recipe_model(d_model=64, n_heads=4, d_ff=256, n_layers=2, dropout=0.0, max_len=128),
                    batch_size=64, epochs=10, warmup=200, lr_factor=0.5, smoothing=0.1, clip_norm=1.0, beam_size=4,
                    length_penalty=0.6, average_last=5),
    "copy": Recipe(recipe_model(d_model=64, n_heads=4, d_ff=256, n_layers=2, dropout=0.0, max_len=128),
                   batch_size=64, epochs=20, warmup=100, lr_factor=0.15, smoothing=0.1, clip_norm=1.0, beam_size=4,
                   length_penalty=0.6),
    # Your own corpus (Chapter 9): a small Transformer for a GPU such as Colab's T4, with the paper's
    # dropout, label smoothing and warm-up, a learned BPE vocabulary of 8 000 pieces, the average of
    # the last 5 epochs with the lowest valid loss kept. Change any of it from the command line.
    "tsv": Recipe(recipe_model(d_model=256, n_heads=8, d_ff=1024, n_layers=4, dropout=0.1, max_len=256),
                  batch_size=128, epochs=10, warmup=4000, lr_factor=1.0, smoothing=0.1, clip_norm=1.0, beam_size=4,
                  length_penalty=0.6, average_last=5, tokenizer="bpe", select="loss"),
}
RECIPES["reverse"] = RECIPES["copy"]


def task_splits(task: str, seed: int = 0, *, train: str | Path | data.TsvCorpus | None = None,
                valid: str | Path | data.TsvCorpus | None = None,
                test: str | Path | data.TsvCorpus | None = None) -> dict[str, list[tuple[str, str]]]:
    """The train / valid / test pairs of ``task`` ("ko-en", "copy", "reverse" or "tsv").

    For ``"tsv"``, the pairs of the files ``train``, ``valid`` and (if given)
    ``test``, read by :func:`~transformer_edu.data.tsv.read_tsv_corpus`,
    which leaves bad lines out (or corpora it has read, e.g. with other
    columns); ``splits["skipped"]`` then lists, per file, its report of
    them (empty strings when none was).

    Raises:
        SettingError: a file is missing or unreadable, or holds no usable line
            (the training file: fewer than two); ``setting`` names it
            (``"train"``, ``"valid"`` or ``"test"``).
    """
    if task == "ko-en":
        return data.toy_translation_splits(seed)
    if task in ("copy", "reverse"):
        return data.copy_task_splits(seed, reverse=task == "reverse")
    if task == "tsv":
        files = {"train": train, "valid": valid, "test": test}
        for name in ("train", "valid"):
            if files[name] is None:
                raise SettingError(name, None, f"task 'tsv' needs a {name} file of source<TAB>target lines")
        corpora = {}
        for name, source in files.items():
            try:
                corpora[name] = source if isinstance(source, data.TsvCorpus) or source is None \
                    else data.read_tsv_corpus(source)
            except (OSError, ValueError) as error:
                raise SettingError(name, str(source), str(error)) from None
        corpora = {name: corpus for name, corpus in corpora.items() if corpus is not None}
        if len(corpora["train"].pairs) < 2:
            raise SettingError("train", str(corpora["train"].path), f"holds a single usable sentence pair (line "
                               f"{corpora['train'].lines[0]}): a model cannot learn to translate from one example; "
                               "the file needs one 'source<TAB>target' pair per line")
        splits = {name: corpus.pairs for name, corpus in corpora.items()}
        splits["skipped"] = [corpus.report() for corpus in corpora.values()]
        return splits
    raise ValueError(f"task must be one of {sorted(RECIPES)}, got {task!r}")


def _tokenizers(task: str, recipe: Recipe, train: list[tuple[str, str]], use_grammar_tokenizer: bool):
    """The source and target tokenizers and vocabularies a recipe asks for, learned from ``train``."""
    sources, targets = [s for s, _ in train], [t for _, t in train]
    if recipe.tokenizer == "bpe":
        texts = [sources + targets] if recipe.shared_vocab else [sources, targets]
        smallest = max(data.SubwordTokenizer.smallest_vocab_size(t) for t in texts)
        if recipe.vocab_size < smallest:
            raise SettingError("vocab_size", recipe.vocab_size, f"too small: a bpe vocabulary of the training text "
                               f"needs at least {smallest} pieces (4 specials, 256 byte pieces and one for each "
                               "character of the text)")
        if recipe.shared_vocab:
            src_tok = tgt_tok = data.SubwordTokenizer.train(sources + targets, recipe.vocab_size)
        else:
            src_tok = data.SubwordTokenizer.train(sources, recipe.vocab_size)
            tgt_tok = data.SubwordTokenizer.train(targets, recipe.vocab_size)
        return src_tok, tgt_tok, src_tok.vocab(), tgt_tok.vocab()
    src_tok = data.KOREAN_TOKENIZER if task == "ko-en" and use_grammar_tokenizer else None
    src_words = [" ".join(src_tok.tokenize(s)) if src_tok else s for s in sources]
    if recipe.shared_vocab:
        src_vocab = tgt_vocab = data.Vocab.build(src_words + targets)
    else:
        src_vocab, tgt_vocab = data.Vocab.build(src_words), data.Vocab.build(targets)
    return src_tok, None, src_vocab, tgt_vocab


def recipe_differences(stored: dict, recipe: Recipe) -> list[tuple[str, object, object]]:
    """``(setting, stored value, this recipe's value)`` for each setting of a stored recipe
    (``asdict(Recipe)``) that differs from ``recipe``, the number of epochs aside."""
    def flat(values: dict) -> dict:
        return {**{k: v for k, v in values.items() if k not in ("model", "epochs")}, **values.get("model", {})}

    mine, theirs = flat(asdict(recipe)), flat(stored)
    return [(key, theirs.get(key), mine[key]) for key in mine if theirs.get(key) != mine[key]]


def train_task(
    task: str = "ko-en",
    *,
    recipe: Recipe | None = None,
    epochs: int | None = None,
    seed: int = 0,
    data_seed: int = 0,
    device: str | torch.device = "cpu",
    progress: bool = True,
    out: str | Path | None = None,
    src_transform: Callable[[str], str] | None = None,
    amp: str | None = None,
    train: str | Path | None = None,
    valid: str | Path | None = None,
    test: str | Path | None = None,
    max_steps: int | None = None,
    resume: str | Path | None = None,
    world: World | None = None,
    log: Callable[[str], None] | None = None,
    measure: bool = True,
) -> tuple[Translator, dict]:
    """Train the recipe of ``task`` and measure it on the test split.

    Args:
        task: "ko-en", "copy", "reverse" or "tsv" (your own corpus, Chapter 9).
        recipe: the settings; default ``RECIPES[task]``. Pass a changed copy
            for an ablation, e.g. ``RECIPES["ko-en"].changed(smoothing=0.0)``.
        epochs: overrides the recipe's number of epochs.
        seed: seeds the weights, dropout and the batch order.
        data_seed: seeds the generated data (and so the test split).
        device: where to train.
        progress: show a progress bar.
        out: a directory to save the run into after every epoch, or ``None``:
            ``checkpoint.pt``, the model to translate with (the best average
            so far, the vocabularies and tokenizers, the task, the recipe and
            the history), and ``resume.pt``, the state to resume training
            from (see :mod:`~transformer_edu.training.checkpoint`). Files
            already there are replaced.
        src_transform: rewrites every source sentence of every split
            (train, valid, test, ood, same_verb) before anything else, e.g.
            :func:`~transformer_edu.data.grammar.bag_of_tokens` for a bag-of-words
            baseline; the metrics are measured on the rewritten sources, and
            ``metrics["src_transform"]`` names it. The translator returned
            does not apply it: give it rewritten sentences.
        amp: ``None`` (float32, the default), ``"bf16"`` or ``"fp16"``:
            training, validation and the test translations run under that
            autocast (see :func:`~transformer_edu.training.scale.autocast`; fp16
            scales the loss with a GradScaler).
        train, valid, test: for ``task="tsv"``, the tab-separated files, or
            the :class:`~transformer_edu.data.tsv.TsvCorpus` read from them
            (:func:`task_splits`); without ``test``, the metrics are measured
            on the valid split (``metrics["test_split"]`` says which).
        max_steps: stop after this many batches (optimizer updates) in all;
            without ``epochs``, the run gets as many epochs as that takes.
        resume: the directory of an earlier run with ``out`` (or its
            ``resume.pt``): its weights, optimizer, schedule, history,
            averaged weights and position (epoch and batch) are restored and
            training goes on, under any number of processes. Its
            vocabularies are used; its task and recipe must be this run's
            (the number of epochs aside).
        world: the :class:`~transformer_edu.training.distributed.World` of a
            ``torchrun`` job; each process takes its share of every batch
            (:class:`~transformer_edu.training.scale.Updater`), only rank 0 writes the
            checkpoint and measures the test split (the other ranks return
            empty metrics). ``None``: one process.
        log: where messages about the data go (e.g. skipped lines); default ``print`` on rank 0.
        measure: translate the test split (and ood, same_verb) at the end; ``False``
            skips it (a quick run, or a big test set to translate later): the metrics
            then hold the training's numbers only, without ``exact_match`` and ``bleu``.

    After every epoch the weights of the last ``recipe.average_last``
    epochs are averaged and the average is measured on the valid split: its
    greedy exact match (``history["valid_exact_match"]``; training stops once
    it is perfect) or, with ``recipe.select == "loss"``, its loss
    (``history["valid_average_loss"]``). The translator gets the best average.

    Returns:
        ``(translator, metrics)``; ``metrics`` holds the test split's
        ``exact_match`` (a fraction) and ``bleu`` with the recipe's beam
        search, ``greedy_exact_match`` and ``greedy_bleu``, the same four
        for the out-of-distribution split under ``ood`` and for the
        one-verb-two-senses split under ``same_verb`` (ko-en only),
        ``bleu_signature``, ``train_seconds`` (wall clock),
        ``train_cpu_seconds`` (CPU time of this process, fairer on a busy
        machine), ``test_size``, the ``config``, the ``recipe``, the
        ``decoding`` settings and the ``history``.

    Raises:
        SettingError: a setting that cannot work with this data or run (a
            corpus file, ``vocab_size``, ``max_len``, the task or recipe of the
            run to resume, an ``out`` that cannot be written); it names the setting.
    """
    if task not in RECIPES:
        raise ValueError(f"task must be one of {sorted(RECIPES)}, got {task!r}")
    if recipe is None:
        recipe = RECIPES[task]
    elif not isinstance(recipe, Recipe):
        raise TypeError(f"recipe must be a Recipe, got {type(recipe).__name__}")
    if src_transform is not None and not callable(src_transform):
        raise TypeError(f"src_transform must be a function str -> str or None, got {type(src_transform).__name__}")
    if max_steps is not None:
        _validate.positive_int("max_steps", max_steps)
    check_amp(amp)
    world = World() if world is None else world
    log = log if log is not None else (print if world.is_main else (lambda message: None))
    if out is not None and world.is_main:
        _check_writable(Path(out))
    stored = _resumable(resume, task, recipe) if resume is not None else None
    torch.manual_seed(seed)
    random.seed(seed)
    splits = task_splits(task, data_seed, train=train, valid=valid, test=test)
    for report in splits.pop("skipped", []):
        if report:
            log(report)
    if task == "ko-en" and recipe.tokenizer == "bpe":  # the subword tokenizer reads Korean as written
        splits = {name: [(data.detokenize_korean(src), tgt) for src, tgt in pairs] for name, pairs in splits.items()}
    if src_transform is not None:
        splits = {name: [(src_transform(src), tgt) for src, tgt in pairs] for name, pairs in splits.items()}
    if stored is not None:
        extra = stored["extra"]
        src_vocab, tgt_vocab = data.Vocab.from_dict(extra["src_vocab"]), data.Vocab.from_dict(extra["tgt_vocab"])
        src_tok = data.tokenizer_from_dict(extra.get("src_tokenizer"))
        tgt_tok = data.tokenizer_from_dict(extra.get("tgt_tokenizer"))
    else:
        src_tok, tgt_tok, src_vocab, tgt_vocab = _tokenizers(task, recipe, splits["train"], src_transform is None)
    encoded = _fit_lengths(task, recipe, splits, src_tok, tgt_tok, log)
    if max_steps is not None and epochs is None:  # as many epochs as the steps need
        epochs = -(-max_steps // -(-len(encoded["train"]) // recipe.batch_size))
    if epochs is not None:
        recipe = replace(recipe, epochs=epochs)
    shared = recipe.shared_vocab and src_vocab == tgt_vocab
    config = replace(recipe.model, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                     pad_id=data.Vocab.pad_id, share_embeddings=shared, tie_output=shared)
    model = Transformer(config).to(device)
    if world.rank > 0:  # dropout draws its own numbers on each process; rank 0 draws those of one process
        torch.manual_seed(seed + 1_000_003 * world.rank)
    optimizer = make_optimizer(model)
    scheduler = warmup_schedule(optimizer, config.d_model, recipe.warmup, recipe.lr_factor)
    loss_fn = LabelSmoothingLoss(len(tgt_vocab), recipe.smoothing, data.Vocab.pad_id)
    batches_per_epoch = -(-len(encoded["train"]) // recipe.batch_size)

    def train_batches(epoch: int):
        return data.make_batches(encoded["train"], src_vocab, tgt_vocab, recipe.batch_size, shuffle=True,
                                 seed=seed * 1000 + epoch, sort_by_length=True)

    valid_batches = list(data.make_batches(encoded["valid"], src_vocab, tgt_vocab, 256))
    translator = Translator(model, src_vocab, tgt_vocab, src_tok, tgt_tok)
    valid_sources, valid_references = map(list, zip(*splits["valid"]))
    metric = "valid_exact_match" if recipe.select == "exact_match" else "valid_average_loss"
    best = BestWeights(model, metric, mode="max" if recipe.select == "exact_match" else "min")
    averaged = AveragedWeights(model, last=recipe.average_last)
    history, start_epoch, start_batch = None, 0, 0
    if stored is not None:
        history, start_epoch, start_batch = _restore(resume, model, optimizer, scheduler, averaged, best)
    position = {**_position(history, averaged, best, batches_per_epoch), "batch": start_batch}
    about = {**translator.vocabularies(), "task": task, "recipe": asdict(recipe)}

    def on_epoch_end(epoch: int, history: dict) -> bool:
        """Average the last epochs' weights, measure the average on the valid split, keep the best
        average, save the run; stop once the average translates the valid split perfectly."""
        nonlocal position
        complete = history["step"][-1] % batches_per_epoch == 0
        averaged(epoch, history)
        # inside, the model holds the average; training resumes with its own weights
        with averaged.applied(), autocast(device, amp):
            if recipe.select == "exact_match":
                hypotheses = translator.translate(valid_sources, beam_size=1)
                history.setdefault(metric, []).append(exact_match(hypotheses, valid_references))
            else:
                history.setdefault(metric, []).append(evaluate(model, valid_batches, loss_fn)["loss"])
            best(epoch, history)
        if complete:  # a resumed run starts from the last whole epoch's averages, and the batch reached
            position = _position(history, averaged, best, batches_per_epoch)
        else:
            position = {**position, "batch": history["step"][-1] % batches_per_epoch,
                        "history": {k: list(v) for k, v in history.items()}}
        if out is not None and world.is_main:
            save_training_state(Path(out) / RESUME_NAME, model, optimizer, scheduler, epoch=position["epoch"],
                                extra={**about, **position})
            with _selected(model, best, averaged):
                save_checkpoint(Path(out) / CHECKPOINT_NAME, model, extra={**about, "history": history})
        return recipe.select == "exact_match" and best.best == 1.0

    updater = Updater(model, optimizer, loss_fn, scheduler, recipe.clip_norm, world=world,
                      accumulate=recipe.accumulate, amp=amp)
    start, cpu_start = time.perf_counter(), time.process_time()
    history = fit_at_scale(model, train_batches, valid_batches, epochs=recipe.epochs, updater=updater,
                           max_steps=max_steps, start_epoch=start_epoch, start_batch=start_batch, history=history,
                           on_epoch_end=on_epoch_end, progress=progress)
    train_seconds, train_cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    best_epoch = best.restore()
    if not world.is_main:
        return translator, {}
    run = {"task": task, "steps": history["step"][-1], "epochs_run": len(history["epoch"]), "best_epoch": best_epoch,
           "train_seconds": train_seconds, "train_cpu_seconds": train_cpu_seconds, "processes": world.size,
           "seed": seed, "config": config.to_dict(), "recipe": asdict(recipe), "history": history}
    if not measure:
        return translator, run
    test_split = "test" if "test" in splits else "valid"
    test_scores, hypotheses = _measure(translator, recipe, device, amp, splits[test_split])
    sources, references = zip(*splits[test_split])
    metrics = {
        "task": task,
        "exact_match": test_scores["exact_match"],
        "bleu": test_scores["bleu"],
        "bleu_signature": corpus_bleu(hypotheses, list(references)).signature,
        "test_size": test_scores["size"],
        "test_split": test_split,
        "train_seconds": train_seconds,
        "train_cpu_seconds": train_cpu_seconds,
        "decode_seconds": test_scores["decode_seconds"],
        "greedy_exact_match": test_scores["greedy_exact_match"],
        "greedy_bleu": test_scores["greedy_bleu"],
        "decoding": {"method": "beam search" if recipe.beam_size > 1 else "greedy",
                     "beam_size": recipe.beam_size, "length_penalty": recipe.length_penalty},
        "epochs_run": run["epochs_run"],
        "steps": run["steps"],
        "best_epoch": best_epoch,
        "seed": seed,
        "data_seed": data_seed,
        "device": str(device),
        "processes": world.size,
        "amp": amp,
        "threads": torch.get_num_threads(),
        "torch_version": str(torch.__version__),
        "config": run["config"],
        "recipe": run["recipe"],
        "history": history,
        "failures": [{"source": s, "reference": r, "output": h}
                     for s, r, h in zip(sources, references, hypotheses) if h.split() != r.split()][:20],
    }
    if "unknown_word_sentences" in test_scores:
        metrics["unknown_word_sentences"] = test_scores["unknown_word_sentences"]
    for extra_split in ("ood", "same_verb"):
        if extra_split in splits:
            metrics[extra_split] = _measure(translator, recipe, device, amp, splits[extra_split])[0]
    if src_transform is not None:
        metrics["src_transform"] = getattr(src_transform, "__name__", repr(src_transform))
    return translator, metrics


def _check_writable(out: Path) -> None:
    """Refuse an ``out`` that cannot hold the run, before any training (without creating it)."""
    existing = next(p for p in (out, *out.parents) if p.exists())
    if not existing.is_dir():
        raise SettingError("out", str(out), f"{'it' if existing == out else existing} is a file; expected a "
                                            "directory to write the run into")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise SettingError("out", str(out), f"cannot write in {existing} ({error.strerror or error})") from None


def _resumable(path: str | Path, task: str, recipe: Recipe) -> dict:
    """The training state at ``path``, if it is of this task and recipe (else a SettingError)."""
    state = load_training_state(path)
    extra = state["extra"]
    if extra.get("task") != task:
        raise SettingError("task", task, f"{path} was trained with task {extra.get('task')!r}; resume it with that "
                                         "task")
    differences = recipe_differences(extra["recipe"], recipe)
    if differences:
        setting, then, now = differences[0]
        more = f" (and {len(differences) - 1} more: {', '.join(d[0] for d in differences[1:])})" \
            if len(differences) > 1 else ""
        raise SettingError(setting, now, f"{path} was trained with {then!r}; resume it with the same settings{more}")
    return state


def _fit_lengths(task: str, recipe: Recipe, splits: dict, src_tok, tgt_tok, log: Callable[[str], None]) -> dict:
    """The train and valid pairs as the space-separated tokens the vocabularies read, without the
    pairs longer than the model's ``max_len`` (for ``tsv``; the toy tasks' must all fit)."""
    def tokens(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(" ".join(src_tok.tokenize(s)) if src_tok else s, " ".join(tgt_tok.tokenize(t)) if tgt_tok else t)
                for s, t in pairs]

    max_len = recipe.model.max_len
    encoded = {name: tokens(splits[name]) for name in ("train", "valid")}
    for name, pairs in encoded.items():  # pairs longer than the positional table
        lengths = [max(len(s.split()), len(t.split())) + 1 for s, t in pairs]
        too_long = [i for i, length in enumerate(lengths) if length > max_len]
        if too_long and task != "tsv":
            raise SettingError("max_len", max_len, f"shorter than the longest sentence of {name} "
                                                   f"({max(lengths)} tokens with EOS)")
        if too_long:
            log(f"{name}: {len(too_long)} pairs of over {max_len - 1} tokens left out (the model's max_len)")
            keep = sorted(set(range(len(pairs))) - set(too_long))
            encoded[name] = [pairs[i] for i in keep]
            splits[name] = [splits[name][i] for i in keep]
        if not encoded[name]:
            raise SettingError("max_len", max_len, f"every {name} pair is longer (shortest: {min(lengths)} tokens "
                                                   "with EOS)")
    return encoded


def _measure(translator: Translator, recipe: Recipe, device, amp: str | None,
             pairs: list[tuple[str, str]]) -> tuple[dict, list[str]]:
    """Exact match and BLEU of ``pairs``, with the recipe's beam search and greedily; and the beam's outputs."""
    sources, references = map(list, zip(*pairs))
    known = [i for i, s in enumerate(sources) if _known(translator, s)]
    beam, greedy = [""] * len(sources), [""] * len(sources)  # a sentence with unknown words: no output
    with autocast(device, amp):
        start = time.perf_counter()
        for i, h in zip(known, translator.translate([sources[i] for i in known], beam_size=recipe.beam_size,
                                                     length_penalty=recipe.length_penalty) if known else []):
            beam[i] = h
        seconds = time.perf_counter() - start
        for i, h in zip(known, translator.translate([sources[i] for i in known], beam_size=1) if known else []):
            greedy[i] = h
    scores = {"size": len(pairs), "exact_match": exact_match(beam, references),
              "bleu": corpus_bleu(beam, references).score, "greedy_exact_match": exact_match(greedy, references),
              "greedy_bleu": corpus_bleu(greedy, references).score, "decode_seconds": seconds}
    if len(known) < len(sources):
        scores["unknown_word_sentences"] = len(sources) - len(known)
    return scores, beam


def _known(translator: Translator, sentence: str) -> bool:
    try:
        translator.check_words(sentence)
    except UnknownWordsError:
        return False
    return True


def _copy(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in state.items()}


def _position(history, averaged: AveragedWeights, best: BestWeights, batches_per_epoch: int) -> dict:
    """Where a run stands at the end of a whole epoch, besides its weights and optimizer: what it
    needs to go on exactly from here."""
    history = history or {}
    steps = (history.get("step") or [0])[-1]
    return {"epoch": steps // batches_per_epoch, "batch": 0, "history": {k: list(v) for k, v in history.items()},
            "averaged": averaged.state_dict(), "best": best.state_dict()}


class _selected:
    """Inside the block, the model holds the weights the translator keeps (the best average so far)."""

    def __init__(self, model, best: BestWeights, averaged: AveragedWeights) -> None:
        self.model, self.best, self.averaged = model, best, averaged

    def __enter__(self):
        self.own = _copy(self.model.state_dict())
        if self.best.epoch is not None:
            self.best.restore()

    def __exit__(self, *exc) -> None:
        self.model.load_state_dict(self.own)


def _restore(path, model, optimizer, scheduler, averaged: AveragedWeights, best: BestWeights):
    """Load a run's training state; returns (history, epoch, batch) to start from."""
    state = resume_training(path, model, optimizer, scheduler)  # weights, optimizer, schedule, generators
    extra = state["extra"]
    averaged.load_state_dict(extra["averaged"])
    best.load_state_dict(extra["best"])
    return extra["history"] or None, extra["epoch"], extra["batch"]
