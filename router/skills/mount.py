"""`skills mount`: copy a verified skill into a task's skill folder, atomically.

The copy is made in a hidden staging folder beside the target, hashed again (so a file
changed between verification and copy is caught), then renamed into place in one step:
a half-copied skill is never visible under the target name. Any failure removes the
staging folder and leaves no target.
"""

import os
import re
import shutil
import tempfile
from pathlib import Path

from router.skills.errors import SkillError
from router.skills.records import SkillRecorder
from router.skills.snapshot import snapshot_skill
from router.skills.verify import Verdict, compare_manifests, verify_skill

MOUNTED_DIR_MODE = 0o755
MOUNTED_FILE_MODE = 0o644
MOUNTED_EXEC_MODE = 0o755


class SkillRefused(SkillError):
    def __init__(self, skill: str, differences: list[str]):
        self.skill = skill
        self.differences = differences
        super().__init__(f"skill {skill!r} refused: " + "; ".join(differences))


def mounted_folder_name(skill: str) -> str:
    """The folder name the skills CLI installs a skill under (its sanitizeName rule), so a
    mounted skill sits where agents expect it."""
    name = re.sub(r"[^a-z0-9._]+", "-", skill.lower())
    name = re.sub(r"^[.\-]+|[.\-]+$", "", name)[:255]
    return name or "unnamed-skill"


def mount_skill(name: str, into: Path, skill_lock: dict, grimoire: dict, recorder: SkillRecorder) -> Path:
    verdict = verify_skill(name, skill_lock, grimoire)
    target = into.absolute() / mounted_folder_name(name)
    if verdict.verified and (target.exists() or target.is_symlink()):
        verdict.differences.append(f"mount target {target} already exists; remove it to mount again")
    if not verdict.verified:
        _refuse(recorder, verdict, target)
    try:
        into.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.mounting-", dir=target.parent))
    except OSError as exc:
        verdict.differences.append(f"cannot create a staging folder in {into}: {exc}")
        _refuse(recorder, verdict, target)
    try:
        _copy_entries(verdict, staging)
        copied = snapshot_skill(staging)
        locked = grimoire["skills"][name]
        drift = compare_manifests(locked["files"], copied.manifest)
        if copied.declaration_hash != locked["declaration_hash"] and not drift:
            drift.append("declaration changed")
        if drift:
            verdict.differences += [f"changed while being copied: {d}" for d in drift]
            _refuse(recorder, verdict, target)
        os.chmod(staging, MOUNTED_DIR_MODE)
        os.rename(staging, target)
    except SkillRefused:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    except (OSError, SkillError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        verdict.differences.append(f"copy failed, nothing mounted: {exc}")
        _refuse(recorder, verdict, target)
    except BaseException:  # interrupted: still leave nothing half-copied behind
        shutil.rmtree(staging, ignore_errors=True)
        raise
    recorder.outcome(name, "mount", "mounted", snapshot=verdict.snapshot, target=target)
    return target


def _copy_entries(verdict: Verdict, staging: Path) -> None:
    # only a verified skill is copied, and verification always leaves its snapshot
    assert verdict.snapshot is not None, "copying a skill that was not verified"
    # sorted so a failure part-way is reproducible (and tests can place it)
    for entry in sorted(verdict.snapshot.entries, key=lambda e: e.path):
        destination = staging / entry.path
        destination.parent.mkdir(parents=True, exist_ok=True)
        if entry.kind == "symlink":
            assert entry.link_target is not None, "folder_scan reads every symlink's target"
            os.symlink(entry.link_target, destination)
        else:
            shutil.copyfile(entry.absolute, destination)
            os.chmod(destination, MOUNTED_EXEC_MODE if entry.executable else MOUNTED_FILE_MODE)
    for directory in sorted({p for p in staging.rglob("*") if p.is_dir() and not p.is_symlink()}):
        os.chmod(directory, MOUNTED_DIR_MODE)


def _refuse(recorder: SkillRecorder, verdict: Verdict, target: Path):
    recorder.outcome(
        verdict.skill,
        "mount",
        "refused",
        detail="\n".join(verdict.differences),
        folder=verdict.folder,
        snapshot=verdict.snapshot,
        target=target,
    )
    raise SkillRefused(verdict.skill, verdict.differences)
