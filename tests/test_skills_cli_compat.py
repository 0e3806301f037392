"""Compatibility with the real `skills` CLI (npm skills@1.7.4): its .skill-lock.json
verifies with our code, our hashes equal its skillFolderHash, and it accepts the lock
files we write."""

import json
from pathlib import Path

import pytest

from router.skills.folder_scan import scan_folder
from router.skills.skill_lock import default_lock_path, read_skill_lock, serialize
from router.skills.tree_hash import cli_folder_hash
from tests.skills_support import TRICKY_NAMES, context_router, make_skill, run_skills_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cli_world(tmp_path_factory):
    """Skills under one source folder, one of ours locked first into the CLI's default
    global lock, then all installed by the real CLI (one call) into the same HOME."""
    root = tmp_path_factory.mktemp("cli-world")
    home = root / "home"
    home.mkdir()
    source = root / "source" / "skills"
    tricky = make_skill(
        source / "Tricky.Names (v2)",
        "Tricky.Names",
        files={name: f"content of {name}\n" for name in TRICKY_NAMES},
    )
    nested = make_skill(
        source / "deep-nest",
        "deep-nest",
        description='"quoted: punctuation, too"',
        files={
            "a/b/c/d/e.txt": "deep\n",
            "a/B/C.md": "case\n",
            "node_modules/dep/index.js": "skipped by the CLI hash\n",
        },
    )
    (nested / "link-inside.md").symlink_to("a/B/C.md")  # the CLI hash leaves symlinks out
    ours = make_skill(root / "ours" / "Ours_First", "ours-first", files={"ref/Notes.md": "n\n"})
    lock_path = default_lock_path({"HOME": str(home)})
    grimoire_path = root / "grimoire.lock"
    db = root / "router.db"
    code, _out, err = context_router(
        "skills", "lock", ours, "--lock", lock_path, "--grimoire", root / "ours.grimoire.lock", "--db", db
    )
    assert code == 0, err
    ours_entry_before = json.loads(lock_path.read_text())["skills"]["ours-first"]
    work = root / "work"
    work.mkdir()
    result = run_skills_cli(
        ["add", str(source.parent), "-g", "-y", "-a", "claude-code", "--copy"], home=home, cwd=work
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return {
        "root": root,
        "home": home,
        "lock": lock_path,
        "grimoire": grimoire_path,
        "db": db,
        "folders": {"Tricky.Names": tricky, "deep-nest": nested, "ours-first": ours},
        "ours_entry_before": ours_entry_before,
    }


def test_cli_writes_its_global_lock_where_default_lock_path_says(cli_world):
    assert cli_world["lock"] == cli_world["home"] / ".agents" / ".skill-lock.json"
    doc = read_skill_lock(cli_world["lock"])
    assert doc["version"] == 3
    assert {"Tricky.Names", "deep-nest", "ours-first"} <= set(doc["skills"])


def test_our_folder_hash_equals_the_cli_skill_folder_hash(cli_world):
    doc = read_skill_lock(cli_world["lock"])
    for name in ("Tricky.Names", "deep-nest"):
        entry = doc["skills"][name]
        assert entry["sourceType"] == "local"
        assert cli_folder_hash(scan_folder(cli_world["folders"][name])) == entry["skillFolderHash"], name


def test_code_point_order_would_give_a_different_hash(cli_world):
    """The trap is real for these names: sorting by code point does not give the CLI's hash."""
    import hashlib

    entries = [e for e in scan_folder(cli_world["folders"]["Tricky.Names"]) if e.kind == "file"]
    naive = hashlib.sha256()
    for entry in sorted(entries, key=lambda e: e.path):
        naive.update(entry.path.encode() + entry.absolute.read_bytes())
    locked = read_skill_lock(cli_world["lock"])["skills"]["Tricky.Names"]["skillFolderHash"]
    assert naive.hexdigest() != locked


def test_cli_kept_the_entry_we_wrote(cli_world):
    """The CLI read our lock file as valid (else it starts an empty one) and rewrote our
    entry untouched."""
    doc = read_skill_lock(cli_world["lock"])
    assert doc["skills"]["ours-first"] == cli_world["ours_entry_before"]


def test_our_serializer_gives_the_cli_bytes(cli_world):
    text = cli_world["lock"].read_text(encoding="utf-8")
    assert serialize(json.loads(text)) == text


def test_cli_written_lock_verifies_and_mounts(cli_world, tmp_path):
    _root, lock = cli_world["root"], cli_world["lock"]
    snapshot = lock.read_bytes()
    # grimoire entries for the CLI's skills, written through a scratch .skill-lock.json so
    # the CLI's own file is what verify reads
    scratch_lock = tmp_path / "scratch" / ".skill-lock.json"
    folders = [cli_world["folders"][n] for n in ("Tricky.Names", "deep-nest")]
    code, _, err = context_router(
        "skills",
        "lock",
        *folders,
        "--lock",
        scratch_lock,
        "--grimoire",
        cli_world["grimoire"],
        "--db",
        cli_world["db"],
    )
    assert code == 0, err
    assert (
        read_skill_lock(scratch_lock)["skills"]["deep-nest"]["skillFolderHash"]
        == read_skill_lock(lock)["skills"]["deep-nest"]["skillFolderHash"]
    )

    code, out, err = context_router(
        "skills",
        "verify",
        "Tricky.Names",
        "deep-nest",
        "--lock",
        lock,
        "--grimoire",
        cli_world["grimoire"],
        "--db",
        cli_world["db"],
    )
    assert code == 0, out + err
    assert "verified Tricky.Names" in out and "verified deep-nest" in out

    into = tmp_path / "task-skills"
    code, out, err = context_router(
        "skills",
        "mount",
        "Tricky.Names",
        "--into",
        into,
        "--lock",
        lock,
        "--grimoire",
        cli_world["grimoire"],
        "--db",
        cli_world["db"],
    )
    assert code == 0, err
    mounted = into / "tricky.names"  # the folder name the CLI itself installs it under
    assert (cli_world["home"] / ".claude" / "skills" / "tricky.names").is_dir()
    assert (
        cli_folder_hash(scan_folder(mounted))
        == read_skill_lock(lock)["skills"]["Tricky.Names"]["skillFolderHash"]
    )
    assert lock.read_bytes() == snapshot  # verify and mount never write the lock


def test_verify_with_default_lock_path_from_home(cli_world, monkeypatch):
    """Without --lock the CLI's global lock under $HOME is used, grimoire.lock beside it."""
    monkeypatch.setenv("HOME", str(cli_world["home"]))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    before = cli_world["lock"].read_text(encoding="utf-8")
    code, out, err = context_router(
        "skills", "lock", cli_world["folders"]["ours-first"], "--db", cli_world["db"]
    )
    assert code == 0, err
    # same hash as the entry already there: the CLI's file is rewritten byte for byte
    assert cli_world["lock"].read_text(encoding="utf-8") == before
    assert (cli_world["home"] / ".agents" / "grimoire.lock").exists()
    code, out, err = context_router("skills", "verify", "ours-first", "--db", cli_world["db"])
    assert code == 0, out + err


def test_xdg_state_home_moves_the_default_lock():
    assert default_lock_path({"XDG_STATE_HOME": "/state", "HOME": "/home/u"}) == Path(
        "/state/skills/.skill-lock.json"
    )
    assert default_lock_path({"HOME": "/home/u"}) == Path("/home/u/.agents/.skill-lock.json")
