"""The Colab stand-in, built once per session for every test of tests/colab/
(the root conftest.py keeps them on one pytest-xdist worker)."""

from __future__ import annotations

import pytest

if __package__:
    from . import colab_support as cs
else:
    import colab_support as cs


@pytest.fixture(scope="session")
def standin(tmp_path_factory):
    """A fresh environment with Colab's versions (colab-packages.txt), before any setup cell."""
    if cs.uv() is None:
        pytest.skip("uv not found (requirements.txt installs it): no Colab stand-in")
    home = tmp_path_factory.mktemp("colab")
    built = cs.build(home / "venv")
    print(f"Colab stand-in: Python {'.'.join(map(str, built.version))}, built in {built.seconds:.0f} s")
    return built


@pytest.fixture(scope="session")
def installed(standin, tmp_path_factory):
    """Run the notebooks' setup cell in a kernel of the stand-in, as a reader's
    first step in Colab; the package comes from a copy of this checkout."""
    home = tmp_path_factory.mktemp("colab-setup")
    source = cs.clone(home / "book")
    env = standin.env(TRANSFORMER_EDU_SOURCE=str(source))
    notebook = cs.run_cells([cs.setup_source()], standin.python, env, home, timeout=1200)
    return {
        "outputs": notebook.cells[0].outputs,
        "after": cs.freeze(standin.python),
        "home": home,
    }
