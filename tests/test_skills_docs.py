"""docs/skills.md documents every skills command, the grimoire.lock fields the code writes,
and its v_skills example query runs in the sqlite3 shell."""

import re
import shutil
import subprocess

from router.cli import build_parser
from router.skills.grimoire import grimoire_entry
from router.skills.snapshot import snapshot_skill
from tests.docs_support import doc_text
from tests.skills_support import context_router, make_skill

PAGE = doc_text("docs/skills.md")


def test_every_skills_action_is_documented():
    parser = build_parser()
    skills = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "skills")[1]
    actions = skills._subparsers._group_actions[0].choices
    assert set(actions) == {"lock", "verify", "mount"}
    for action in actions:
        assert f"context-router skills {action}" in PAGE
    for option in ("--lock FILE", "--grimoire FILE", "--into DIR"):
        assert option in PAGE


def test_grimoire_fields_written_are_documented(tmp_path):
    snap = snapshot_skill(make_skill(tmp_path / "s", "s", files={"a.txt": "a"}))
    entry = grimoire_entry(
        snap.folder, snap.declaration, snap.declaration_hash, snap.manifest, snap.tree_hash
    )
    for key in (
        list(entry) + list(entry["declaration"]) + ["grimoire_version", "blake3", "executable", "symlink"]
    ):
        assert f'"{key}"' in PAGE, key


def test_the_v_skills_query_runs_in_the_sqlite3_shell(tmp_path):
    folder = make_skill(tmp_path / "s", "doc-skill")
    db = tmp_path / "router.db"
    assert (
        context_router(
            "skills",
            "lock",
            folder,
            "--lock",
            tmp_path / "l.json",
            "--grimoire",
            tmp_path / "g.lock",
            "--db",
            db,
        )[0]
        == 0
    )
    query = re.search(r"sqlite3 -header -column router\.db '([^']*v_skills[^']*)'", PAGE).group(1)
    result = subprocess.run(
        [shutil.which("sqlite3"), "-readonly", str(db), query], capture_output=True, text=True, check=True
    )
    assert result.stdout.startswith("doc-skill|lock|locked|")
