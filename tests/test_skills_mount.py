"""Mount is atomic: a copy that fails part-way leaves no target and no staging folder,
and the failure is a recorded refusal. Rows are readable with the sqlite3 shell."""

import os
import resource
import shutil
import signal
import subprocess
import sys

import pytest

from router.db import connect, query_dicts
from tests.conftest import project_env
from tests.skills_support import context_router, make_skill

FILE_SIZE_LIMIT = 256 * 1024


def _limit_file_size():
    # A real write failure part-way through the copy: files beyond the limit fail with
    # EFBIG (SIGXFSZ ignored, so write() returns the error instead of killing the process).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


@pytest.mark.slow
def test_failure_mid_copy_leaves_nothing_visible(tmp_path):
    folder = make_skill(
        tmp_path / "src" / "big",
        "big-skill",
        files={"a-small.md": "copied first\n", "b-small/inner.txt": "copied second\n"},
    )
    (folder / "z-large.bin").write_bytes(os.urandom(2 * FILE_SIZE_LIMIT))  # copied last, fails
    lock, grimoire, db = tmp_path / ".skill-lock.json", tmp_path / "grimoire.lock", tmp_path / "r.db"
    code, _, err = context_router(
        "skills", "lock", folder, "--lock", lock, "--grimoire", grimoire, "--db", db
    )
    assert code == 0, err
    into = tmp_path / "task-skills"
    into.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "router",
            "skills",
            "mount",
            "big-skill",
            "--into",
            str(into),
            "--lock",
            str(lock),
            "--grimoire",
            str(grimoire),
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        env=project_env(),
        preexec_fn=_limit_file_size,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "copy failed, nothing mounted" in result.stderr and "File too large" in result.stderr
    assert list(into.iterdir()) == []  # neither big-skill nor its staging folder
    conn = connect(db)
    row = query_dicts(conn, "SELECT * FROM v_skills WHERE skill = 'big-skill'")[0]
    assert (row["last_action"], row["last_outcome"]) == ("mount", "refused")
    assert "copy failed" in row["last_detail"] and row["last_target"] == str(into / "big-skill")
    # without the limit the same mount succeeds
    code, _out, err = context_router(
        "skills", "mount", "big-skill", "--into", into, "--lock", lock, "--grimoire", grimoire, "--db", db
    )
    assert code == 0, err
    assert (into / "big-skill" / "z-large.bin").read_bytes() == (folder / "z-large.bin").read_bytes()
    assert [p.name for p in into.iterdir()] == ["big-skill"]


def test_rows_and_view_in_the_sqlite3_shell(tmp_path):
    folder = make_skill(tmp_path / "s", "shell-skill", files={"x.txt": "x\n"})
    lock, grimoire, db = tmp_path / ".skill-lock.json", tmp_path / "grimoire.lock", tmp_path / "r.db"
    assert (
        context_router("skills", "lock", folder, "--lock", lock, "--grimoire", grimoire, "--db", db)[0] == 0
    )
    assert context_router("skills", "verify", "--lock", lock, "--grimoire", grimoire, "--db", db)[0] == 0
    (folder / "x.txt").write_text("changed\n")
    assert context_router("skills", "verify", "--lock", lock, "--grimoire", grimoire, "--db", db)[0] == 1

    conn = connect(db)
    history = query_dicts(
        conn, "SELECT action, outcome, detail, files_sha256 FROM skill_verifications ORDER BY id"
    )
    assert [(r["action"], r["outcome"]) for r in history] == [
        ("lock", "locked"),
        ("verify", "verified"),
        ("verify", "refused"),
    ]
    assert history[2]["detail"].splitlines()[0] == "file changed: x.txt"
    assert history[0]["files_sha256"] == history[1]["files_sha256"] != history[2]["files_sha256"]
    hashes = query_dicts(conn, "SELECT * FROM skill_hashes")[0]
    assert hashes["folder_hash"] == history[0]["files_sha256"]
    assert hashes["folder_hash_kind"] == "sha256-files" and hashes["lock_file"] == str(lock)
    conn.close()

    sqlite3 = shutil.which("sqlite3")
    assert sqlite3, "the sqlite3 shell (Debian package sqlite3) is needed to check the view"
    shell = subprocess.run(
        [sqlite3, "-readonly", str(db), "SELECT skill, last_action, last_outcome FROM v_skills"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shell.stdout.strip() == "shell-skill|verify|refused"
