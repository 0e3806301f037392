"""`context-router skills lock|verify|mount`: fail-closed skill locks and mounting."""

import argparse
import json
import sys
from pathlib import Path

from router.commands import add_db_option
from router.db import connect
from router.paths import resolve_db_path
from router.skills.grimoire import DEFAULT_GRIMOIRE_NAME, read_grimoire
from router.skills.locking import lock_skills
from router.skills.mount import SkillRefused, mount_skill
from router.skills.records import SkillRecorder
from router.skills.skill_lock import LOCK_FILE_NAME, default_lock_path, read_skill_lock
from router.skills.verify import verify_all

EXIT_REFUSED = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    skills = subparsers.add_parser(
        "skills",
        help="lock, verify and mount agent skills (fail-closed)",
        description="Skills are verified against both .skill-lock.json and grimoire.lock; "
        "a skill that differs in any way is refused and the refusal recorded.",
    )
    actions = skills.add_subparsers(dest="skills_command", required=True, metavar="ACTION")

    lock = actions.add_parser("lock", help="hash skill folders into both lock files")
    lock.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="a folder with a SKILL.md")
    lock.set_defaults(handler=run_lock)

    verify = actions.add_parser("verify", help="check skills against both locks")
    verify.add_argument("names", nargs="*", metavar="NAME", help="only these skills (default: all)")
    verify.add_argument("--json", action="store_true", help="JSON output")
    verify.set_defaults(handler=run_verify)

    mount = actions.add_parser("mount", help="copy a verified skill into a folder, atomically")
    mount.add_argument("name", metavar="NAME", help="skill name as locked")
    mount.add_argument("--into", type=Path, required=True, metavar="DIR", help="the task's skill folder")
    mount.set_defaults(handler=run_mount)

    for parser in (lock, verify, mount):
        add_db_option(parser)
        parser.add_argument(
            "--lock",
            type=Path,
            metavar="FILE",
            help=f"the {LOCK_FILE_NAME} (default: the skills CLI's global one, now {default_lock_path()})",
        )
        parser.add_argument(
            "--grimoire",
            type=Path,
            metavar="FILE",
            help=f"the grimoire.lock (default: {DEFAULT_GRIMOIRE_NAME} beside the {LOCK_FILE_NAME})",
        )


def _lock_paths(args: argparse.Namespace) -> tuple[Path, Path]:
    lock_path = args.lock if args.lock is not None else default_lock_path()
    grimoire_path = args.grimoire if args.grimoire is not None else lock_path.parent / DEFAULT_GRIMOIRE_NAME
    return lock_path, grimoire_path


def run_lock(args: argparse.Namespace) -> int:
    lock_path, grimoire_path = _lock_paths(args)
    conn = connect(resolve_db_path(args.db))
    recorder = SkillRecorder(lock_path, grimoire_path)
    results = lock_skills(args.folders, lock_path, grimoire_path, recorder)
    recorder.write(conn)
    for item in results:
        state = "locked" if item.changed else "unchanged"
        print(
            f"{state} {item.snapshot.name}  skillFolderHash {item.folder_hash}  "
            f"declaration {item.snapshot.declaration_hash}"
        )
    return 0


def run_verify(args: argparse.Namespace) -> int:
    lock_path, grimoire_path = _lock_paths(args)
    skill_lock = read_skill_lock(lock_path)
    grimoire = read_grimoire(grimoire_path)
    conn = connect(resolve_db_path(args.db))
    recorder = SkillRecorder(lock_path, grimoire_path)
    verdicts = verify_all(skill_lock, grimoire, args.names)
    for verdict in verdicts:
        recorder.locked_hashes(
            verdict.skill, skill_lock["skills"].get(verdict.skill), grimoire["skills"].get(verdict.skill)
        )
        recorder.outcome(
            verdict.skill,
            "verify",
            "verified" if verdict.verified else "refused",
            detail="\n".join(verdict.differences),
            folder=verdict.folder,
            snapshot=verdict.snapshot,
        )
    recorder.write(conn)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "skill": v.skill,
                        "folder": v.folder,
                        "verified": v.verified,
                        "differences": v.differences,
                    }
                    for v in verdicts
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        for verdict in verdicts:
            if verdict.verified:
                print(f"verified {verdict.skill}")
            else:
                print(f"REFUSED {verdict.skill}")
                for difference in verdict.differences:
                    print(f"  - {difference}")
    return 0 if all(v.verified for v in verdicts) else EXIT_REFUSED


def run_mount(args: argparse.Namespace) -> int:
    lock_path, grimoire_path = _lock_paths(args)
    skill_lock = read_skill_lock(lock_path)
    grimoire = read_grimoire(grimoire_path)
    conn = connect(resolve_db_path(args.db))
    recorder = SkillRecorder(lock_path, grimoire_path)
    recorder.locked_hashes(args.name, skill_lock["skills"].get(args.name), grimoire["skills"].get(args.name))
    try:
        target = mount_skill(args.name, args.into, skill_lock, grimoire, recorder)
    except SkillRefused as refusal:
        recorder.write(conn)
        print(f"context-router skills mount: REFUSED {refusal.skill}; nothing mounted", file=sys.stderr)
        for difference in refusal.differences:
            print(f"  - {difference}", file=sys.stderr)
        return EXIT_REFUSED
    recorder.write(conn)
    print(f"mounted {args.name} at {target}")
    return 0
