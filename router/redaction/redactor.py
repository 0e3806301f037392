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
import math
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from router.extras import require
from router.redaction.regex_literals import Literals, required_literals
from router.redaction.secret_shapes import remove_shapes

REDACTED = "[REDACTED]"

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
# A URL (any scheme: https, wss, postgres, ...) and its query or fragment parameters
# (`?api_key=…&x=1`, `#access_token=…`): the assignment patterns see a whole URL as one value
# after `https:`, so they never look inside it. The scheme is read from the start of a run.
URL = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*+://[^\s\"'<>`]++")
URL_PARAMETER = re.compile(r"(?<=[?&#;])(?P<name>[^=&#;?/]++)=(?P<value>[^&#;]*+)")
# query parameter names that hold a secret besides the secret-named ones (secret_name)
URL_SECRET_PARAMETERS = frozenset({"key", "sig", "apikey", "api-key", "pass", "pw"})
# `Authorization: Basic <base64>`, `Proxy-Authorization: Bearer x`, in a header or a -H argument
AUTH_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z][A-Za-z0-9_-]*[ \t]+)?)([^\s\"',]+)"
)
COOKIE_HEADER = re.compile(r"(?im)(\b(?:set-)?cookie\s*:\s*)(.+)$")
# (the `-` first, its space or the text's start checked behind it: the search skips to each `-`)
CURL_USER = re.compile(r"(-(?<![^\s]-)(?:u|-user)[ \t]+[\"']?[^\s:\"']+:)([^\s\"']+)")
NETRC_PASSWORD = re.compile(r"(?im)^(?=.*\b(?:machine|default|login)\b)(.*?\bpassword[ \t]+)(\S+)")

# A name is a whole run of name characters, taken from the run's start only: a pattern that
# may start anywhere in the run rescans it from every start (quadratic in its length).
NAME = r"[\"']?(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z0-9_.\-]++)[\"']?"
ASSIGN = r"\s*+(?<![=!<>])(?::=|=>|=|:)(?![=:])\s*+"
# a quoted value, whole: spaces and line breaks included (a multi-line PEM in quotes); one
# whose closing quote never comes (a line cut short) runs to the end of the text
QUOTED = re.compile(
    NAME + ASSIGN + r"(?P<quote>[\"'`])(?P<value>(?:\\.|(?!(?P=quote)).){1,8192}?)(?:(?P=quote)|\Z)", re.S
)
# a line that is only `name = value`: the value is the rest of the line, spaces included
# (word by word, each run of spaces looked at once, its trailing spaces left out)
LINE = re.compile(
    r"(?m)^[ \t]*+(?:export[ \t]+)?"
    + NAME
    + r"[ \t]*+(?:=|:)[ \t]*+(?P<value>[^\s\"'`](?:[ \t]*+[^ \t\n])*+)[ \t]*$"
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
PROSE_PASSWORD = re.compile(r"(?i)(\b(?:password|passwd|passphrase|pwd)[ \t]++)(?=\S*[0-9!@#$%^&*])(\S{6,})")
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
    + r"|the)[ \t]++(?:[\w-]++[ \t]++)?"
    + PROSE_NOUN
    + r"[ \t]++to"
)
# `my password is`, `the password for the staging db was`: with its possessive, when it has one
PROSE_TOLD = (
    r"(?:"
    + POSSESSIVE
    + r"[ \t]++(?:[\w-]++[ \t]++)?)?"
    + PROSE_NOUN
    + r"(?:[ \t]++(?:for|to|of|on)(?:[ \t]++[^\s,.;:!?|]++){1,4}?)?"
    + r"[ \t]++(?:is|was|will[ \t]+be|has[ \t]+been|remains)"
    + r"(?:[ \t]++(?:now|still|currently|actually|simply|just))?(?:[ \t]*+:)?"
)
# `my passphrase: ...`; a bare `Password: ` is a prompt in code, left to the assignment patterns
PROSE_MINE = POSSESSIVE + r"[ \t]++(?:[\w-]++[ \t]++)?" + PROSE_NOUN + r"[ \t]*+:"
# the value word by word (a run of spaces, then one other character), so that each run of
# spaces is looked at once, not again from each of its characters
# (The first letters of every label, as a case-sensitive class ahead of the case-insensitive
# rest: the search then skips to them instead of trying the whole alternation at every
# character, a third of the time. ſ is an s to a case-insensitive pattern.)
PROSE_FIRST_LETTERS = "(?=[sScCrRuUmMoOyYhHtTpP\u017f])"
PROSE_SECRET = re.compile(
    PROSE_FIRST_LETTERS
    + r"(?i:(\b(?:"
    + "|".join((PROSE_SET, PROSE_TOLD, PROSE_MINE))
    + r")[ \t]++)"
    + r"((?:[ \t]*+[^ \t\n|])+?)(?=[ \t]*+(?:[.;!?](?:\s|$)|[\n|]|$)))"
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
# `the secret to good code is ...`, `the secret of success was ...`: the idiom, not a secret
SECRET_OF_SOMETHING = re.compile(r"(?i)\bsecret[ \t]+(?:to|of)\b")
# `the PIN is 4 digits long`, `the password is 12 characters`: its length, not its value
LENGTH = re.compile(
    r"(?i)(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixteen)"
    r"(?:[ \t]*+(?:-|to|or)[ \t]*+\d+)?[ \t]++"
    r"(?:digits?|characters?|chars|letters?|numbers?|words?|bytes?|symbols?)\b"
)
DESCRIBING = frozenset("made found lost left sent shown read given taken written kept due part".split())
# base64 of `user:password`, the payload of HTTP Basic auth, wherever it is pasted
BASE64_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{12,}={0,2}(?![A-Za-z0-9+/=])")
USER_PASSWORD = re.compile(r"^[\x21-\x39\x3b-\x7e]{1,64}:[\x20-\x7e]{3,}$")
LOWER, UPPER, DIGIT = re.compile(r"[a-z]"), re.compile(r"[A-Z]"), re.compile(r"[0-9]")
HIGH_ENTROPY_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{32,}(?![A-Za-z0-9+/=_\-])")
SECRET_ENV_NAME = re.compile(r"(?i)(key|secret|token|passw|credential|auth)")
# values shorter than this are too common to replace literally
MIN_ENV_SECRET_LENGTH = 8
# What redacted() keeps of a message: an error a model reads needs no more, and redacting it
# stays within a few milliseconds (the router's event loop runs it).
MAX_MESSAGE_CHARS = 4000
# Unlabelled secrets also removed where they appear glued to other text: each costs a pass
# over the text, so only the first few (a text of thousands of random tokens stays linear).
MAX_ECHOED_TOKENS = 16


@lru_cache(maxsize=256)
def _literals(pattern: re.Pattern) -> Literals:
    return required_literals(pattern)


@lru_cache(maxsize=1)
def _entropy() -> Any:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    return Base64HighEntropyString()


def secret_name(name: str) -> bool:
    """Whether an assignment's name says its value is secret (snake, kebab, dotted or camel case)."""
    words = CAMEL.sub("_", name).lower().replace("-", "_").replace(".", "_")
    return SECRET_WORDS.search(words) is not None


def url_secret(name: str) -> bool:
    """Whether a URL parameter's name says its value is secret (`api_key`, `token`, `sig`)."""
    return name.lower() in URL_SECRET_PARAMETERS or secret_name(name)


def basic_credentials(token: str) -> bool:
    """Whether a base64 token decodes to `user:password` (what `Authorization: Basic` carries)."""
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return USER_PASSWORD.match(decoded) is not None


def high_entropy(token: str) -> bool:
    """A long token of mixed letters and digits as random as a key (detect-secrets' limit)."""
    if not (LOWER.search(token) and UPPER.search(token) and DIGIT.search(token)):
        return False
    detector = _entropy()
    return shannon_entropy(token, detector.charset) > detector.entropy_limit


def shannon_entropy(token: str, charset: str) -> float:
    """Bits per character of `token`'s characters from `charset`: detect-secrets' measure,
    counted in one pass (its own counts the token once per character of the charset), as
    share × log2(L) - sum(n log2 n) / L over each counted character's n (L: the length)."""
    counts = Counter(token)
    if not counts.keys() <= _characters(charset):
        counts = Counter({char: n for char, n in counts.items() if char in charset})
    if not counts:
        return 0.0
    length = len(token)
    share = sum(counts.values()) / length  # characters outside the charset still count in L
    return share * math.log2(length) - sum(map(_n_log2_n, counts.values())) / length


@lru_cache(maxsize=8)
def _characters(charset: str) -> frozenset[str]:
    return frozenset(charset)


@lru_cache(maxsize=4096)
def _n_log2_n(n: int) -> float:
    return n * math.log2(n)


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
    if not MINE.search(label) and (
        first in DESCRIBING or first.endswith(("ed", "ly")) or SECRET_OF_SOMETHING.search(label)
    ):
        return False
    if LENGTH.match(value):
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

    def _tokens(self, pattern: re.Pattern, secret: Callable[[str], bool], text: str, kind: str) -> str:
        """Each unlabelled token that `secret` judges one goes where it stands; the first few of
        them also wherever else they appear, glued to other text (one pass over the text each,
        not one per token)."""
        found: set[str] = set()

        def replace(match: re.Match) -> str:
            token = match.group(0)
            if not secret(token):
                return token
            self._count(kind, 1)
            if len(found) < MAX_ECHOED_TOKENS:
                found.add(token)
            return REDACTED

        text = pattern.sub(replace, text)
        return self._values(text, found, kind)

    def _labelled(self, pattern: re.Pattern, text: str, kind: str) -> str:
        """Each match's value (group 2) after its label (group 1) removed; a value an earlier
        pattern already removed is left alone and not counted twice."""

        def replace(match: re.Match) -> str:
            if match.group(2) == REDACTED:
                return match.group(0)
            self._count(kind, 1)
            return match.group(1) + REDACTED

        return pattern.sub(replace, text)

    def _urls(self, text: str) -> str:
        """The values of a URL's secret-named parameters; the rest of the URL stays readable."""

        def parameter(match: re.Match) -> str:
            name, value = match.group("name"), match.group("value")
            if not url_secret(name) or not value or HARMLESS_VALUE.match(value):
                return match.group(0)
            self._count("secret in a URL", 1)
            return f"{name}={REDACTED}"

        return URL.sub(lambda url: URL_PARAMETER.sub(parameter, url.group(0)), text)

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
        """`text` without the secrets it holds, in time linear in its length (each pattern
        looks at each character a bounded number of times: router/redaction/secret_shapes.py)."""
        text = self._values(text, self._env_values, "environment secret")
        # A pattern none of whose literals the text holds is not run (router/redaction/regex_literals.py);
        # a replacement only removes text and adds the placeholder, which holds none of them.
        folded = text.casefold()

        def holds(pattern: re.Pattern) -> bool:
            literals = _literals(pattern)
            return literals is None or any(literal in folded for literal in literals)

        if holds(PRIVATE_KEY_BLOCK):
            text, n = PRIVATE_KEY_BLOCK.subn(REDACTED, text)
            self._count("private key", n)
        # the whole match of each pattern (detect-secrets' own reporting keeps only a group)
        text, removed = remove_shapes(text, REDACTED, holds)
        for kind, n in removed.items():
            self._count(kind, n)
        for kind, pattern in TOKEN_PATTERNS:
            if holds(pattern):
                text, n = pattern.subn(REDACTED, text)
                self._count(kind, n)
        if holds(URL):
            text = self._urls(text)
        for kind, pattern in (
            ("authorization header", AUTH_HEADER),
            ("cookie", COOKIE_HEADER),
            ("curl credentials", CURL_USER),
            (".netrc password", NETRC_PASSWORD),
            ("password in prose", PROSE_PASSWORD),
        ):
            if holds(pattern):
                text = self._labelled(pattern, text, kind)
        if holds(PROSE_SECRET):
            text = self._told(text)
        for pattern in (QUOTED, LINE, INLINE):
            if holds(pattern):
                text = self._assignments(pattern, text)
        text = self._tokens(BASE64_CANDIDATE, basic_credentials, text, "basic credentials")
        return self._tokens(HIGH_ENTROPY_CANDIDATE, high_entropy, text, "high-entropy string")

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


def redacted(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """What the router stores, logs or says in its own words about what a backend or a caller
    sent it (an error message, a tool name), without its secrets (this process's secret-named
    environment values included). Longer than `limit`, it is cut first, at a word's end (a
    token cut in two may no longer look like one): the time it takes stays bounded."""
    if not text:
        return text
    if len(text) > limit:
        head = text[:limit]
        space = head.rfind(" ")
        text = f"{head[:space] if space > 0 else ''}… ({len(text)} characters)"
    return Redactor().text(text)


def is_dotenv(name: str) -> bool:
    base = os.path.basename(name)
    return base in (".env", ".envrc") or base.startswith(".env.") or base.endswith(".env")
