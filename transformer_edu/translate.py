"""A short name: ``python -m transformer_edu.translate`` runs ``python -m transformer_edu.cli.translate``
(:mod:`transformer_edu.cli.translate`), under ``torchrun -m`` too."""

import sys

from .cli.translate import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
