"""Skills the CLI hashed from a GitHub tree: skillFolderHash is the folder's git tree id,
checked against a real git repository's `git rev-parse HEAD:<folder>`."""

import json
import os
import subprocess

from router.skills.skill_lock import read_skill_lock
from tests.skills_support import context_router, make_skill


def _git(*args, cwd):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_github_entry_verifies_by_git_tree_and_relock_keeps_its_kind(tmp_path):
    repo = tmp_path / "repo"
    folder = make_skill(
        repo / "skills" / "Gh-Skill",
        "gh-skill",
        files={"ref/A.md": "a\n", "ref/a.md": "lower\n", "tool.py": "print(1)\n"},
    )
    os.chmod(folder / "tool.py", 0o755)
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "-m", "skill", cwd=repo)
    tree_id = _git("rev-parse", "HEAD:skills/Gh-Skill", cwd=repo)

    lock, grimoire, db = tmp_path / ".skill-lock.json", tmp_path / "grimoire.lock", tmp_path / "r.db"
    args = ["--lock", lock, "--grimoire", grimoire, "--db", db]
    assert context_router("skills", "lock", folder, *args)[0] == 0
    # the entry as the CLI writes it for `skills add owner/repo`
    doc = json.loads(lock.read_text())
    doc["skills"]["gh-skill"] = {
        "source": "owner/repo",
        "sourceType": "github",
        "sourceUrl": "https://github.com/owner/repo.git",
        "skillPath": "skills/Gh-Skill/SKILL.md",
        "skillFolderHash": tree_id,
        "installedAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-01T00:00:00.000Z",
    }
    lock.write_text(json.dumps(doc, indent=2))
    code, out, err = context_router("skills", "verify", *args)
    assert code == 0, out + err

    (folder / "ref" / "a.md").write_text("changed\n")
    code, out, _ = context_router("skills", "verify", *args)
    assert code == 1 and "skillFolderHash differs (git-tree" in out

    assert context_router("skills", "lock", folder, *args)[0] == 0
    _git("commit", "-q", "-am", "edit", cwd=repo)
    entry = read_skill_lock(lock)["skills"]["gh-skill"]
    assert entry["sourceType"] == "github" and entry["skillPath"] == "skills/Gh-Skill/SKILL.md"
    assert entry["skillFolderHash"] == _git("rev-parse", "HEAD:skills/Gh-Skill", cwd=repo)
    assert context_router("skills", "verify", *args)[0] == 0
