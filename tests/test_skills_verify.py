"""Fail-closed: each kind of tampering is refused, named, recorded, and mounts nothing."""

import json
import os
import shutil
from pathlib import Path

import pytest

from router.db import connect, query_dicts
from tests.skills_support import context_router, make_skill

SKILL = "tamper-me"


@pytest.fixture
def locked(tmp_path):
    """One skill, locked into both files; returns paths for the test to break things."""
    folder = make_skill(
        tmp_path / "src" / "Tamper_Me",
        SKILL,
        files={
            "ref/Guide.md": "guide\n",
            "ref/deep/notes.txt": "notes\n",
            "scripts/run.sh": "#!/bin/sh\n",
            "data.json": "{}\n",
        },
    )
    (folder / "ref" / "alias.md").symlink_to("Guide.md")
    paths = {
        "folder": folder,
        "lock": tmp_path / "locks" / ".skill-lock.json",
        "grimoire": tmp_path / "locks" / "grimoire.lock",
        "db": tmp_path / "router.db",
        "into": tmp_path / "task" / "skills",
    }
    code, _, err = context_router("skills", "lock", folder, *_lock_args(paths))
    assert code == 0, err
    return paths


def _lock_args(paths):
    return ["--lock", paths["lock"], "--grimoire", paths["grimoire"], "--db", paths["db"]]


def _verify(paths):
    return context_router("skills", "verify", *_lock_args(paths))


def _mount(paths, name=SKILL):
    return context_router("skills", "mount", name, "--into", paths["into"], *_lock_args(paths))


def _rows(paths, action):
    conn = connect(paths["db"])
    try:
        return query_dicts(conn, "SELECT * FROM skill_verifications WHERE action = ? ORDER BY id", (action,))
    finally:
        conn.close()


def _assert_refused(paths, *expected: str):
    code, out, _ = _verify(paths)
    assert code == 1 and f"REFUSED {SKILL}" in out
    for text in expected:
        assert text in out, out
    code, _, err = _mount(paths)
    assert code == 1 and "nothing mounted" in err
    for text in expected:
        assert text in err, err
    assert not paths["into"].exists() or not any(paths["into"].iterdir())  # no target, no staging
    refusals = [r for r in _rows(paths, "mount") if r["outcome"] == "refused"]
    assert len(refusals) == 1 and refusals[0]["skill"] == SKILL
    for text in expected:
        assert text in refusals[0]["detail"]
    assert _rows(paths, "verify")[-1]["outcome"] == "refused"


def test_untouched_skill_verifies_and_mounts(locked):
    code, out, _ = _verify(locked)
    assert code == 0 and out.strip() == f"verified {SKILL}"
    code, out, err = _mount(locked)
    assert code == 0, err
    target = locked["into"] / SKILL
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == sorted(
        p.relative_to(locked["folder"]).as_posix() for p in locked["folder"].rglob("*")
    )
    assert (target / "ref" / "alias.md").is_symlink()
    assert (target / "ref" / "alias.md").read_text() == "guide\n"
    assert [r["outcome"] for r in _rows(locked, "mount")] == ["mounted"]
    assert _rows(locked, "mount")[0]["target"] == str(target)


def test_changed_file_is_refused(locked):
    (locked["folder"] / "ref" / "deep" / "notes.txt").write_text("notes, edited\n")
    _assert_refused(locked, "file changed: ref/deep/notes.txt", ".skill-lock.json skillFolderHash differs")


def test_added_file_is_refused(locked):
    (locked["folder"] / "ref" / "extra.md").write_text("sneaked in\n")
    _assert_refused(locked, "file added: ref/extra.md", "declaration changed: file list")


def test_removed_file_is_refused(locked):
    (locked["folder"] / "data.json").unlink()
    _assert_refused(locked, "file removed: data.json")


def test_renamed_file_is_refused(locked):
    (locked["folder"] / "ref" / "Guide.md").rename(locked["folder"] / "ref" / "guide.md")
    _assert_refused(locked, "file renamed: ref/Guide.md -> ref/guide.md")


def test_changed_declaration_is_refused(locked):
    skill_md = locked["folder"] / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("A test skill.", "Now exfiltrates secrets."))
    _assert_refused(locked, "declaration changed: front matter description", "file changed: SKILL.md")


def test_executable_bit_change_is_refused(locked):
    os.chmod(locked["folder"] / "scripts" / "run.sh", 0o755)
    _assert_refused(locked, "executable bit changed: scripts/run.sh")


def test_symlink_escaping_the_folder_is_refused(locked, tmp_path):
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("secret\n")
    alias = locked["folder"] / "ref" / "alias.md"
    alias.unlink()
    alias.symlink_to(Path("..") / ".." / ".." / "outside-secret.txt")
    _assert_refused(locked, "symlink escapes the folder: ref/alias.md", "symlink changed: ref/alias.md")


def test_absolute_symlink_added_is_refused(locked):
    (locked["folder"] / "passwd").symlink_to("/etc/passwd")
    _assert_refused(locked, "symlink escapes the folder: passwd (absolute target", "file added: passwd")


def test_symlink_chain_resolving_outside_is_refused(locked):
    # each link looks inside by its text; together they climb above the folder
    (locked["folder"] / "here").symlink_to(".")
    (locked["folder"] / "up").symlink_to("here/..")
    _assert_refused(locked, "symlink escapes the folder: up")


def test_tampered_skill_lock_hash_alone_is_refused(locked):
    doc = json.loads(locked["lock"].read_text())
    doc["skills"][SKILL]["skillFolderHash"] = "0" * 64
    locked["lock"].write_text(json.dumps(doc, indent=2))
    _assert_refused(locked, ".skill-lock.json skillFolderHash differs")


def test_hand_edited_grimoire_entry_is_refused(locked):
    doc = json.loads(locked["grimoire"].read_text())
    doc["skills"][SKILL]["declaration"]["front_matter"]["description"] = "edited in the lock"
    locked["grimoire"].write_text(json.dumps(doc))
    _assert_refused(locked, "grimoire.lock entry inconsistent: declaration_hash")


def test_skill_missing_from_either_lock_is_refused(locked):
    doc = json.loads(locked["lock"].read_text())
    del doc["skills"][SKILL]
    locked["lock"].write_text(json.dumps(doc, indent=2))
    _assert_refused(locked, "not in .skill-lock.json")


def test_deleted_folder_is_refused(locked):
    shutil.rmtree(locked["folder"])
    _assert_refused(locked, "folder unusable")


def test_unknown_skill_is_refused_and_recorded(locked):
    code, _, err = _mount(locked, name="never-locked")
    assert code == 1 and "not in grimoire.lock" in err and "not in .skill-lock.json" in err
    assert _rows(locked, "mount")[-1]["skill"] == "never-locked"


def test_existing_target_is_not_overwritten(locked):
    assert _mount(locked)[0] == 0
    (locked["into"] / SKILL / "local-note.txt").write_text("mine\n")
    code, _, err = _mount(locked)
    assert code == 1 and "already exists" in err
    assert (locked["into"] / SKILL / "local-note.txt").read_text() == "mine\n"


def test_lock_refuses_an_escaping_symlink_and_writes_nothing(tmp_path):
    good = make_skill(tmp_path / "good", "good")
    bad = make_skill(tmp_path / "bad", "bad")
    (bad / "escape").symlink_to("/etc")
    lock, grimoire = tmp_path / "l" / ".skill-lock.json", tmp_path / "l" / "grimoire.lock"
    code, _, err = context_router(
        "skills", "lock", good, bad, "--lock", lock, "--grimoire", grimoire, "--db", tmp_path / "r.db"
    )
    assert code == 2 and "refusing to lock skill 'bad'" in err and "escape" in err
    assert not lock.exists() and not grimoire.exists()


def test_lock_refuses_a_folder_without_skill_md(tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = context_router(
        "skills",
        "lock",
        tmp_path / "empty",
        "--lock",
        tmp_path / "l.json",
        "--grimoire",
        tmp_path / "g.lock",
        "--db",
        tmp_path / "r.db",
    )
    assert code == 2 and "no SKILL.md" in err and str(tmp_path / "empty") in err


def test_relock_after_a_change_is_trusted_again(locked):
    (locked["folder"] / "data.json").write_text('{"v": 2}\n')
    assert _verify(locked)[0] == 1
    installed_at = json.loads(locked["lock"].read_text())["skills"][SKILL]["installedAt"]
    code, out, _ = context_router("skills", "lock", locked["folder"], *_lock_args(locked))
    assert code == 0 and out.startswith(f"locked {SKILL}")
    assert json.loads(locked["lock"].read_text())["skills"][SKILL]["installedAt"] == installed_at
    assert _verify(locked)[0] == 0


def test_unreadable_lock_file_is_a_clear_error(locked):
    locked["lock"].write_text('{"version": 2, "skills": {}}')
    code, _, err = _verify(locked)
    assert code == 2 and "version is 2" in err and str(locked["lock"]) in err


def test_entry_with_unusable_hash_fails_only_its_skill(locked, tmp_path):
    other = make_skill(tmp_path / "other", "other-skill")
    assert context_router("skills", "lock", other, *_lock_args(locked))[0] == 0
    doc = json.loads(locked["lock"].read_text())
    doc["skills"][SKILL]["skillFolderHash"] = ""  # what the CLI writes for well-known sources
    locked["lock"].write_text(json.dumps(doc, indent=2))
    code, out, _ = _verify(locked)
    assert code == 1 and "verified other-skill" in out
    assert "skillFolderHash '' is not a hash this router can check" in out


def test_mount_into_a_file_is_a_recorded_refusal(locked):
    locked["into"].parent.mkdir(parents=True)
    locked["into"].write_text("not a folder\n")
    code, _, err = _mount(locked)
    assert code == 1 and "cannot create a staging folder" in err
    assert _rows(locked, "mount")[-1]["outcome"] == "refused"
    assert locked["into"].read_text() == "not a folder\n"
