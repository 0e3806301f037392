"""The three folder hashes and the grimoire declaration, checked against their oracles:
node's localeCompare, git's tree ids, and RFC 8785 stability."""

import json
import os
import subprocess

import pytest

from router.hashing import content_hash
from router.skills.collation import locale_sorted
from router.skills.folder_scan import scan_folder
from router.skills.grimoire import build_declaration, read_front_matter, read_grimoire
from router.skills.snapshot import snapshot_skill
from router.skills.tree_hash import git_tree_sha
from tests.skills_support import TRICKY_NAMES, make_skill, node_binary

MORE_TRICKY = [
    "a",
    "A",
    "á",
    "Á",
    "ae",
    "æ",
    "Æ",
    "b",
    "a1",
    "a10",
    "a2",
    "a-1",
    "a_1",
    "a.1",
    "a 1",
    "ab",
    "aB",
    "Ab",
    "AB",
    "z",
    "Z",
    "ß",
    "ss",
    "SS",
    "ø",
    "o",
    "ö",
    "œ",
    "ı",
    "i",
    "I",
    "İ",
    "!",
    '"',
    "'",
    "*",
    "+",
    ",",
    ";",
    "=",
    "^",
    "`",
    "|",
    "{",
    "}",
    "%",
    "&",
    "0",
    "½",
    "²",
    "日本",
    "中文",
    "한국어",
    "кириллица",
    "Кириллица",
    "ελληνικά",
    "عربى",
    "emoji-😀",
    "x😀y",
    "dir/file",
    "dir-file",
    "dir_file",
    "dir.file",
    "dir file",
    "dir0",
    "dir/",
    "e\u0301",
    "é",
]


def test_locale_sorted_matches_node_locale_compare():
    names = sorted(set(TRICKY_NAMES + MORE_TRICKY))
    script = "const a = JSON.parse(process.argv[1]); a.sort((x, y) => x.localeCompare(y)); console.log(JSON.stringify(a));"
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_COLLATE")}
    env["LANG"] = "en_US.UTF-8"
    node_order = json.loads(
        subprocess.run(
            [str(node_binary()), "-e", script, json.dumps(names)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
    )
    ours = locale_sorted(names)

    # canonically equivalent spellings ('é' vs 'e\u0301') tie in ICU; node keeps input
    # order, we break the tie by code point: compare everything else exactly
    def without_ties(order):
        return [n for n in order if n not in ("é", "e\u0301")]

    assert without_ties(ours) == without_ties(node_order)
    assert sorted(names) != node_order  # plain sorted() is not the CLI's order


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_git_tree_sha_equals_git_rev_parse(tmp_path):
    repo = tmp_path / "repo"
    skill = make_skill(
        repo / "skills" / "Tree.Skill",
        "tree-skill",
        files={name: f"{name}\n" for name in TRICKY_NAMES} | {"empty.txt": ""},
    )
    (skill / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(skill / "run.sh", 0o755)
    (skill / "link").symlink_to("sub/Deep/z.py")
    (skill / "nested-empty" / "inner").mkdir(parents=True)  # git does not store empty dirs
    (skill / "foo").mkdir()
    (skill / "foo" / "x").write_text("x")
    (skill / "foo.txt").write_text("ordering of 'foo' tree vs 'foo.txt' blob")
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "skills", cwd=repo)
    expected = _git("rev-parse", "HEAD:skills/Tree.Skill", cwd=repo)
    assert git_tree_sha(scan_folder(skill)) == expected


def test_declaration_hash_ignores_key_order_and_path_separators():
    front = {"name": "s", "description": "d", "metadata": {"b": 1, "a": [1, 2]}}
    reordered = {"metadata": {"a": [1, 2], "b": 1}, "description": "d", "name": "s"}
    posix = build_declaration(front, ["sub/Deep/z.py", "SKILL.md", "a.txt"])
    windows = build_declaration(reordered, ["a.txt", "sub\\Deep\\z.py", "SKILL.md"])
    assert content_hash(posix) == content_hash(windows)
    assert content_hash(posix) != content_hash(build_declaration(front, ["SKILL.md", "a.txt"]))


def test_front_matter_key_order_in_skill_md_does_not_change_the_hash(tmp_path):
    one = make_skill(tmp_path / "one", "same", extra_front_matter="version: 2024-01-02\nlicense: MIT\n")
    two = tmp_path / "two"
    two.mkdir()
    (two / "SKILL.md").write_text(
        "---\nlicense: MIT\nversion: 2024-01-02\ndescription: A test skill.\nname: same\n---\nother body\n"
    )
    assert read_front_matter(one)["version"] == "2024-01-02"  # dates stay the text written
    assert snapshot_skill(one).declaration_hash == snapshot_skill(two).declaration_hash
    assert snapshot_skill(one).tree_hash != snapshot_skill(two).tree_hash  # bodies differ


def test_grimoire_written_with_backslashes_and_shuffled_keys_reads_the_same(tmp_path):
    skill = make_skill(tmp_path / "s", "s", files={"sub/a.txt": "a"})
    snap = snapshot_skill(skill)
    entry = {
        "tree_hash": snap.tree_hash,
        "files": {path.replace("/", "\\"): value for path, value in reversed(snap.manifest.items())},
        "declaration_hash": snap.declaration_hash,
        "folder": str(skill),
        "declaration": {
            "files": [p.replace("/", "\\") for p in reversed(snap.declaration["files"])],
            "front_matter": dict(reversed(snap.front_matter.items())),
        },
    }
    path = tmp_path / "grimoire.lock"
    path.write_text(json.dumps({"skills": {"s": entry}, "grimoire_version": 1}))
    loaded = read_grimoire(path)["skills"]["s"]
    assert loaded["files"] == snap.manifest
    assert content_hash(loaded["declaration"]) == snap.declaration_hash


@pytest.mark.parametrize("bad", ["version: 9007199254740993\n", "ratio: .nan\n"])
def test_front_matter_json_cannot_say_exactly_is_refused_with_its_file(tmp_path, bad):
    skill = make_skill(tmp_path / "bad", "bad", extra_front_matter=bad)
    with pytest.raises(Exception, match=r"SKILL\.md: front matter cannot be canonicalized"):
        snapshot_skill(skill)


def test_lock_serializer_matches_json_stringify():
    """Integer-like keys first (as JavaScript objects order them), escapes, non-ASCII and
    nesting exactly as JSON.stringify(JSON.parse(text), null, 2) gives them."""
    from router.skills.skill_lock import serialize

    doc = {
        "version": 3,
        "skills": {
            "zeta": {"source": '/src/ä ß \u2028 \u0001 "q" \\ /', "skillFolderHash": "", "n": [1, [], {}]},
            "10": {"source": "ten"},
            "2": {"source": "two"},
            "01": {"source": "not an index"},
            "4294967295": {"source": "too big for an index"},
        },
        "dismissed": {},
        "lastSelectedAgents": ["claude-code"],
    }
    text = json.dumps(doc)
    script = "process.stdout.write(JSON.stringify(JSON.parse(process.argv[1]), null, 2))"
    node_text = subprocess.run(
        [str(node_binary()), "-e", script, text], capture_output=True, text=True, check=True
    ).stdout
    assert serialize(json.loads(text)) == node_text
