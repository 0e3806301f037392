"""Context assembly: named files, the most relevant workspace files (bounded), AGENTS.md,
a `lake build` log for Lean, and earlier break-glass calls on similar problems.

Which files may be sent at all is workspace.py's rule (credential and encrypted files never,
git-ignored ones only when named); everything sent passes through the Redactor first.
Nothing here writes.
"""

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from router.breakglass.settings import ContextSettings
from router.breakglass.workspace import WorkspacePolicy
from router.db import query_dicts
from router.errors import RouterError
from router.fts import fts_or_query
from router.redaction.redactor import Redactor

SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".npm-tools",
    "target",
    "build",
    "dist",
    ".lake",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
}
STOPWORDS = {
    "break",
    "glass",
    "that",
    "this",
    "with",
    "from",
    "have",
    "tried",
    "when",
    "what",
    "does",
    "into",
    "then",
    "than",
    "also",
    "will",
    "would",
    "there",
    "their",
    "which",
    "after",
    "before",
    "because",
    "still",
    "only",
    "every",
    "some",
    "none",
}
TERM = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
MAX_TERMS = 24

SIMILAR_PROBLEMS = """
SELECT i.id, i.started_at, i.problem_type, i.status, i.problem, i.diagnosis
FROM breakglass_problems_fts
JOIN breakglass_invocations i ON i.id = breakglass_problems_fts.rowid
WHERE breakglass_problems_fts MATCH :query AND i.status IN ('ok', 'failed')
ORDER BY bm25(breakglass_problems_fts), i.id DESC
LIMIT :limit
"""


class ContextError(RouterError):
    """A named context file is unusable; the message names which and why."""


@dataclass
class ContextFile:
    path: str
    text: str
    truncated: bool
    reason: str  # 'named' or the relevance score


@dataclass
class AssembledContext:
    files: list[ContextFile] = field(default_factory=list)
    constraints: str = ""
    build_log: str = ""
    similar: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def problem_terms(statement: str) -> list[str]:
    seen: list[str] = []
    for word in TERM.findall(statement):
        lower = word.lower()
        if lower not in STOPWORDS and lower not in seen:
            seen.append(lower)
    return seen[:MAX_TERMS]


def fts_query(terms: list[str]) -> str | None:
    """Each term quoted as an FTS5 string, ORed: no input can inject query syntax."""
    return fts_or_query(terms) or None


def resolve_named(workspace: Path, names: list[str]) -> list[Path]:
    resolved = []
    root = workspace.resolve()
    for index, name in enumerate(names):
        path = (root / name).resolve() if not os.path.isabs(name) else Path(name).resolve()
        where = f"context_files[{index}] ({name})"
        if path != root and root not in path.parents:
            raise ContextError(f"{where}: outside the workspace {root}")
        if not path.is_file():
            raise ContextError(f"{where}: no such file in the workspace")
        resolved.append(path)
    return resolved


def _read_text(path: Path, limit: int) -> tuple[str, bool] | None:
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if b"\0" in data[:4096]:
        return None
    truncated = len(data) > limit
    return data[:limit].decode("utf-8", errors="replace"), truncated


def _scan_workspace(
    root: Path, terms: list[str], skip: set[Path], settings: ContextSettings, policy: WorkspacePolicy
):
    """Score files by the problem's terms: 3 per term in the path, 1 per term in the text."""
    scored: list[tuple[int, str, Path]] = []
    scanned = 0
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS and not d.startswith(".") and not policy.ignored(here / d, is_dir=True)
        )
        for filename in sorted(filenames):
            if scanned >= settings.max_scanned_files:
                return sorted(scored, key=lambda s: (-s[0], s[1]))
            path = here / filename
            if path.resolve() in skip or filename == "AGENTS.md" or path.is_symlink() or not path.is_file():
                continue
            try:
                # the size first: a file too big to send is never opened to be looked at
                if path.stat().st_size > settings.max_file_bytes or policy.not_picked(path):
                    continue
                read = _read_text(path, settings.max_file_bytes)
            except OSError:
                continue
            scanned += 1
            if read is None:
                continue
            rel = str(path.relative_to(root)).lower()
            text = read[0].lower()
            score = sum(3 for t in terms if t in rel) + sum(1 for t in terms if t in text)
            if score:
                scored.append((score, str(path.relative_to(root)), path))
    return sorted(scored, key=lambda s: (-s[0], s[1]))


def lake_build_log(workspace: Path, settings: ContextSettings) -> tuple[str, str]:
    """(log, note). Runs `lake build` only where it applies: lake installed, a Lake project."""
    lake = shutil.which("lake")
    if lake is None:
        return "", "lake build skipped: `lake` is not installed"
    if not any((workspace / name).exists() for name in ("lakefile.lean", "lakefile.toml")):
        return "", "lake build skipped: no lakefile in the workspace"
    try:
        done = subprocess.run(
            [lake, "build"],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=settings.lake_timeout_seconds,
        )
    except subprocess.TimeoutExpired as exc:
        output = (exc.stdout or "") if isinstance(exc.stdout, str) else ""
        return output[-settings.max_build_log_bytes :], (
            f"lake build timed out after {settings.lake_timeout_seconds:g} s (partial log)"
        )
    log = (done.stdout + done.stderr)[-settings.max_build_log_bytes :]
    return log, f"lake build exited {done.returncode}"


def assemble(
    conn: apsw.Connection,
    settings: ContextSettings,
    workspace: Path,
    statement: str,
    problem_type: str,
    named: list[str],
    redactor: Redactor,
) -> AssembledContext:
    out = AssembledContext()
    root = workspace.resolve()
    policy = WorkspacePolicy(root)
    named_paths = resolve_named(root, named)
    budget = settings.max_total_bytes

    def add(path: Path, reason: str) -> None:
        nonlocal budget
        if (never := policy.never_sent(path)) is not None:
            out.notes.append(f"{path.relative_to(root)} left out: {never}")
            return
        if budget <= 0:
            out.notes.append(f"{path.relative_to(root)} left out: context size limit reached")
            return
        read = _read_text(path, min(settings.max_file_bytes, budget))
        if read is None:
            out.notes.append(f"{path.relative_to(root)} left out: binary file")
            return
        text, truncated = read
        budget -= len(text.encode("utf-8"))
        rel = str(path.relative_to(root))
        out.files.append(ContextFile(rel, redactor.file(rel, text), truncated, reason))

    for path in named_paths:
        add(path, "named")
    if settings.max_workspace_files:
        terms = problem_terms(statement)
        for score, _, path in _scan_workspace(root, terms, set(named_paths), settings, policy)[
            : settings.max_workspace_files
        ]:
            add(path, f"relevance {score}")

    agents = root / "AGENTS.md"
    if agents.is_file():
        read = _read_text(agents, settings.max_file_bytes)
        out.constraints = redactor.text(read[0]) if read else ""
    else:
        out.notes.append("no AGENTS.md in the workspace")

    if problem_type == "lean_proof":
        log, note = lake_build_log(root, settings)
        out.build_log = redactor.text(log)
        out.notes.append(note)

    query = fts_query(problem_terms(statement))
    if query and settings.similar_problems:
        for row in query_dicts(conn, SIMILAR_PROBLEMS, {"query": query, "limit": settings.similar_problems}):
            out.similar.append(
                {
                    **row,
                    "problem": redactor.text(row["problem"]),
                    "diagnosis": redactor.text(row["diagnosis"]),
                }
            )
    return out
