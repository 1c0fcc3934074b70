"""Fixtures shared by the test modules."""

import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models run faster on one thread, and far faster on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# The small model most unit tests use: big enough to have every part (2 + 2 layers,
# 4 heads), small enough to run a forward pass in a millisecond.
TINY = dict(src_vocab_size=23, tgt_vocab_size=19, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64)


@pytest.fixture(scope="session")
def tiny_model():
    """Make a small seeded :class:`~transformer_edu.Transformer` in eval mode.

    ``tiny_model(seed=0, **overrides)``: the sizes of ``TINY`` with any
    :class:`~transformer_edu.TransformerConfig` field replaced, e.g.
    ``tiny_model(norm_first=True)`` or ``tiny_model(src_vocab_size=20, tgt_vocab_size=20)``.
    """
    import transformer_edu as te

    def make(seed: int = 0, **overrides) -> te.Transformer:
        torch.manual_seed(seed)
        return te.Transformer(te.TransformerConfig(**{**TINY, **overrides})).eval()

    return make
