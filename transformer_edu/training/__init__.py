"""Training the Transformer (Chapters 7 and 9).

The paper's recipe, piece by piece: a loss with label smoothing, the Adam
optimizer with β = (0.9, 0.98) and ε = 1e-9, a learning rate that warms up
linearly and then decays with the inverse square root of the step, a
training loop that reports the training and validation loss after every
epoch, and the average of the last checkpoints' weights. Gradient clipping
is our addition. Read in this order:

=====================  ===========================================================  =======
Module                 What it holds                                                Chapter
=====================  ===========================================================  =======
``loss``               label smoothing, perplexity                                  7
``schedule``           Adam with the paper's settings, the warm-up schedule         7
``loop``               ``fit``: batches → loss → backward → clip → step → schedule  7
``weights``            the best epoch's weights, the average of the last epochs     7
``checkpoint``         the model file a user keeps; the state to resume training    7
``recipes``            the book's recipes and ``train_task``, the run they make     7, 9
``distributed``        who is who under ``torchrun``, each process's share          9
``scale``              ``fit_at_scale``: processes, micro-batches, 16-bit, steps    9
=====================  ===========================================================  =======

The command line ``python -m transformer_edu.train`` runs
:func:`~transformer_edu.training.recipes.train_task`.
"""

from .loop import evaluate, fit
from .loss import LabelSmoothingLoss, perplexity
from .schedule import make_optimizer, noam_lambda, noam_rate, warmup_schedule
from .weights import AveragedWeights, BestWeights

__all__ = [
    "LabelSmoothingLoss",
    "perplexity",
    "noam_rate",
    "noam_lambda",
    "warmup_schedule",
    "make_optimizer",
    "evaluate",
    "fit",
    "BestWeights",
    "AveragedWeights",
]
