"""Secrets told in prose: `my password is correct horse battery staple` loses the rest of the
clause, while prose that talks about passwords (the README and docs/, the role prompts, the
config, every seed tool's description) loses nothing to it."""

import json

import pytest

from router.paths import CONFIGS_DIR, ROLES_DIR, SEEDS_DIR
from router.redaction.redactor import REDACTED, Redactor
from tests.docs_support import DOC_FILES

PROSE = "secret in prose"
# each shape, and the part of it that must go
TOLD = {
    "my password is": ("my password is correct horse battery staple", "horse battery staple"),
    "then the next sentence": (
        "My passphrase is quiet river stone bridge. The merge still fails.",
        "stone bridge",
    ),
    "the password for X is": (
        "the password for the deploy account is plum orchard velvet lantern",
        "velvet lantern",
    ),
    "a comma inside": ("our wifi password is apples, pears and plums; bring snacks", "pears and plums"),
    "was, in a longer clause": ("the old password was tr0ub4dor and 3 more words", "tr0ub4dor"),
    "now, quoted": ('the vault passphrase is now "open sesame please"', "sesame please"),
    "possessive, a participle first": ("my password is tired donkey dance", "donkey dance"),
    "colon": ("my passphrase: correct horse battery staple, keep it safe", "battery staple"),
    "PIN": ("my PIN is 4821 and the card expires soon", "4821"),
    "set ... to": ("I set my PIN code to 903112 yesterday", "903112"),
    "changed ... to": ("I changed the admin password to correct horse battery staple.", "horse battery"),
    "secret": ("My secret is open sesame!", "open sesame"),
    "secret key for X": ("the secret key for staging is xk cd 927 ab", "xk cd 927"),
}
# sentences about secrets, not secrets
ORDINARY = [
    "The password is hashed with bcrypt before it is stored.",
    "If the password is wrong, the server answers 401.",
    "the secret key is read from the environment at start-up",
    "Your PIN is required to unlock the phone.",
    "The password for the admin account is set by the installer.",
    "the secret is that nothing is cached",
    "A passphrase is a password made of words.",
    "my pin is loose and the board wobbles",
    "The passcode was changed yesterday; sessions ended.",
    "set the password to expire after 90 days",
    "the password is never logged, and the secret is never sent",
    "If the password was rejected, check the secret's region.",
    "A secret is promoted to a primary secret in the replica region.",
    "the secret was left out",
    "*my password / passphrase / PIN / secret is …*, *the password for X is …*",
    "Tell it: my password is <your password>.",
    # the idiom, and a secret's length: issue 35 item 10
    "The secret to good code is small functions.",
    "The secret of a fast merge was a small diff.",
    "The PIN is 4 digits long",
    "the password is 12 characters or more",
    "My PIN is six digits.",
]


@pytest.mark.parametrize("shape", sorted(TOLD))
def test_a_secret_told_in_prose_loses_the_rest_of_its_clause(shape):
    text, secret = TOLD[shape]
    redactor = Redactor(environ={})
    out = redactor.text(text)
    assert secret not in out and REDACTED in out, out
    assert redactor.removed == {PROSE: 1}


def test_the_label_and_the_next_sentence_stay():
    redactor = Redactor(environ={})
    out = redactor.text(TOLD["then the next sentence"][0])
    assert out == f"My passphrase is {REDACTED}. The merge still fails."


@pytest.mark.parametrize("sentence", ORDINARY)
def test_prose_about_secrets_is_left_alone(sentence):
    redactor = Redactor(environ={})
    assert redactor.text(sentence) == sentence
    assert redactor.removed == {}


def _seed_prose() -> str:
    """Every seed tool's description and its arguments' descriptions."""
    parts = []
    for path in sorted(SEEDS_DIR.glob("*.json")):
        for tool in json.loads(path.read_text(encoding="utf-8"))["tools"]:
            parts.append(tool.get("description") or "")
            for prop in (tool.get("inputSchema") or {}).get("properties", {}).values():
                parts.append(str(prop.get("description") or ""))
    return "\n".join(parts)


CORPUS = {
    "README.md and docs/": lambda: "\n".join(p.read_text(encoding="utf-8") for p in DOC_FILES),
    "roles": lambda: "\n".join(p.read_text(encoding="utf-8") for p in sorted(ROLES_DIR.rglob("*.md"))),
    "breakglass.toml": lambda: (CONFIGS_DIR / "breakglass.toml").read_text(encoding="utf-8"),
    "seed descriptions": _seed_prose,
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_ordinary_prose_loses_nothing_to_the_prose_layer(name):
    text = CORPUS[name]()
    assert len(text) > 2_000
    redactor = Redactor(environ={})
    redactor.text(text)
    assert PROSE not in redactor.removed
