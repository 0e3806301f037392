"""Secret removal and file picking on their own: every planted secret shape is removed from
text and files, ordinary text survives, and credential, encrypted and git-ignored files are
never picked (credential and encrypted ones not even when named)."""

import pytest

from router.breakglass.context import assemble
from router.breakglass.settings import load_settings
from router.redaction.redactor import REDACTED, Redactor
from tests.breakglass_secrets import (
    BASIC_VALUE,
    CORPUS,
    ENVIRONMENT,
    GITIGNORED_SECRET,
    PEM_BODY,
    SPACED_PASSWORD,
    plant,
)

SHAPES = {
    "pgp block": "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: x\n\nlQOYBGXyZ2sBsecretbody\n=ab12\n"
    "-----END PGP PRIVATE KEY BLOCK-----",
    "basic header": f"Authorization: Basic {BASIC_VALUE}",
    "basic in curl": f"curl -H 'Authorization: Basic {BASIC_VALUE}' https://x",
    "spaced yaml, quoted": f'db_password: "{SPACED_PASSWORD}"',
    "spaced yaml, plain": f"password: {SPACED_PASSWORD}",
    "spaced json": f'{{"dbPassword": "{SPACED_PASSWORD}"}}',
    "export": "export DB_PASS=hunter2hunter2",
    "netrc line": "machine api.example.com login me password n3tRcS3cret",
    "slack webhook": "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopQRSTUVWX",
    "aws secret unlabelled": "the key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY in the notes",
    "curl -u": "curl -u admin:s3cr3tpw https://x",
    "cookie": "Cookie: session=abcdef123456; csrftoken=zyx987",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "github": "ghp_" + "x9Y8" * 9,
    "url password": "postgres://admin:s3cretpass@db:5432/x",
    "prose password": "logged in with password Hunter2024! and it failed",
    "bare basic payload": f"the 401 came with {BASIC_VALUE} attached",
}
SECRET_PART = {
    "pgp block": "lQOYBGXyZ2sBsecretbody",
    "basic header": BASIC_VALUE,
    "basic in curl": BASIC_VALUE,
    "spaced yaml, quoted": "battery staple",
    "spaced yaml, plain": "battery staple",
    "spaced json": "horse battery",
    "export": "hunter2hunter2",
    "netrc line": "n3tRcS3cret",
    "slack webhook": "abcdefghijklmnopQRSTUVWX",
    "aws secret unlabelled": "bPxRfiCYEXAMPLEKEY",
    "curl -u": "s3cr3tpw",
    "cookie": "abcdef123456",
    "stripe": "4eC39HqLyjWDarjtT1zdp7dc",
    "github": "x9Y8x9Y8",
    "url password": "s3cretpass",
    "prose password": "Hunter2024!",
    "bare basic payload": BASIC_VALUE,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_planted_shape_is_removed(shape):
    redactor = Redactor(environ={})
    out = redactor.text(SHAPES[shape])
    assert SECRET_PART[shape] not in out and REDACTED in out
    assert sum(redactor.removed.values()) >= 1


def test_a_secret_is_counted_once_whichever_patterns_see_it():
    # the provider pattern removes the key; the Authorization header pattern then sees only
    # the placeholder, which it leaves alone and does not count again
    redactor = Redactor({})
    text = redactor.text("Authorization: Bearer sk-or-v1-" + "a1" * 32)
    assert text == f"Authorization: Bearer {REDACTED}"
    assert sum(redactor.removed.values()) == 1


def test_ordinary_text_and_code_survive():
    text = (
        "max_tokens = 4000\noutput_cap_tokens: 4000\ncommit 0634bca1f2e3d4c5b6a79880716253443526170a\n"
        "def verify(token: str) -> bool:\n    return token == expected\n"
        "theorem cleanMerge_preservesGap (xs : List Nat) : True := by\n  sorry\n"
        "path router/breakglass/ledger.py and auth_method = 'oauth2'\n"
    )
    redactor = Redactor(environ={})
    assert redactor.text(text) == text.replace("oauth2", REDACTED)
    assert redactor.removed == {"secret assignment": 1}


def test_dotenv_multi_line_values_and_exports_lose_every_value():
    redactor = Redactor(environ={})
    text = (
        'MODE=fast\nSIGNING_KEY="-----BEGIN RSA PRIVATE KEY-----\n'
        f'{PEM_BODY}\n-----END RSA PRIVATE KEY-----"\n# a comment stays\nexport DB_PASS=x y z\n'
    )
    out = redactor.file(".env.production", text)
    assert out == f"MODE={REDACTED}\nSIGNING_KEY={REDACTED}\n# a comment stays\nexport DB_PASS={REDACTED}\n"
    assert redactor.file(".envrc", "export DB_PASS=hunter2\n") == f"export DB_PASS={REDACTED}\n"


def test_credential_encrypted_and_ignored_files_are_not_picked(conn, tmp_path):
    plant(tmp_path)
    settings = load_settings()
    context = settings.context.model_copy(update={"max_workspace_files": 30})
    named = [".netrc", "deploy/signing.asc", ".env", "secrets/merge_tokens.txt", "vault/merge.txt"]
    ctx = assemble(
        conn,
        context,
        tmp_path,
        "the merge fails after the gap check",
        "code_bug",
        named,
        Redactor(ENVIRONMENT),
    )
    sent = {f.path: f.text for f in ctx.files}
    # picked by relevance: the ordinary files about the merge, redacted
    assert {"src/merge.py", "notes/merge.md", "scripts/call_merge_api.sh", "config/merge_db.yaml"} <= set(
        sent
    )
    # never picked: credential, dotenv, encrypted and git-ignored files
    assert not {".envrc", "ops/merge.enc.yaml"} & set(sent)
    # named: a dotenv file shows its names only, a git-ignored one is sent redacted, a
    # credential or encrypted file is left out with the reason
    assert sent[".env"].startswith(f"MERGE_MODE={REDACTED}\nSIGNING_KEY={REDACTED}")
    assert GITIGNORED_SECRET in sent["secrets/merge_tokens.txt"]  # named, and not a secret shape
    notes = "\n".join(ctx.notes)
    assert ".netrc left out: a credential file is never sent" in notes
    assert "deploy/signing.asc left out: a credential file is never sent" in notes
    assert "vault/merge.txt left out: git-crypt encrypted (.gitattributes)" in notes
    text = "\n".join(sent.values())
    leaked = [name for name, value in CORPUS.items() if value in text and name != "git-ignored file"]
    assert leaked == []


def test_git_ignored_files_are_not_picked_unless_named(conn, tmp_path):
    plant(tmp_path)
    context = load_settings().context.model_copy(update={"max_workspace_files": 30})
    ctx = assemble(conn, context, tmp_path, "merge tokens fail", "code_bug", [], Redactor(environ={}))
    assert "secrets/merge_tokens.txt" not in [f.path for f in ctx.files]
    (tmp_path / "src" / ".gitignore").write_text("merge.py\n")  # a nested .gitignore counts too
    ctx = assemble(conn, context, tmp_path, "merge tokens fail", "code_bug", [], Redactor(environ={}))
    assert "src/merge.py" not in [f.path for f in ctx.files]
