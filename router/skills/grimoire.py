"""`grimoire.lock`: this project's own lock of each skill's declaration and content.

A skill's *declaration* is what it says it is: its SKILL.md front matter and the sorted
list of its files. Its RFC 8785 bytes hashed with blake3 give `declaration_hash`; the
`files` manifest (blake3 and executable bit per file, target per symlink) hashed the same
way gives `tree_hash`. Paths are '/'-separated whatever platform wrote them, and RFC 8785
orders keys, so neither key order nor path separators change a hash. docs/skills.md documents
the file.
"""

import json
import re
from pathlib import Path
from typing import Any

import yaml

from router.hashing import content_hash
from router.skills.errors import LockFileError, SkillFolderError
from router.skills.folder_scan import portable

GRIMOIRE_VERSION = 1
DEFAULT_GRIMOIRE_NAME = "grimoire.lock"
SKILL_FILE = "SKILL.md"
# The same front-matter fence the skills CLI accepts: optional BOM, '---' lines, CRLF or LF.
_FRONT_MATTER = re.compile(r"^\ufeff?---\r?\n(.*?)\r?\n---\r?\n?(.*)$", re.DOTALL)


class _FrontMatterLoader(yaml.SafeLoader):
    """SafeLoader that leaves dates as the text written: JSON has no date type, and a
    declaration must hash the same wherever it is parsed."""


_FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_front_matter(folder: Path) -> dict[str, Any]:
    skill_md = folder / SKILL_FILE
    try:
        text = skill_md.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SkillFolderError(f"{folder}: no {SKILL_FILE}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillFolderError(f"{skill_md}: cannot read: {exc}") from None
    match = _FRONT_MATTER.match(text)
    if not match:
        raise SkillFolderError(f"{skill_md}: no front matter (a '---' fenced YAML block at the top)")
    try:
        data = yaml.load(match.group(1), Loader=_FrontMatterLoader)
    except yaml.YAMLError as exc:
        raise SkillFolderError(f"{skill_md}: front matter is not YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SkillFolderError(f"{skill_md}: front matter must be a mapping")
    for field in ("name", "description"):
        if not isinstance(data.get(field), str) or not data[field].strip():
            raise SkillFolderError(f"{skill_md}: front matter '{field}' must be a non-empty string")
    return data


def build_declaration(front_matter: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    return {
        "front_matter": front_matter,
        "files": sorted({portable(p) for p in paths}),
    }


def declaration_hash(declaration: dict[str, Any], *, where: str) -> str:
    try:
        return content_hash(declaration)
    except Exception as exc:  # rfc8785 refuses what JSON cannot say exactly
        raise SkillFolderError(f"{where}: front matter cannot be canonicalized as JSON: {exc}") from None


def grimoire_entry(folder: Path, declaration: dict, decl_hash: str, manifest: dict, tree: str) -> dict:
    return {
        "folder": str(folder),
        "declaration": declaration,
        "declaration_hash": decl_hash,
        "files": manifest,
        "tree_hash": tree,
    }


def empty_grimoire() -> dict[str, Any]:
    return {"grimoire_version": GRIMOIRE_VERSION, "skills": {}}


def read_grimoire(path: Path, *, missing_ok: bool = False) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if missing_ok:
            return empty_grimoire()
        raise LockFileError(f"{path}: no such grimoire.lock") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LockFileError(f"{path}: cannot read: {exc}") from None
    if not isinstance(doc, dict) or doc.get("grimoire_version") != GRIMOIRE_VERSION:
        raise LockFileError(f"{path}: not a grimoire.lock of version {GRIMOIRE_VERSION}")
    skills = doc.get("skills")
    if not isinstance(skills, dict):
        raise LockFileError(f"{path}: 'skills' must be an object")
    for name, entry in skills.items():
        skills[name] = _normalized_entry(path, name, entry)
    return doc


def _normalized_entry(path: Path, name: str, entry: Any) -> dict:
    """Check an entry's fields and turn any '\\' path separators into '/'."""
    where = f"{path}: skills.{name}"
    if not isinstance(entry, dict):
        raise LockFileError(f"{where} must be an object")
    for field in ("folder", "declaration_hash", "tree_hash"):
        if not isinstance(entry.get(field), str):
            raise LockFileError(f"{where}.{field} must be a string")
    declaration, files = entry.get("declaration"), entry.get("files")
    if not isinstance(declaration, dict) or not isinstance(declaration.get("files"), list):
        raise LockFileError(f"{where}.declaration must be an object with a 'files' list")
    if not isinstance(declaration.get("front_matter"), dict):
        raise LockFileError(f"{where}.declaration.front_matter must be an object")
    if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
        raise LockFileError(f"{where}.files must map paths to objects")
    normalized = dict(entry)
    normalized["declaration"] = build_declaration(declaration["front_matter"], declaration["files"])
    normalized["files"] = {portable(p): v for p, v in files.items()}
    return normalized


def serialize_grimoire(doc: dict[str, Any]) -> str:
    # Sorted keys and a trailing newline: the same skills always give the same bytes.
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
