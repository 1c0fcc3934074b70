"""The trained translator and what ships with it (Chapter 8).

* :mod:`~transformer_edu.translation.translator`: :class:`Translator`, sentences in, sentences out;
* :mod:`~transformer_edu.translation.pretrained`: the shipped toy Korean→English translator;
* :mod:`~transformer_edu.translation.export`: its ONNX export, run in the browser by the live demo.
"""

from .translator import OutsideGrammarWarning, Translator, UnknownWordsError

__all__ = ["OutsideGrammarWarning", "Translator", "UnknownWordsError"]
