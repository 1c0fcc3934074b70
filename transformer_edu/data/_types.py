"""Types shared by the data modules."""

Pair = tuple[str, str]
"""A (source, target) pair of sentences, tokens separated by single spaces."""
