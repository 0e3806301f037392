"""Reading the README and docs/ as the tests check them: fenced blocks, the shell commands in
them, links, and the anchors GitHub gives headings."""

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.project import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
DOCS_DIR = PROJECT_ROOT / "docs"
DOC_FILES = [README, *sorted(DOCS_DIR.glob("*.md"))]
SHELL_LANGUAGES = {"sh", "shell", "bash", "console"}

FENCE = re.compile(r"^(`{3,})([\w+-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
# [text](target) and ![alt](target); a target has no spaces in these pages
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
PROMPT = "$ "


def page(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def relative(path: Path) -> str:
    return str(path.relative_to(PROJECT_ROOT))


def doc_text(name: str) -> str:
    """A page by its path from the top of the checkout (README.md, docs/search.md, ...)."""
    return page(PROJECT_ROOT / name)


@dataclass(frozen=True)
class Block:
    language: str
    body: str


def fenced_blocks(text: str) -> list[Block]:
    return [Block(m.group(2).lower(), m.group(3)) for m in FENCE.finditer(text)]


def prose(text: str) -> str:
    """The page without its fenced blocks and inline code: where headings and links live."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


@dataclass(frozen=True)
class Command:
    """One shell command of a page, as written (continuation lines joined), and, for a
    console block, the output shown under it."""

    text: str
    expected_output: str | None = None

    @property
    def normalized(self) -> str:
        """The words without comments, one space apart: what the not-runnable list matches."""
        return " ".join(shlex.split(self.text, comments=True))


def _logical_lines(body: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for line in body.splitlines():
        if pending:
            line = pending + " " + line.strip()
            pending = ""
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1].rstrip()
            continue
        lines.append(line)
    if pending:
        lines.append(pending)
    return lines


def shell_commands(block: Block) -> list[Command]:
    if "<<" in block.body:
        raise ValueError("a here-document in a shell block: the docs test cannot split it into commands")
    if block.language == "console":
        return _console_commands(block.body)
    return [
        Command(line.strip())
        for line in _logical_lines(block.body)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _console_commands(body: str) -> list[Command]:
    commands: list[Command] = []
    text: str | None = None
    output: list[str] = []
    for line in _logical_lines(body):
        if line.startswith(PROMPT):
            if text is not None:
                commands.append(Command(text, "\n".join(output)))
            text, output = line[len(PROMPT) :].strip(), []
        elif text is None:
            raise ValueError(f"console block output before any '$ ' command: {line!r}")
        else:
            output.append(line)
    if text is not None:
        commands.append(Command(text, "\n".join(output)))
    return commands


def page_commands(path: Path) -> list[Command]:
    return [
        command
        for block in fenced_blocks(page(path))
        if block.language in SHELL_LANGUAGES
        for command in shell_commands(block)
    ]


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without formatting, lower case,
    punctuation dropped (letters, digits, `_`, `-` and spaces kept), spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor of a page; a repeated heading gets -1, -2, ... as on GitHub."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for match in HEADING.finditer(FENCE.sub("", text)):
        anchor = github_anchor(match.group(2))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def links(text: str) -> list[str]:
    return LINK.findall(prose(text))


def section(text: str, heading: str) -> str:
    """From a heading line to the next heading of the same or a higher level."""
    start = text.index(heading)
    level = len(heading) - len(heading.lstrip("#"))
    following = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE)
    end = following.search(text, start + len(heading))
    return text[start : end.start() if end else None]
