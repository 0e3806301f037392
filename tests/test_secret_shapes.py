"""The provider token shapes, found in linear time (router/redaction/secret_shapes.py) and skipped where
their literals are absent (router/redaction/regex_literals.py), remove exactly what detect-secrets' own
patterns remove: on texts built from the pieces of every shape (tokens, near misses, runs,
separators), both give the same text, piece for piece."""

import random

import pytest

from router.redaction.regex_literals import required_literals
from router.redaction.secret_shapes import REWRITES, SPACED_ASSIGN, plugin_shapes, remove_shapes

PLACEHOLDER = "[R]"
HEX64 = "0123456789abcdef" * 4
ALNUM = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zA"
# the pieces texts are made of: parts of tokens, labels, separators and runs
PIECES = [
    "eyJ",
    "eyJhbGciOi",
    ".",
    "eyJzdWIiOjF9",
    "abc",
    "x",
    "-",
    "_",
    "=",
    " ",
    "  ",
    "\n",
    '"',
    "'",
    "[",
    "]",
    "//",
    "registry.npmjs.org/",
    "/:_authToken=",
    "npm_",
    "npm_abc123",
    "00000000-0000-0000-0000-000000000000",
    "sk-",
    "sk-proj-",
    ALNUM[:20],
    "T3BlbkFJ",
    ALNUM,
    "sk-x" + ALNUM[:20] + "T3BlbkFJ",
    "key",
    "api_key",
    "pwd",
    "password",
    "token",
    "cloudant",
    "cl",
    "clou",
    "ibm",
    "ibm_cloud_iam",
    "ibm-cos-hmac",
    "secret_access_key",
    "softlayer",
    "sl",
    " = ",
    ":",
    ":=",
    "=>",
    "::",
    HEX64,
    HEX64[:48],
    "abcdefghijklmnopqrstuvwx",
    ALNUM + ALNUM[:12],
    "cloudant_api_key",
    "clpassword",
    "softlayer_api_key",
    "ibm_cloud_iam_api_key",
    "ibm_cos_hmac_secret_access_key",
    " cloudant_api_key = ",
    ' "softlayer_api_key": "',
    "\nclpassword=",
    " ibm_cloud_iam_api_key  ",
    " cos_hmac_secret_access_key: ",
    "AKIA",
    # whole secrets of each rewritten shape, for the pieces around them to disturb
    " cos_hmac_secret_access_key: " + HEX64[:48] + " ",
    " cloudant_api_key = " + HEX64,
    " softlayer_api_key=" + HEX64,
    " ibm_cloud_iam_api_key: " + ALNUM + ALNUM[:12] + " ",
    "//registry.npmjs.org/:_authToken=npm_abc123",
    "eyJhbGciOi.eyJzdWIiOjF9.c2ln",
    "sk-x" + ALNUM[:20] + "T3BlbkFJ" + ALNUM[:20],
    "ABCDEFGHIJKLMNOP",
    "ghp_",
    ALNUM + "abcd",
    "xoxb-",
    "1234-",
    "-us7",
    HEX64[:32],
]


def upstream(text: str) -> str:
    """What detect-secrets' own patterns leave of `text`, applied in the same order."""
    for shape in plugin_shapes():
        text = (shape.replaces or shape.pattern).sub(PLACEHOLDER, text)
    return text


def sample_texts(count: int, seed: int = 35) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(PIECES, k=rng.randint(1, 14))) for _ in range(count)]


def test_each_rewrite_still_replaces_a_pattern_detect_secrets_has():
    upstream_sources = {shape.replaces.pattern for shape in plugin_shapes() if shape.replaces is not None}
    assert set(REWRITES) <= upstream_sources  # an upgrade that changed one must be looked at
    spaced = [s for s in plugin_shapes() if s.replaces is not None and SPACED_ASSIGN in s.replaces.pattern]
    assert len(spaced) >= 5 and all(s.gated for s in spaced)


@pytest.mark.parametrize("seed", range(4))
def test_the_linear_shapes_remove_what_detect_secrets_removes(seed):
    differ = []
    for text in sample_texts(2_000, seed):
        ours, _ = remove_shapes(text, PLACEHOLDER, lambda pattern: True)
        if ours != upstream(text):
            differ.append(text)
    assert differ == []


def test_skipping_a_shape_whose_literals_are_absent_changes_nothing():
    def worth_trying(pattern) -> bool:
        literals = required_literals(pattern)
        return literals is None or any(literal in folded for literal in literals)

    for text in sample_texts(3_000, seed=99):
        folded = text.casefold()
        assert remove_shapes(text, PLACEHOLDER, worth_trying)[0] == upstream(text), text


def test_the_samples_hold_every_shape_that_was_rewritten():
    """The comparisons above mean something: each rewritten or gated shape finds something."""
    texts = sample_texts(2_000, 0)
    for shape in plugin_shapes():
        if shape.replaces is not None:
            assert any(shape.replaces.search(text) for text in texts), shape.replaces.pattern
