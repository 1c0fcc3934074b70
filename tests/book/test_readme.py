"""The README starts with reading: the book, Colab, and the two commands, in few words.

Its first screen (everything before the first ``##`` heading) links the
published book in both editions and opens every chapter, English and Korean,
in Colab, and gives the two commands a fresh clone needs. The whole README
stays at most 1 500 words; the rest lives in CONTRIBUTING.md.
"""

from __future__ import annotations

import re

if __package__:
    from . import book_support as bs
else:
    import book_support as bs

README = (bs.REPO_ROOT / "README.md").read_text(encoding="utf-8")
FIRST_SCREEN = README.split("\n## ", 1)[0]
SITE = bs.read_config()["html"]["baseurl"].rstrip("/") + "/"
COLAB = "https://colab.research.google.com/github/transformer-step-by-step/book/blob/main/"
MAX_WORDS = 1500


def test_readme_is_short():
    words = len(README.split())
    assert words <= MAX_WORDS, f"README.md has {words} words (at most {MAX_WORDS}; move detail to CONTRIBUTING.md)"


def test_first_screen_links_both_editions_of_the_book():
    assert f"]({SITE})" in FIRST_SCREEN
    assert f"]({SITE}ko/)" in FIRST_SCREEN


def test_first_screen_opens_every_chapter_in_colab_in_both_editions():
    links = re.findall(r"\]\((" + re.escape(COLAB) + r"[^)]+)\)", FIRST_SCREEN)
    expected = []
    for notebook in bs.chapter_notebooks():
        english = notebook.relative_to(bs.REPO_ROOT).as_posix()
        expected += [COLAB + english, COLAB + "locales/ko/" + english]
    assert sorted(links) == sorted(expected)
    for link in links:
        assert (bs.REPO_ROOT / link.removeprefix(COLAB)).is_file(), link


def test_first_screen_gives_the_two_commands():
    block = re.search(r"```bash\n(.*?)```", FIRST_SCREEN, re.DOTALL)
    assert block, "no command block on the first screen"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["bash .ci/book", "bash .ci/test"]


def test_contributing_holds_what_the_readme_left_out():
    assert "](CONTRIBUTING.md)" in README
    contributing = (bs.REPO_ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for heading in ("## Making a release", "## Colab, and a stand-in for it", "## Supported versions",
                    "## On a GPU", "## Measured"):
        assert heading in contributing, heading
