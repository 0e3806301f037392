"""Everything the locks say about a skill folder, computed from the folder as it is now."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from router.skills.errors import SkillFolderError
from router.skills.folder_scan import Entry, scan_folder, symlink_escape
from router.skills.grimoire import build_declaration, declaration_hash, read_front_matter
from router.skills.tree_hash import cli_folder_hash, git_tree_sha, grimoire_manifest, manifest_tree_hash


@dataclass(frozen=True)
class SkillSnapshot:
    name: str
    folder: Path
    entries: list[Entry]
    front_matter: dict[str, Any]
    declaration: dict[str, Any]
    declaration_hash: str
    manifest: dict[str, dict]
    tree_hash: str
    # the skills CLI's two skillFolderHash algorithms
    files_sha256: str
    git_tree: str
    # one line per symlink that leaves the folder
    escapes: list[str]


def snapshot_skill(folder: Path) -> SkillSnapshot:
    try:
        return _snapshot(folder.absolute())
    except OSError as exc:  # unreadable file or directory, vanished mid-walk, ...
        raise SkillFolderError(f"{folder}: cannot read: {exc}") from None


def _snapshot(folder: Path) -> SkillSnapshot:
    entries = scan_folder(folder)
    front_matter = read_front_matter(folder)
    declaration = build_declaration(front_matter, [e.path for e in entries])
    manifest = grimoire_manifest(entries)
    escapes = []
    for entry in entries:
        if entry.kind == "symlink" and (why := symlink_escape(folder, entry)):
            escapes.append(f"symlink escapes the folder: {entry.path} ({why})")
    return SkillSnapshot(
        name=front_matter["name"],
        folder=folder,
        entries=entries,
        front_matter=front_matter,
        declaration=declaration,
        declaration_hash=declaration_hash(declaration, where=str(folder / "SKILL.md")),
        manifest=manifest,
        tree_hash=manifest_tree_hash(manifest),
        files_sha256=cli_folder_hash(entries),
        git_tree=git_tree_sha(entries),
        escapes=escapes,
    )
