"""`.skill-lock.json` version 3, read and written in exactly the shape the `skills` CLI
(vercel-labs/skills 1.7.x) uses for its global lock.

Shape: {"version": 3, "skills": {NAME: {"source", "sourceType", "sourceUrl", ["ref"],
["skillPath"], "skillFolderHash", ["pluginName"], "installedAt", "updatedAt"}},
"dismissed": {...}, ["lastSelectedAgents": [...]]}, serialized as
`JSON.stringify(lock, null, 2)` (two-space indent, no trailing newline). Fields this module
does not know are kept as they are.
"""

import json
import os
import re
from pathlib import Path
from typing import Any

from router.files import write_atomically
from router.skills.errors import LockFileError

LOCK_FILE_NAME = ".skill-lock.json"
LOCK_VERSION = 3
# skillFolderHash is a git tree id (40 hex) for skills the CLI hashed from a GitHub tree,
# and a SHA-256 (64 hex) for those it hashed file by file (local folders, clones).
GIT_TREE_HASH = re.compile(r"^[0-9a-f]{40}$")
FILES_SHA256_HASH = re.compile(r"^[0-9a-f]{64}$")
KIND_GIT_TREE = "git-tree"
KIND_FILES_SHA256 = "sha256-files"
# JavaScript objects list integer-like keys first, ascending, whatever their insertion
# order; JSON.stringify inherits that.
_ARRAY_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")
_MAX_ARRAY_INDEX = 2**32 - 2


def default_lock_path(environ: dict[str, str] | None = None) -> Path:
    """Where the skills CLI keeps its global lock (its getSkillLockPath)."""
    env = os.environ if environ is None else environ
    state_home = env.get("XDG_STATE_HOME")
    if state_home:
        return Path(state_home) / "skills" / LOCK_FILE_NAME
    return Path(env.get("HOME") or Path.home()) / ".agents" / LOCK_FILE_NAME


def empty_lock() -> dict[str, Any]:
    return {"version": LOCK_VERSION, "skills": {}, "dismissed": {}}


def read_skill_lock(path: Path, *, missing_ok: bool = False) -> dict[str, Any]:
    """The parsed lock; a missing file is an error unless missing_ok (then an empty lock)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return empty_lock()
        raise LockFileError(f"{path}: no such .skill-lock.json") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LockFileError(f"{path}: cannot read: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LockFileError(f"{path}: not JSON: {exc}") from None
    _check_shape(path, doc)
    return doc


def _check_shape(path: Path, doc: Any) -> None:
    if not isinstance(doc, dict):
        raise LockFileError(f"{path}: top level must be an object")
    version = doc.get("version")
    if version != LOCK_VERSION or isinstance(version, bool):
        raise LockFileError(f"{path}: version is {version!r}; only version {LOCK_VERSION} is understood")
    skills = doc.get("skills")
    if not isinstance(skills, dict):
        raise LockFileError(f"{path}: 'skills' must be an object")
    for name, entry in skills.items():
        # an entry with odd fields only fails its own skill (verify names it); a non-object
        # means the file is not what the CLI writes
        if not isinstance(entry, dict):
            raise LockFileError(f"{path}: skills.{name} must be an object")


def folder_hash_kind(entry: dict[str, Any]) -> str | None:
    """Which algorithm produced an entry's skillFolderHash, or None if unusable."""
    value = entry.get("skillFolderHash")
    if not isinstance(value, str):
        return None
    if GIT_TREE_HASH.match(value):
        return KIND_GIT_TREE
    if FILES_SHA256_HASH.match(value):
        return KIND_FILES_SHA256
    return None


def upsert_local_entry(doc: dict, name: str, source: Path, folder_hash: str, now: str) -> bool:
    """Record a skill's hash; True if the document changed.

    A new skill gets the entry the CLI writes for a local source. An existing entry keeps
    its source fields and installedAt; only skillFolderHash and updatedAt move, and only
    when the hash does.
    """
    skills = doc["skills"]
    entry = skills.get(name)
    if entry is None:
        skills[name] = {
            "source": str(source),
            "sourceType": "local",
            "sourceUrl": str(source),
            "skillFolderHash": folder_hash,
            "installedAt": now,
            "updatedAt": now,
        }
        return True
    if entry.get("skillFolderHash") == folder_hash:
        return False
    entry["skillFolderHash"] = folder_hash
    entry["updatedAt"] = now
    return True


def _js_key_order(value: Any) -> Any:
    if isinstance(value, dict):
        index_keys = sorted(
            (k for k in value if _ARRAY_INDEX.match(k) and int(k) <= _MAX_ARRAY_INDEX), key=int
        )
        other_keys = [k for k in value if k not in set(index_keys)]
        return {k: _js_key_order(value[k]) for k in index_keys + other_keys}
    if isinstance(value, list):
        return [_js_key_order(item) for item in value]
    return value


def serialize(doc: dict[str, Any]) -> str:
    """The bytes JSON.stringify(doc, null, 2) gives."""
    return json.dumps(_js_key_order(doc), indent=2, ensure_ascii=False)


def write_skill_lock(path: Path, doc: dict[str, Any]) -> None:
    write_atomically(path, serialize(doc))
