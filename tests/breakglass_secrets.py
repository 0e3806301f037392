"""A corpus of planted secrets, in the shapes that used to leak, and a workspace holding them
in the files people really keep them in. Used by the redaction unit tests and by the
end-to-end test that checks no request, row or log carries any of them."""

from pathlib import Path

PGP_BODY = "lQOYBGXyZ2sBCADPgpPrivateBodyLine01xYz"
PEM_BODY = "MIIEowIBAAKCAQEAenvMultiLinePemBody77"
BASIC_VALUE = "ZGVwbG95OmJhc2ljLWF1dGgtc2VjcmV0"  # base64 of deploy:basic-auth-secret
SPACED_PASSWORD = "correct horse battery staple"
NETRC_PASSWORD = "N3trcPassw0rdValue"
ENVRC_PASSWORD = "envrc-pass-value-9"
SLACK_WEBHOOK = "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopQRSTUVWX"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
ENV_TOKEN = "env-token-value-123456"
GITIGNORED_SECRET = "ignored-file-secret-42"
GIT_CRYPT_SECRET = "plaintext-behind-git-crypt-7"
SOPS_SECRET = "ENC[AES256_GCM,data:c29wc3NlY3JldA==,iv:AAAA,tag:BBBB,type:str]"
# told in prose, in a note picked by relevance and in one the caller names
PROSE_PASSPHRASE = "quiet river stone bridge"
PROSE_DEPLOY_PASSWORD = "plum orchard velvet lantern"

# secrets in a URL's query (issue 35 item 4): lower case and digits, so no other layer (the
# entropy check, a provider shape) would catch them if the URL layer did not
URL_SECRETS = {
    "api_key in a URL": ("https://api.example.com/v1/merge?api_key={}&x=1", "qz81mergekey4471"),
    "access_token in a URL": ("https://auth.example.com/cb?access_token={}&state=merge", "at9mergeaccess22"),
    "token in a wss URL": ("wss://events.example.com/?token={}", "ws7mergetoken58"),
    "key in a URL": ("https://maps.example.com/api?q=gap&key={}", "mk3mergemapkey90"),
    "sig in a URL": ("https://blob.example.com/c/merge.log?sv=2024&sig={}", "sg4mergesignat11"),
    "password in a URL": ("http://ci.example.com/login?user=deploy&password={}", "pw6mergepass303"),
}
# a URL with no secret parameter: it stays readable
READABLE_URL = "https://docs.example.com/merge/gap?section=2&lang=en"

# every value that must never leave; the parts of the spaced password count one by one
CORPUS = {
    "pgp private key body": PGP_BODY,
    "multi-line pem in .env": PEM_BODY,
    "basic auth": BASIC_VALUE,
    "password with spaces": SPACED_PASSWORD,
    "password, last words": "battery staple",
    ".netrc password": NETRC_PASSWORD,
    ".envrc export": ENVRC_PASSWORD,
    "slack webhook": SLACK_WEBHOOK,
    "slack webhook path": "B0ABCDEF2/abcdefghijklmnopQRSTUVWX",
    "unlabelled aws secret": AWS_SECRET,
    "environment secret": ENV_TOKEN,
    "git-ignored file": GITIGNORED_SECRET,
    "git-crypt file": GIT_CRYPT_SECRET,
    "sops file": "c29wc3NlY3JldA==",
    "passphrase in prose": PROSE_PASSPHRASE,
    "passphrase in prose, last words": "stone bridge",
    "password for X in prose": PROSE_DEPLOY_PASSWORD,
    "password for X in prose, last words": "velvet lantern",
    **{name: value for name, (_, value) in URL_SECRETS.items()},
}
ENVIRONMENT = {"MERGE_SERVICE_TOKEN": ENV_TOKEN}


def plant(ws: Path) -> None:
    """A workspace about a failing merge, with credentials where people keep them."""
    files = {
        ".netrc": f"machine api.example.com login deploy password {NETRC_PASSWORD}\n",
        ".envrc": f"export DB_PASS={ENVRC_PASSWORD}\nuse nix\n",
        ".env": (
            'MERGE_MODE=fast\nSIGNING_KEY="-----BEGIN RSA PRIVATE KEY-----\n'
            f'{PEM_BODY}\n-----END RSA PRIVATE KEY-----"\n'
        ),
        "deploy/signing.asc": (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
            f"{PGP_BODY}\n=merge\n-----END PGP PRIVATE KEY BLOCK-----\n"
        ),
        "scripts/call_merge_api.sh": (
            "#!/bin/sh\n# calls the merge endpoint the failing merge test depends on\n"
            f'curl -H "Authorization: Basic {BASIC_VALUE}" https://api.example.com/merge\n'
        ),
        "config/merge_db.yaml": f'merge_timeout: 30\ndb_user: merge\ndb_password: "{SPACED_PASSWORD}"\n',
        "config/merge_db_plain.yaml": f"merge_timeout: 30\npassword: {SPACED_PASSWORD}\n",
        "notes/merge.md": (
            "# merge notes\nThe merge fails after the gap check.\n"
            f"Alerts go to {SLACK_WEBHOOK}\n"
            f"Backup bucket creds (rotate!): {AWS_SECRET}\n"
            f"service token for merge: {ENV_TOKEN}\n"
            f"To rerun the merge by hand: my passphrase is {PROSE_PASSPHRASE}, then merge again.\n"
            f"The merge's endpoints (see {READABLE_URL}):\n"
            + "".join(f"- {url.format(value)}\n" for url, value in URL_SECRETS.values())
        ),
        "notes/merge_login.md": (
            "# logging in to the merge box\n"
            f"The password for the deploy account is {PROSE_DEPLOY_PASSWORD}. The merge runs as deploy.\n"
        ),
        "src/merge.py": "def merge(gap):\n    # the merge loses the gap\n    return gap\n",
        ".gitignore": "secrets/\n",
        "secrets/merge_tokens.txt": f"merge token {GITIGNORED_SECRET}\n",
        ".gitattributes": "vault/** filter=git-crypt diff=git-crypt\n",
        "vault/merge.txt": f"merge secret {GIT_CRYPT_SECRET}\n",
        "ops/merge.enc.yaml": (
            f"merge_key: {SOPS_SECRET}\nsops:\n    mac: ENC[AES256_GCM,data:abc,type:str]\n    version: 3.8.1\n"
        ),
    }
    for name, text in files.items():
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
