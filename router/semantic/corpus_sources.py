"""The model corpus's texts beyond package summaries, derived from public git repositories.

`make model` reads the committed corpus files; this module only re-derives them
(`python -m router.semantic.build_model tool-texts|requests REPO...`), from a clone or
mirror of each repository (read with `git show`, so a bare mirror is enough):

- tool texts: the operations of the OpenAPI specs in darosh/openapi-directory-lite (a
  snapshot of APIs.guru's directory), each as a tool is embedded: its operationId in words,
  then the first sentence of its summary or description;
- requests: what people ask an assistant, from three intent-detection sets: CLINC150
  (clinc/oos-eval, CC BY 3.0), Banking77 (PolyAI-LDN/task-specific-datasets, CC BY 4.0) and
  SNIPS (sonos/nlu-benchmark, 2017 custom intents, CC0).

No evaluation set's text is a corpus text: every string of every benchmark file
(bench/public, bench/queries, bench/data/bfcl.catalog.jsonl) is excluded, case-insensitively.
"""

import csv
import io
import json
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

from router.catalog.tool_text import first_sentence, name_words

PROJECT = Path(__file__).resolve().parents[2]
EVALUATION_FILES = ("bench/public/*.jsonl", "bench/queries/*.jsonl", "bench/data/bfcl.catalog.jsonl")
# A corpus text is of a short sentence's length and plain ASCII (the corpus's shape).
TEXT_CHARS = (12, 300)
_MARKUP = re.compile(r"<[^>]+>|\*\*\*[A-Z]+\*\*\*")
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def git_show(repo: Path, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, check=True
    ).stdout


def git_files(repo: Path, under: str) -> list[str]:
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD", under],
        capture_output=True,
        text=True,
        check=True,
    )
    return listing.stdout.split()


def without_markup(text: str) -> str:
    """HTML tags and ***BETA***-style flags gone, a Markdown link as its words."""
    return _MARKDOWN_LINK.sub(r"\1", _MARKUP.sub(" ", text))


def openapi_tool_texts(repo: Path) -> Iterator[str]:
    for path in git_files(repo, "specs"):
        spec = json.loads(git_show(repo, path))
        for operations in (spec.get("paths") or {}).values():
            if not isinstance(operations, dict):
                continue
            for operation in operations.values():
                if isinstance(operation, dict):
                    yield from _operation_text(operation)


def _operation_text(operation: dict) -> Iterator[str]:
    said = next(
        (
            t
            for t in (operation.get("summary"), operation.get("description"))
            if isinstance(t, str) and t.strip()
        ),
        None,
    )
    if said is None:
        return
    sentence = first_sentence(without_markup(said))
    operation_id = operation.get("operationId")
    words = name_words(operation_id) if isinstance(operation_id, str) else ""
    yield f"{words}: {sentence}" if words else sentence


def clinc_requests(repo: Path) -> Iterator[str]:
    for rows in json.loads(git_show(repo, "data/data_full.json")).values():
        for text, _intent in rows:
            yield text


def banking_requests(repo: Path) -> Iterator[str]:
    for path in ("banking_data/train.csv", "banking_data/test.csv"):
        rows = csv.reader(io.StringIO(git_show(repo, path).decode()))
        next(rows)  # the header
        for row in rows:
            yield row[0]


def snips_requests(repo: Path) -> Iterator[str]:
    for path in git_files(repo, "2017-06-custom-intent-engines"):
        if "/train_" in path and path.endswith("_full.json"):
            for rows in json.loads(git_show(repo, path)).values():
                for row in rows:
                    yield "".join(segment["text"] for segment in row["data"])


def evaluation_texts() -> set[str]:
    """Every string value of every benchmark file's rows, folded like corpus keys."""
    seen: set[str] = set()
    for pattern in EVALUATION_FILES:
        for path in sorted(PROJECT.glob(pattern)):
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(row, dict):
                    seen.update(_key(v) for v in row.values() if isinstance(v, str))
    return seen


def kept(texts: Iterable[str], seen: set[str]) -> list[str]:
    """Texts of the corpus's shape, whitespace folded, each once and none in `seen` (which
    grows with every text kept)."""
    low, high = TEXT_CHARS
    out = []
    for text in texts:
        text = " ".join(text.split())
        key = _key(text)
        if low <= len(text) <= high and text.isascii() and key not in seen:
            seen.add(key)
            out.append(text)
    return out


def _key(text: str) -> str:
    return " ".join(text.split()).lower()
