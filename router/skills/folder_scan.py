"""What is in a skill folder: its regular files and symlinks, by portable relative path.

One walk serves every hash. Directories named `.git` are VCS metadata, never skill
content, and are not entered (the `skills` CLI and git agree). Symlinks are listed, not
followed; any other kind of file (fifo, socket, device) makes the folder unusable.
"""

import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from router.skills.errors import SkillFolderError

SKIPPED_DIRS = frozenset({".git"})
# The skills CLI's folder hash also skips these; the grimoire tree hash does not, so a
# change inside them is still caught.
CLI_SKIPPED_DIRS = frozenset({".git", "node_modules"})


@dataclass(frozen=True)
class Entry:
    # relative to the skill folder, '/'-separated on every platform (a backslash in a
    # name is turned into '/', as the skills CLI does)
    path: str
    absolute: Path
    kind: str  # 'file' | 'symlink'
    executable: bool = False
    link_target: str | None = None
    # under a directory the skills CLI does not hash
    cli_skipped: bool = False


def portable(relative: str) -> str:
    return relative.replace(os.sep, "/").replace("\\", "/")


def scan_folder(folder: Path) -> list[Entry]:
    """Every file and symlink under folder, in no particular order."""
    if not folder.is_dir():
        raise SkillFolderError(f"{folder}: not a directory")
    entries: list[Entry] = []
    _walk(folder, folder, False, entries)
    return entries


def _walk(base: Path, current: Path, cli_skipped: bool, out: list[Entry]) -> None:
    with os.scandir(current) as listing:
        children = list(listing)
    for child in children:
        absolute = Path(child.path)
        relative = portable(os.path.relpath(absolute, base))
        _require_utf8(base, relative)
        if child.is_symlink():
            out.append(
                Entry(
                    relative, absolute, "symlink", link_target=os.readlink(absolute), cli_skipped=cli_skipped
                )
            )
        elif child.is_dir(follow_symlinks=False):
            if child.name in SKIPPED_DIRS:
                continue
            _walk(base, absolute, cli_skipped or child.name in CLI_SKIPPED_DIRS, out)
        elif child.is_file(follow_symlinks=False):
            mode = child.stat(follow_symlinks=False).st_mode
            out.append(
                Entry(
                    relative, absolute, "file", executable=bool(mode & stat.S_IXUSR), cli_skipped=cli_skipped
                )
            )
        else:
            raise SkillFolderError(f"{base}: {relative} is not a regular file, directory or symlink")


def _require_utf8(base: Path, relative: str) -> None:
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        raise SkillFolderError(f"{base}: a file name is not valid UTF-8: {relative!r}") from None


def symlink_escape(folder: Path, entry: Entry) -> str | None:
    """Why a symlink leaves the folder, or None when it stays inside.

    Checked twice: by its text (an absolute target, or '..' climbing out, would point
    elsewhere once the folder is copied) and by the file system (a chain through other
    links that ends outside)."""
    target = entry.link_target or ""
    if posixpath.isabs(target) or Path(target).is_absolute():
        return f"absolute target {target!r}"
    lexical = posixpath.normpath(posixpath.join(posixpath.dirname(entry.path), portable(target)))
    if lexical == ".." or lexical.startswith("../"):
        return f"target {target!r} climbs out of the folder"
    root = folder.resolve()
    try:
        resolved = entry.absolute.resolve()
    except (RuntimeError, OSError) as exc:  # a symlink loop
        return f"target {target!r} cannot be resolved ({exc})"
    if resolved != root and root not in resolved.parents:
        return f"target {target!r} resolves to {resolved}, outside the folder"
    return None
