"""Fail-closed verification of a skill against both locks: every difference is named.

A skill passes only when it is in both `.skill-lock.json` and `grimoire.lock`, its folder
matches the CLI's skillFolderHash, its declaration and every file match the grimoire entry,
and no symlink leaves the folder. Anything unreadable counts as a difference.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from router.hashing import content_hash
from router.skills.errors import SkillError
from router.skills.skill_lock import KIND_GIT_TREE, folder_hash_kind
from router.skills.snapshot import SkillSnapshot, snapshot_skill
from router.skills.tree_hash import manifest_tree_hash


@dataclass
class Verdict:
    skill: str
    folder: str | None
    differences: list[str] = field(default_factory=list)
    snapshot: SkillSnapshot | None = None

    @property
    def verified(self) -> bool:
        return not self.differences


def verify_all(skill_lock: dict, grimoire: dict, names: list[str] | None = None) -> list[Verdict]:
    """Verdicts for the named skills, or for every skill either lock knows."""
    if not names:
        names = sorted(set(skill_lock["skills"]) | set(grimoire["skills"]))
    return [verify_skill(name, skill_lock, grimoire) for name in names]


def verify_skill(name: str, skill_lock: dict, grimoire: dict) -> Verdict:
    cli_entry = skill_lock["skills"].get(name)
    locked = grimoire["skills"].get(name)
    verdict = Verdict(skill=name, folder=locked["folder"] if locked else None)
    if cli_entry is None:
        verdict.differences.append("not in .skill-lock.json")
    if locked is None:
        verdict.differences.append("not in grimoire.lock (its folder is unknown)")
        return verdict
    verdict.differences += _grimoire_self_check(locked)
    folder = Path(locked["folder"])
    try:
        current = snapshot_skill(folder)
    except SkillError as exc:
        verdict.differences.append(f"folder unusable: {exc}")
        return verdict
    verdict.snapshot = current
    verdict.differences += current.escapes
    verdict.differences += compare_manifests(locked["files"], current.manifest)
    verdict.differences += _declaration_differences(locked, current)
    if current.tree_hash != locked["tree_hash"] and not verdict.differences:
        verdict.differences.append("grimoire tree_hash differs")
    if cli_entry is not None:
        verdict.differences += _cli_hash_differences(cli_entry, current)
    return verdict


def _grimoire_self_check(locked: dict) -> list[str]:
    """A grimoire entry whose hashes do not match its own contents was edited by hand."""
    problems = []
    try:
        if content_hash(locked["declaration"]) != locked["declaration_hash"]:
            problems.append(
                "grimoire.lock entry inconsistent: declaration_hash does not match its declaration"
            )
        if manifest_tree_hash(locked["files"]) != locked["tree_hash"]:
            problems.append("grimoire.lock entry inconsistent: tree_hash does not match its files")
    except Exception as exc:  # not canonicalizable: as bad as a mismatch
        problems.append(f"grimoire.lock entry unreadable: {exc}")
    return problems


def compare_manifests(locked: dict[str, dict], current: dict[str, dict]) -> list[str]:
    removed = sorted(set(locked) - set(current))
    added = sorted(set(current) - set(locked))
    out = []
    for old in list(removed):
        twin = next((new for new in added if current[new] == locked[old]), None)
        if twin is not None:
            out.append(f"file renamed: {old} -> {twin}")
            removed.remove(old)
            added.remove(twin)
    out += [f"file removed: {path}" for path in removed]
    out += [f"file added: {path}" for path in added]
    for path in sorted(set(locked) & set(current)):
        was, now = locked[path], current[path]
        if was == now:
            continue
        if "symlink" in was or "symlink" in now:
            out.append(f"symlink changed: {path} (was {_describe(was)}, now {_describe(now)})")
        elif was.get("blake3") != now.get("blake3"):
            out.append(f"file changed: {path}")
        else:
            out.append(f"executable bit changed: {path}")
    return out


def _describe(item: dict[str, Any]) -> str:
    return f"link to {item['symlink']!r}" if "symlink" in item else "a file"


def _declaration_differences(locked: dict, current: SkillSnapshot) -> list[str]:
    if current.declaration_hash == locked["declaration_hash"]:
        return []
    was = locked["declaration"]["front_matter"]
    now = current.front_matter
    keys = sorted(k for k in set(was) | set(now) if was.get(k, _MISSING) != now.get(k, _MISSING))
    if keys:
        return [f"declaration changed: front matter {', '.join(keys)}"]
    return ["declaration changed: file list"]


_MISSING = object()


def _cli_hash_differences(cli_entry: dict, current: SkillSnapshot) -> list[str]:
    kind = folder_hash_kind(cli_entry)
    locked_hash = cli_entry.get("skillFolderHash", "")
    if kind is None:
        return [f".skill-lock.json skillFolderHash {locked_hash!r} is not a hash this router can check"]
    actual = current.git_tree if kind == KIND_GIT_TREE else current.files_sha256
    if actual != locked_hash:
        return [
            f".skill-lock.json skillFolderHash differs ({kind}: locked {locked_hash[:12]}, folder {actual[:12]})"
        ]
    return []
