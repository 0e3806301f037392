"""A request with its payload replaced by what kind of thing it is, for matching it against
the tools' example requests (router/catalog/example_vectors.py, semantic_index.py).

The static model's vector of a sentence is close to the mean of its words' vectors, so the
names, paths and links a request carries weigh as much as what it asks: "pull up the entries
for Priya and Sam" and the example "pull up the memory entries for Alice and Bob" share their
ask and little else. Both sides are read without their payload, each piece of it replaced by
the word for its kind (a link is a web page, `logs/app.txt` a file, `build/` a folder, a
picture's name an image file, `{"name": "test"}` json) or dropped when its kind says nothing
(a name, an identifier). The tools' own vectors keep the whole text: only examples are
written in a user's words.
"""

import re

# A longer request is a paste, not a sentence: it is read as written.
MAX_READ_CHARS = 4_096

# Each kind of payload, in the order they are replaced (a link holds a path, a path a dot).
# Each pattern starts only where a run of its characters starts and takes the run whole
# (possessive), so a long run of them is read once, not once per character.
# A link, with its scheme or as a bare host name ending in a common top-level domain
# (`status.stripe.com`, `github.com/astral-sh/uv`); not the ones that are file extensions too
# (`.sh`, `.so`, `.zip`, `.in`).
LINK = re.compile(
    r"\b(?:https?|wss?|ftp)://\S+"
    r"|(?<![\w/.@-])(?:[a-z0-9-]++\.)+(?:com|org|net|io|dev|ai|co|edu|gov|info|app|cloud|tech|xyz)\b(?![\w-]|\.\w)/?\S*",
    re.IGNORECASE,
)
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]++\.[\w.-]+")
# a JSON object of at most a line, before the quotes it holds (`{"name": "test"}`)
JSON_OBJECT = re.compile(r"\{[^{}\n]{0,400}\}")
# quoted text of at most a line (an unclosed quote is left as written)
QUOTED = re.compile(r"'[^'\n]{1,200}'|\"[^\"\n]{1,200}\"|`[^`\n]{1,200}`|“[^”\n]{1,200}”|‘[^’\n]{1,200}’")
# a memory address (0x...), and a commit id (hex with a digit and a letter, as git abbreviates
# them): "what did 3f9c2e1 touch" asks about a commit, not what code an address refers to
ADDRESS = re.compile(r"\b0x[0-9a-f]+\b", re.IGNORECASE)
COMMIT_ID = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", re.IGNORECASE)
# a calendar date (`2024-03-01`, `3/1/2024`): what it is, not its digits ("... between two dates")
DATE = re.compile(r"(?<![\w/.-])(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4})(?![\w/.-])")
# a path with a slash (`src/app.py`, `build/`, `~/notes`), a file name with an extension (a
# name of two characters at least: "e.g." is none; `config.legacy.json` has two dots) or a
# dotfile (`.gitignore`, `.env`)
PATH = re.compile(
    r"(?<![\w/.@~-])(?:~|\.{1,2})?/?(?:[\w.@-]++/)+[\w.@-]*"
    r"|(?<![\w/.@-])[\w@-]{2,}+(?:\.[\w@-]++)*?\.[A-Za-z][A-Za-z0-9]{0,4}\b(?![\w/]|\.\w)"
    r"|(?<![\w/.@-])\.[A-Za-z][\w.-]*+(?![\w/])"
)
# a name made for a machine: parse_config, v0.3.0, release-2.1 (not a number or a time: 3pm)
IDENTIFIER = re.compile(r"(?<![\w.-])(?:[^\W_]*+_[\w.-]*|[A-Za-z][A-Za-z-]*+[-.]?\d[\w.-]*)")
# capitalised words after a sentence's first: people, places, products (not "I", "I'm")
NAME = re.compile(r"(?<=[^.!?\s]\s)(?!I\b)[A-Z][\w']*+(?:\s+(?!I\b)[A-Z][\w']*+)*")
# a number of three digits or more (a port, a year, an id): what it is, not its digits, is the ask
# ("from 5432 to 5433"); a count or a time ("the last 50 lines", "3pm", "09:30") stays
NUMBER = re.compile(r"(?<![\w.:])\d{3,}+(?![\w.:])")
# a picture's format named on its own ("a full page png of ..."): a picture
IMAGE_FORMAT = re.compile(r"(?<![\w.])(?:png|jpe?g|gif|webp)(?![\w.])", re.IGNORECASE)
PATTERNS = (
    LINK,
    EMAIL,
    JSON_OBJECT,
    QUOTED,
    ADDRESS,
    COMMIT_ID,
    DATE,
    PATH,
    IDENTIFIER,
    NAME,
    IMAGE_FORMAT,
    NUMBER,
)

IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "ico", "tiff"})
AUDIO_EXTENSIONS = frozenset({"wav", "mp3", "ogg", "flac", "m4a", "aac"})


def _path_kind(match: re.Match[str]) -> str:
    path = match.group(0)
    if path.endswith("/"):
        return " folder "
    extension = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if extension in IMAGE_EXTENSIONS:
        return " image file "
    if extension in AUDIO_EXTENSIONS:
        return " audio file "
    if extension == "pdf":
        return " pdf file "
    return " file "


def without_payload(text: str) -> str:
    """`text` with its links, addresses, paths, quotes and names replaced by their kind."""
    if len(text) > MAX_READ_CHARS:
        return text
    text = LINK.sub(" web page ", text)
    text = EMAIL.sub(" email address ", text)
    text = JSON_OBJECT.sub(" json ", text)
    text = QUOTED.sub(" text ", text)
    text = ADDRESS.sub(" address ", text)
    text = COMMIT_ID.sub(" commit ", text)
    text = DATE.sub(" date ", text)
    text = PATH.sub(_path_kind, text)
    text = IDENTIFIER.sub(" ", text)
    text = NAME.sub(" ", text)
    text = IMAGE_FORMAT.sub(" image ", text)
    text = NUMBER.sub(" number ", text)
    return " ".join(text.split())


# What a request is about, from the word that says so (or a colon) to its end: "anything saved
# about the kubernetes cluster", "keep in mind for later: ...". The topic is payload too: what
# is asked is the words before it.
TOPIC = re.compile(r"\s+(?:about|regarding|re|on)\b.*$|:\s.*$", re.IGNORECASE | re.DOTALL)
# Fewer words than this left before the topic say too little to match on ("tell me").
MIN_WORDS_BEFORE_TOPIC = 3
# A fact to keep, after the words that say so: "remember that jonas owns billing", "save a note
# that falcon ships march 3", "keep in mind for later: ...". The fact is payload; the ask is the
# words before it.
FACT = re.compile(
    r"^(.*?\b(?:remember|note|keep in mind|don't forget|do not forget|jot down|write down)"
    r"(?:\s+(?:on|to|in|under|about)\s[^:\n]{1,60}?)?)"
    r"(?:\s+for later)?(?:\s+that\s|\s*:\s).*$",
    re.IGNORECASE | re.DOTALL,
)


# The ties between two things a fact may state ("payments-api depends on redis-cache").
RELATION = re.compile(
    r"\b(?:depends on|relies on|owns|manages|maintains|reports to|belongs to|works (?:at|on|for)|is part of)\b",
    re.IGNORECASE,
)


def without_topic(reading: str) -> str:
    """A reading (without payload) without what it is about, or the reading itself when that
    would leave too little or there is no topic."""
    if len(reading) > MAX_READ_CHARS:
        return reading
    asked = without_fact(reading)
    if asked != reading:
        return asked
    asked = TOPIC.sub("", reading)
    return asked if len(asked.split()) >= MIN_WORDS_BEFORE_TOPIC else reading


def without_fact(text: str) -> str:
    """The text without the fact it gives to keep ("remember that jonas owns billing" →
    "remember that"), or the text itself when it gives none."""
    if len(text) > MAX_READ_CHARS:
        return text
    fact = FACT.match(text)
    if fact is None:
        return text
    # a fact that ties two things says how: that is what to keep, the two are the payload
    relation = RELATION.search(text, fact.end(1))
    return f"{fact.group(1)} that" + (f" one {relation.group(0).lower()} another" if relation else "")
