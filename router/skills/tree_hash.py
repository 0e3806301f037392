"""The three folder hashes: the skills CLI's, git's tree SHA, and the grimoire tree hash.

- `cli_folder_hash`: what the `skills` CLI (skills@1.7.x, `computeSkillFolderHash`) writes
  as `skillFolderHash` for a local source: SHA-256 over the regular files (symlinks and
  anything under `.git`/`node_modules` left out), sorted by JavaScript localeCompare of
  the relative path, feeding each path's UTF-8 bytes and then the file's bytes, with no
  separators.
- `git_tree_sha`: what it writes for a GitHub source: the git tree object id of the
  folder, the same as `git rev-parse HEAD:<folder>` on a checkout of it.
- `grimoire_manifest` / `manifest_tree_hash`: this project's own, blake3 per file plus
  each file's executable bit and each symlink's target, the whole canonicalized by
  RFC 8785, so nothing in the folder escapes it.
"""

import hashlib
from pathlib import Path

import blake3

from router.hashing import HASH_PREFIX, content_hash
from router.skills.collation import locale_compare_key
from router.skills.folder_scan import Entry

CHUNK = 1 << 20
GIT_FILE_MODE = b"100644"
GIT_EXECUTABLE_MODE = b"100755"
GIT_SYMLINK_MODE = b"120000"
GIT_TREE_MODE = b"40000"


def _chunks(path: Path):
    with open(path, "rb") as handle:
        while block := handle.read(CHUNK):
            yield block


def cli_folder_hash(entries: list[Entry]) -> str:
    files = [e for e in entries if e.kind == "file" and not e.cli_skipped]
    files.sort(key=lambda e: locale_compare_key(e.path))
    digest = hashlib.sha256()
    for entry in files:
        digest.update(entry.path.encode("utf-8"))
        for block in _chunks(entry.absolute):
            digest.update(block)
    return digest.hexdigest()


def _git_object_id(kind: bytes, body: bytes) -> bytes:
    return hashlib.sha1(kind + b" " + str(len(body)).encode() + b"\0" + body).digest()


def _git_blob_id(path: Path) -> bytes:
    size = path.stat().st_size
    digest = hashlib.sha1(b"blob " + str(size).encode() + b"\0")
    for block in _chunks(path):
        digest.update(block)
    return digest.digest()


def git_tree_sha(entries: list[Entry]) -> str:
    """Tree object id of the folder as git would store it (empty directories vanish, as
    they do in git)."""
    root: dict = {}
    for entry in entries:
        *dirs, name = entry.path.split("/")
        node = root
        for part in dirs:
            node = node.setdefault(part, {})
        node[name] = entry
    return _git_tree_id(root).hex()


def _git_tree_id(node: dict) -> bytes:
    rows = []
    for name, child in node.items():
        if isinstance(child, dict):
            rows.append((name.encode("utf-8") + b"/", GIT_TREE_MODE, name, _git_tree_id(child)))
        elif child.kind == "symlink":
            target = child.link_target.encode("utf-8", "surrogateescape")
            rows.append((name.encode("utf-8"), GIT_SYMLINK_MODE, name, _git_object_id(b"blob", target)))
        else:
            mode = GIT_EXECUTABLE_MODE if child.executable else GIT_FILE_MODE
            rows.append((name.encode("utf-8"), mode, name, _git_blob_id(child.absolute)))
    # git orders entries by name bytes, comparing a tree's name as if it ended in '/'
    rows.sort(key=lambda row: row[0])
    body = b"".join(mode + b" " + name.encode("utf-8") + b"\0" + oid for _, mode, name, oid in rows)
    return _git_object_id(b"tree", body)


def blake3_file(path: Path) -> str:
    digest = blake3.blake3()
    for block in _chunks(path):
        digest.update(block)
    return HASH_PREFIX + digest.hexdigest()


def grimoire_manifest(entries: list[Entry]) -> dict[str, dict]:
    """{path: {"blake3": ..., "executable": bool} | {"symlink": target}} for every entry."""
    manifest: dict[str, dict] = {}
    for entry in entries:
        if entry.kind == "symlink":
            manifest[entry.path] = {"symlink": entry.link_target}
        else:
            manifest[entry.path] = {"blake3": blake3_file(entry.absolute), "executable": entry.executable}
    return manifest


def manifest_tree_hash(manifest: dict[str, dict]) -> str:
    """b3: of the RFC 8785 bytes of the manifest; RFC 8785 sorts the paths itself."""
    return content_hash({"files": manifest})
