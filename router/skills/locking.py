"""`skills lock`: hash skill folders and record them in both lock files."""

from dataclasses import dataclass
from pathlib import Path

from router.clock import utc_now_iso
from router.files import write_atomically
from router.skills.errors import SkillFolderError
from router.skills.grimoire import grimoire_entry, read_grimoire, serialize_grimoire
from router.skills.records import SkillRecorder
from router.skills.skill_lock import (
    KIND_GIT_TREE,
    folder_hash_kind,
    read_skill_lock,
    upsert_local_entry,
    write_skill_lock,
)
from router.skills.snapshot import SkillSnapshot, snapshot_skill


@dataclass(frozen=True)
class Locked:
    snapshot: SkillSnapshot
    folder_hash: str
    changed: bool


def lock_skills(
    folders: list[Path], lock_path: Path, grimoire_path: Path, recorder: SkillRecorder
) -> list[Locked]:
    """Lock every folder or none: all are hashed and checked before either file is written.

    A skill already in .skill-lock.json keeps its source fields; its skillFolderHash is
    recomputed with the algorithm its entry already uses (git tree for GitHub-hashed
    entries, the file SHA-256 otherwise). New skills get a local-source entry.
    """
    snapshots = [snapshot_skill(folder) for folder in folders]
    seen: dict[str, Path] = {}
    for snap in snapshots:
        if snap.escapes:
            raise SkillFolderError(
                f"{snap.folder}: refusing to lock skill {snap.name!r}: " + "; ".join(snap.escapes)
            )
        if snap.name in seen and seen[snap.name] != snap.folder:
            raise SkillFolderError(
                f"skill name {snap.name!r} is declared by both {seen[snap.name]} and {snap.folder}"
            )
        seen[snap.name] = snap.folder
    skill_lock = read_skill_lock(lock_path, missing_ok=True)
    grimoire = read_grimoire(grimoire_path, missing_ok=True)
    now = utc_now_iso()
    results = []
    for snap in snapshots:
        existing = skill_lock["skills"].get(snap.name)
        use_git_tree = existing is not None and folder_hash_kind(existing) == KIND_GIT_TREE
        folder_hash = snap.git_tree if use_git_tree else snap.files_sha256
        changed = upsert_local_entry(skill_lock, snap.name, snap.folder, folder_hash, now)
        entry = grimoire_entry(
            snap.folder, snap.declaration, snap.declaration_hash, snap.manifest, snap.tree_hash
        )
        changed = changed or grimoire["skills"].get(snap.name) != entry
        grimoire["skills"][snap.name] = entry
        recorder.locked_hashes(snap.name, skill_lock["skills"][snap.name], entry)
        recorder.outcome(snap.name, "lock", "locked", snapshot=snap)
        results.append(Locked(snap, folder_hash, changed))
    # grimoire first: if the second write never happens, verify sees the mismatch and refuses
    write_atomically(grimoire_path, serialize_grimoire(grimoire))
    write_skill_lock(lock_path, skill_lock)
    return results
