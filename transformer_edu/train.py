"""A short name: ``python -m transformer_edu.train`` runs ``python -m transformer_edu.cli.train``
(:mod:`transformer_edu.cli.train`), under ``torchrun -m`` too."""

import sys

from .cli.train import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
