"""The command lines: ``python -m transformer_edu.cli.<name> --help``.

* :mod:`~transformer_edu.cli.train`: train a recipe, save a checkpoint and its metrics (Chapter 7);
* :mod:`~transformer_edu.cli.translate`: translate sentences with a checkpoint (Chapter 8);
* :mod:`~transformer_edu.cli.export`: export a translator to ONNX for the live demo (Chapter 8);
* :mod:`~transformer_edu.cli.pretrained`: check or rebuild the shipped translator (Chapter 8).

Each checks its arguments and calls the library; none holds logic of its own.
"""
