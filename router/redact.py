"""Remove secrets from text before it leaves the machine (or reaches the database or a log).

Layers, because no single list catches everything, each erring on the side of removing:
- the literal values of this process's own secret-named environment variables;
- private-key blocks (PEM, OpenSSH, PGP `PRIVATE KEY BLOCK`), however many lines;
- detect-secrets' provider plugins (AWS, GitHub, GitLab, Slack tokens and webhooks, Stripe,
  OpenAI, npm, PyPI, Twilio, JWTs, URL passwords, ...), plus the few shapes it lacks
  (OpenRouter, Anthropic and Google keys, bearer tokens);
- credentials in headers and commands: `Authorization: <scheme> <value>`, cookies, `curl -u`;
- `name = value` / `name: value` where the name says secret: a quoted value whole (spaces and
  line breaks included), an unquoted one to the end of its line when the line is nothing
  but the assignment; `.netrc` lines lose their password;
- `password <word>` in prose when the word looks like one, base64 that decodes to
  `user:password` (a Basic credential pasted bare), and long high-entropy tokens nobody
  labelled (detect-secrets' Shannon entropy and limit).
A dotenv file (`.env`, `.env.*`, `.envrc`) loses every value, multi-line ones included.
"""

import base64
import binascii
import io
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from router.extras import require

REDACTED = "[REDACTED]"

# detect-secrets plugins that find no secret (public IPs), only flag a line (the private-key
# header: blocks are removed whole below) or need a file's context (keywords: ours follow)
NOT_SECRET_SHAPES = {"IPPublicDetector", "PrivateKeyDetector", "KeywordDetector"}

PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY[A-Z ]*)-----.*?(?:-----END \1-----|\Z)", re.S
)
# shapes detect-secrets does not know
TOKEN_PATTERNS: tuple[tuple[str, re.Pattern], ...] = (
    ("openrouter key", re.compile(r"\bsk-or-(?:v\d+-)?[A-Za-z0-9]{20,}")),
    ("anthropic key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai-style key", re.compile(r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{20,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("bearer token", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/\-]{16,}=*")),
)
# `Authorization: Basic <base64>`, `Proxy-Authorization: Bearer x`, in a header or a -H argument
AUTH_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z][A-Za-z0-9_-]*[ \t]+)?)([^\s\"',]+)"
)
COOKIE_HEADER = re.compile(r"(?im)(\b(?:set-)?cookie\s*:\s*)(.+)$")
CURL_USER = re.compile(r"(?:(?<=\s)|^)((?:-u|--user)[ \t]+[\"']?[^\s:\"']+:)([^\s\"']+)")
NETRC_PASSWORD = re.compile(r"(?im)^(?=.*\b(?:machine|default|login)\b)(.*?\bpassword[ \t]+)(\S+)")

NAME = r"[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)[\"']?"
ASSIGN = r"\s*(?<![=!<>])(?::=|=>|=|:)(?![=:])\s*"
# a quoted value, whole: spaces and line breaks included (a multi-line PEM in quotes)
QUOTED = re.compile(
    NAME + ASSIGN + r"(?P<quote>[\"'`])(?P<value>(?:\\.|(?!(?P=quote)).){1,8192}?)(?P=quote)", re.S
)
# a line that is only `name = value`: the value is the rest of the line, spaces included
LINE = re.compile(
    r"(?m)^[ \t]*(?:export[ \t]+)?" + NAME + r"[ \t]*(?:=|:)[ \t]*(?P<value>[^\s\"'`].*?)[ \t]*$"
)
# anywhere else, one unquoted word
INLINE = re.compile(NAME + ASSIGN + r"(?P<value>[^\s\"'`,;()\[\]{}]{4,})")
SECRET_WORDS = re.compile(
    r"(?:^|_)(?:pass|passwd|password|passphrase|pwd|secret|secrets|token|credential|credentials|auth"
    r"|apikey|privkey|signature|sig)(?:_|$)"
    r"|(?:api|access|secret|private|priv|signing|client|auth|encryption|master|session|license"
    r"|account|service|db|database|ssh|gpg|pgp|deploy|webhook)_?key(?:s)?(?:_|$)"
)
# values that say nothing (a count, a flag, a placeholder, a name of a variable)
HARMLESS_VALUE = re.compile(
    r"(?i)^(?:-?\d+(?:\.\d+)?|true|false|yes|no|on|off|null|none|nil|\[REDACTED\]|\*+)$"
)
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# `password hunter2` in prose or a pasted shell line: the word after it, when it looks like one
PROSE_PASSWORD = re.compile(r"(?i)(\b(?:password|passwd|passphrase|pwd)[ \t]+)(?=\S*[0-9!@#$%^&*])(\S{6,})")
# base64 of `user:password`, the payload of HTTP Basic auth, wherever it is pasted
BASE64_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{12,}={0,2}(?![A-Za-z0-9+/=])")
USER_PASSWORD = re.compile(r"^[\x21-\x39\x3b-\x7e]{1,64}:[\x20-\x7e]{3,}$")
HIGH_ENTROPY_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{32,}(?![A-Za-z0-9+/=_\-])")
SECRET_ENV_NAME = re.compile(r"(?i)(key|secret|token|passw|credential|auth)")
# values shorter than this are too common to replace literally
MIN_ENV_SECRET_LENGTH = 8


# detect-secrets is imported on first use: the router's own start-up (serve) never needs it
@lru_cache(maxsize=1)
def _detectors() -> tuple[Any, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    plugins: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    return tuple(
        plugin()
        for plugin in plugins
        if issubclass(plugin, RegexBasedDetector) and plugin.__name__ not in NOT_SECRET_SHAPES
    )


@lru_cache(maxsize=1)
def _entropy() -> Any:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    return Base64HighEntropyString()


def secret_name(name: str) -> bool:
    """Whether an assignment's name says its value is secret (snake, kebab, dotted or camel case)."""
    words = CAMEL.sub("_", name).lower().replace("-", "_").replace(".", "_")
    return SECRET_WORDS.search(words) is not None


def basic_credentials(token: str) -> bool:
    """Whether a base64 token decodes to `user:password` (what `Authorization: Basic` carries)."""
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return USER_PASSWORD.match(decoded) is not None


def high_entropy(token: str) -> bool:
    """A long token of mixed letters and digits as random as a key (detect-secrets' limit)."""
    if not (re.search(r"[a-z]", token) and re.search(r"[A-Z]", token) and re.search(r"[0-9]", token)):
        return False
    detector = _entropy()
    return detector.calculate_shannon_entropy(token) > detector.entropy_limit


@dataclass
class Redactor:
    """Counts what it removed, by kind, so the caller can report it (never the values)."""

    removed: dict[str, int]

    def __init__(self, environ: dict[str, str] | None = None):
        self.removed = {}
        env = os.environ if environ is None else environ
        # _values replaces the longest first (a value inside another is not cut short)
        self._env_values = {
            v for k, v in env.items() if SECRET_ENV_NAME.search(k) and len(v) >= MIN_ENV_SECRET_LENGTH
        }

    def _count(self, kind: str, n: int) -> None:
        if n:
            self.removed[kind] = self.removed.get(kind, 0) + n

    def _values(self, text: str, values: set[str], kind: str) -> str:
        for value in sorted(values, key=len, reverse=True):
            if value and value != REDACTED and value in text:
                self._count(kind, text.count(value))
                text = text.replace(value, REDACTED)
        return text

    def _labelled(self, pattern: re.Pattern, text: str, kind: str) -> str:
        """Each match's value (group 2) after its label (group 1) removed; a value an earlier
        pattern already removed is left alone and not counted twice."""

        def replace(match: re.Match) -> str:
            if match.group(2) == REDACTED:
                return match.group(0)
            self._count(kind, 1)
            return match.group(1) + REDACTED

        return pattern.sub(replace, text)

    def _assignments(self, pattern: re.Pattern, text: str) -> str:
        def replace(match: re.Match) -> str:
            value = match.group("value")
            if not secret_name(match.group("name")) or HARMLESS_VALUE.match(value.strip()):
                return match.group(0)
            self._count("secret assignment", 1)
            start, end = match.span("value")
            whole = match.group(0)
            offset = match.start()
            return whole[: start - offset] + REDACTED + whole[end - offset :]

        return pattern.sub(replace, text)

    def text(self, text: str) -> str:
        text = self._values(text, self._env_values, "environment secret")
        text, n = PRIVATE_KEY_BLOCK.subn(REDACTED, text)
        self._count("private key", n)
        for detector in _detectors():
            # the whole match of each of its patterns (its own reporting keeps only a group)
            for pattern in detector.denylist:
                text, n = pattern.subn(REDACTED, text)
                self._count(detector.secret_type.lower(), n)
        for kind, pattern in TOKEN_PATTERNS:
            text, n = pattern.subn(REDACTED, text)
            self._count(kind, n)
        for kind, pattern in (
            ("authorization header", AUTH_HEADER),
            ("cookie", COOKIE_HEADER),
            ("curl credentials", CURL_USER),
            (".netrc password", NETRC_PASSWORD),
            ("password in prose", PROSE_PASSWORD),
        ):
            text = self._labelled(pattern, text, kind)
        for pattern in (QUOTED, LINE, INLINE):
            text = self._assignments(pattern, text)
        basic = {m.group(0) for m in BASE64_CANDIDATE.finditer(text) if basic_credentials(m.group(0))}
        text = self._values(text, basic, "basic credentials")
        unlabelled = {m.group(0) for m in HIGH_ENTROPY_CANDIDATE.finditer(text) if high_entropy(m.group(0))}
        return self._values(text, unlabelled, "high-entropy string")

    def dotenv(self, text: str) -> str:
        """A dotenv file: keep the names (they say what is configured), drop every value,
        however it is quoted or however many lines it spans."""
        parser = require("dotenv.parser", extra="breakglass", feature="reading dotenv files")
        out = []
        for binding in parser.parse_stream(io.StringIO(text)):
            if binding.key is None:
                out.append(binding.original.string)
                continue
            prefix = "export " if binding.original.string.lstrip().startswith("export ") else ""
            ending = "\n" if binding.original.string.endswith("\n") else ""
            out.append(f"{prefix}{binding.key}={REDACTED}{ending}")
            self._count(".env value", 1)
        return self.text("".join(out))

    def file(self, name: str, text: str) -> str:
        return self.dotenv(text) if is_dotenv(name) else self.text(text)


def is_dotenv(name: str) -> bool:
    base = os.path.basename(name)
    return base in (".env", ".envrc") or base.startswith(".env.") or base.endswith(".env")
