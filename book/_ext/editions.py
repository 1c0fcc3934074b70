"""Sphinx extension: the book's two editions, English and Korean (placeholder)."""
from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx


def _in_description(node: nodes.Node) -> bool:
    while node is not None:
        if isinstance(node, addnodes.desc):
            return True
        node = node.parent
    return False


def _keep_docstrings_in_english(app: Sphinx, doctree: nodes.document) -> None:
    for node in doctree.findall(nodes.TextElement):
        source = node.source or ""
        if ".py:" in source or source.endswith(".py") or _in_description(node):
            node["translatable"] = False


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", _keep_docstrings_in_english)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
