"""What semantic search adds to the default install (issue 21's bar: at most 80 MB).

Read from the metadata of the environment this runs in (a venv from requirements-core.lock
is the default install; the dev venv gives the same figure, since extras are not followed):
the distributions reachable from the semantic requirements (SEMANTIC_REQUIREMENTS, the
context-router core requirements semantic search needs) that no other core requirement
reaches, each sized by the file sizes its RECORD lists (a file RECORD gives no size for, e.g.
RECORD itself, is measured on disk), plus the shipped model's directory. Sizes in MB (10^6
bytes), the unit of the bar, and MiB.

Run alone: `python -m bench.install_size`.
"""

import re
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from bench.report import Options, Section, markdown_table
from router.semantic.static_model import MODEL_DIR

PROJECT = "context-router"
# The core requirements (pyproject.toml) that exist for semantic search only.
SEMANTIC_REQUIREMENTS = ("numpy", "static-embed-runner")
BAR_MB = 80.0
MB = 10**6
MIB = 2**20


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements_of(dist: metadata.Distribution) -> list[str]:
    """The names a distribution requires when installed without extras (markers evaluated here)."""
    names = []
    for line in dist.requires or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            names.append(canonical(requirement.name))
    return names


def installed() -> dict[str, metadata.Distribution]:
    return {canonical(dist.metadata["Name"]): dist for dist in metadata.distributions()}


def reachable(roots: Iterable[str], dists: dict[str, metadata.Distribution]) -> set[str]:
    seen: set[str] = set()
    todo = [canonical(name) for name in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in dists:
            raise SystemExit(f"{name} is required but not installed in {sys.prefix}")
        seen.add(name)
        todo.extend(requirements_of(dists[name]))
    return seen


def record_bytes(dist: metadata.Distribution) -> int:
    total = 0
    for file in dist.files or []:
        if file.size is not None:
            total += file.size
        else:
            located = Path(str(dist.locate_file(file)))
            total += located.stat().st_size if located.is_file() else 0
    return total


def semantic_only(dists: dict[str, metadata.Distribution]) -> list[str]:
    core = requirements_of(dists[PROJECT])
    semantic = [name for name in core if name in {canonical(n) for n in SEMANTIC_REQUIREMENTS}]
    others = [name for name in core if name not in semantic]
    return sorted(reachable(semantic, dists) - reachable(others, dists))


def directory_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())


def sizes() -> list[tuple[str, int]]:
    dists = installed()
    rows = [(f"{name} {dists[name].version}", record_bytes(dists[name])) for name in semantic_only(dists)]
    rows.append((f"the model ({MODEL_DIR.name}/)", directory_bytes(MODEL_DIR)))
    return rows


def run(options: Options) -> Section:
    rows = sizes()
    total = sum(size for _, size in rows)
    verdict = "within" if total / MB <= BAR_MB else "OVER"
    table = markdown_table(
        ["what", "MB", "MiB"],
        [[label, f"{size / MB:.2f}", f"{size / MIB:.2f}"] for label, size in rows]
        + [["**total**", f"**{total / MB:.2f}**", f"{total / MIB:.2f}"]],
    )
    markdown = (
        f"{table}\n\n{verdict} the bar of {BAR_MB:.0f} MB. Measured from the installed "
        "distributions' RECORD files: what only the semantic requirements pull, plus the model."
    )
    return Section(
        "Semantic search's share of the default install",
        markdown,
        {"bytes": dict(rows), "total_bytes": total, "bar_mb": BAR_MB, "within": verdict == "within"},
    )


def main() -> int:
    section = run(Options(sizes=(), write=False))
    print(section.markdown)
    return 0 if section.data["within"] else 1


if __name__ == "__main__":
    sys.exit(main())
