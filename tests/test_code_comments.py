"""Code comments say why in a few lines and point at docs/ for figures (issue: comments that
carried tuning logs): no block of comments longer than MAX_COMMENT_LINES in the package, and
no comment line quoting measured scores (two three-decimal figures, as recall and nDCG are
reported side by side in a tuning log)."""

import io
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "router"
MAX_COMMENT_LINES = 8
# scores side by side (0.726 / 0.671): what a tuning log looks like; one precision (±0.005) is not
MEASURED_SCORE = re.compile(r"\b0\.\d{3}\b.*\b0\.\d{3}\b")


def comment_blocks(path: Path) -> list[list[tuple[int, str]]]:
    """Runs of comment lines on consecutive lines of one file."""
    blocks: list[list[tuple[int, str]]] = []
    previous = -2
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        if line != previous + 1:
            blocks.append([])
        blocks[-1].append((line, token.string))
        previous = line
    return blocks


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_sources():
    assert len(SOURCES) > 100


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_comments_are_short_and_quote_no_measurements(path):
    for block in comment_blocks(path):
        first = block[0][0]
        assert len(block) <= MAX_COMMENT_LINES, f"{path.name}:{first}: a comment of {len(block)} lines"
        for line, text in block:
            assert not MEASURED_SCORE.search(text), f"{path.name}:{line}: a measured figure: {text}"


def test_the_checks_catch_a_tuning_log(tmp_path):
    log = tmp_path / "tuned.py"
    log.write_text("".join(f"# W {w}: 0.72{w} / 0.66{w}\n" for w in range(10)) + "WEIGHT = 35\n")
    (block,) = comment_blocks(log)
    assert len(block) == 10 > MAX_COMMENT_LINES
    assert MEASURED_SCORE.search(block[0][1])
