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
- a secret told in prose (`my password is correct horse battery staple`, `the password for
  the lab is ...`, `I set my PIN to 4821`): the rest of the clause, unless its first word
  shows it talks about the secret (`the password is never stored`);
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
# `my password is correct horse battery staple`, `the wifi password for the lab is x y z`, `I set
# my PIN to 4821`: a secret told in prose, its value running to the end of the clause (a
# sentence's end, a line break, a table cell's end); a comma does not end it, since a
# passphrase may hold one and removing the clause's tail costs little
PROSE_NOUN = (
    r"(?:pass(?:word|phrase|code)|passwd|pin(?:[ \t]+(?:code|number))?|secret(?:[ \t]+(?:key|phrase|word))?)"
)
POSSESSIVE = r"(?:my|our|your|his|her|their)"
# `I set my PIN to`, `changed the wifi password to`
PROSE_SET = (
    r"(?:set|changed?|reset|updated?)[ \t]+(?:"
    + POSSESSIVE
    + r"|the)[ \t]+(?:[\w-]+[ \t]+)?"
    + PROSE_NOUN
    + r"[ \t]+to"
)
# `my password is`, `the password for the staging db was`: with its possessive, when it has one
PROSE_TOLD = (
    r"(?:"
    + POSSESSIVE
    + r"[ \t]+(?:[\w-]+[ \t]+)?)?"
    + PROSE_NOUN
    + r"(?:[ \t]+(?:for|to|of|on)(?:[ \t]+[^\s,.;:!?|]+){1,4}?)?"
    + r"[ \t]+(?:is|was|will[ \t]+be|has[ \t]+been|remains)"
    + r"(?:[ \t]+(?:now|still|currently|actually|simply|just))?[ \t]*:?"
)
# `my passphrase: ...`; a bare `Password: ` is a prompt in code, left to the assignment patterns
PROSE_MINE = POSSESSIVE + r"[ \t]+(?:[\w-]+[ \t]+)?" + PROSE_NOUN + r"[ \t]*:"
PROSE_SECRET = re.compile(
    r"(?i)(\b(?:" + "|".join((PROSE_SET, PROSE_TOLD, PROSE_MINE)) + r")[ \t]+)"
    r"([^\n|]+?)(?=[ \t]*(?:[.;!?](?:\s|$)|[\n|]|$))"
)
# `the password for X is …`, `my PIN is <pin>`: a placeholder in documentation
PLACEHOLDERS = ("…", "...", "<")
MINE = re.compile(r"(?i)\b" + POSSESSIVE + r"\b")
# a value has a letter or digit: `password is ''` in code gives nothing away
ALPHANUMERIC = re.compile(r"[A-Za-z0-9]")
PIN = re.compile(r"(?i)\bpin\b")
# the first word of a clause that talks about a secret instead of telling it: `the password
# is never stored`, `the secret is that ...`, `the PIN is required`
PROSE_NOT_A_VALUE = frozenset(
    """
    a an the any all each every some no not never none nothing its this that these those it they
    which what who whose where when why how whether if because since so as than then there here
    now also only always still usually often sometimes typically probably just even either
    is are was were be been being has have had will would should must can could may might do does
    in on at by from with without within into onto out over under after before between during via
    per to for of about like up off
    stored kept saved hashed encrypted redacted removed required optional needed mandatory set
    given read taken written sent shown printed logged checked passed used stripped masked hidden
    replaced generated derived computed rotated reset changed expired revoked validated verified
    compared cached known unknown available missing wrong incorrect invalid empty blank too very
    same different another other longer shorter configured defined specified provided supplied
    entered typed prompted asked requested displayed echoed visible safe secure insecure weak
    strong long short ok okay fine good bad mine yours his hers ours theirs something someone
    somewhere anything everything out case-sensitive expire change rotate match include contain
    use allow
    """.split()
)
# without a possessive (`the password was rejected`, `a secret is due`) a clause is far more
# often documentation than a disclosure: participles and adverbs open it too
DESCRIBING = frozenset("made found lost left sent shown read given taken written kept due part".split())
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


def told_in_prose(label: str, value: str) -> bool:
    """Whether the clause after `my password is` gives the secret rather than talks about it
    (`... is never stored`, `the password was rejected`); quoted, it always gives it; a PIN
    has a digit."""
    if value.startswith(("'", '"', "`")):
        return True
    if value.startswith(PLACEHOLDERS):
        return False
    match = re.match(r"[\w'-]+", value)
    first = "" if match is None else match.group(0).lower()
    if first in PROSE_NOT_A_VALUE:
        return False
    if not MINE.search(label) and (first in DESCRIBING or first.endswith(("ed", "ly"))):
        return False
    return not PIN.search(label) or re.search(r"\d", value) is not None


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

    def _told(self, text: str) -> str:
        """`my password is correct horse battery staple`: the clause after the label goes."""

        def replace(match: re.Match) -> str:
            label, value = match.group(1), match.group(2)
            if not ALPHANUMERIC.search(value.replace(REDACTED, "")) or not told_in_prose(label, value):
                return match.group(0)
            self._count("secret in prose", 1)
            return label + REDACTED

        return PROSE_SECRET.sub(replace, text)

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
        text = self._told(text)
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
