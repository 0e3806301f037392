"""Rows for the SQLite file: what the locks hold per skill, and every outcome.

Each command writes its rows in one transaction, so a crash leaves all of them or none.
"""

from pathlib import Path

import apsw

from router.clock import utc_now_iso
from router.skills.skill_lock import folder_hash_kind
from router.skills.snapshot import SkillSnapshot

UPSERT_SKILL_HASHES = """
INSERT INTO skill_hashes (skill, folder, folder_hash, folder_hash_kind, declaration_hash,
                          tree_hash, lock_file, grimoire_file, recorded_at)
VALUES (:skill, :folder, :folder_hash, :folder_hash_kind, :declaration_hash,
        :tree_hash, :lock_file, :grimoire_file, :at)
ON CONFLICT (skill) DO UPDATE SET
    folder = excluded.folder, folder_hash = excluded.folder_hash,
    folder_hash_kind = excluded.folder_hash_kind, declaration_hash = excluded.declaration_hash,
    tree_hash = excluded.tree_hash, lock_file = excluded.lock_file,
    grimoire_file = excluded.grimoire_file, recorded_at = excluded.recorded_at
"""

INSERT_OUTCOME = """
INSERT INTO skill_verifications (at, skill, action, outcome, detail, folder, files_sha256,
                                 git_tree, declaration_hash, tree_hash, target)
VALUES (:at, :skill, :action, :outcome, :detail, :folder, :files_sha256,
        :git_tree, :declaration_hash, :tree_hash, :target)
"""


class SkillRecorder:
    """Collects a command's rows and writes them together."""

    def __init__(self, lock_file: Path, grimoire_file: Path):
        self.lock_file = str(lock_file)
        self.grimoire_file = str(grimoire_file)
        self._hashes: list[dict] = []
        self._outcomes: list[dict] = []

    def locked_hashes(self, skill: str, cli_entry: dict | None, grimoire_entry: dict | None) -> None:
        """What the two lock files say about a skill (either may be missing)."""
        if cli_entry is None and grimoire_entry is None:
            return
        folder = grimoire_entry["folder"] if grimoire_entry else (cli_entry or {}).get("sourceUrl")
        folder_hash = cli_entry.get("skillFolderHash") if cli_entry else None
        self._hashes.append(
            {
                "skill": skill,
                "folder": folder if isinstance(folder, str) else "",
                "folder_hash": folder_hash if isinstance(folder_hash, str) else None,
                "folder_hash_kind": folder_hash_kind(cli_entry) if cli_entry else None,
                "declaration_hash": grimoire_entry["declaration_hash"] if grimoire_entry else None,
                "tree_hash": grimoire_entry["tree_hash"] if grimoire_entry else None,
                "lock_file": self.lock_file,
                "grimoire_file": self.grimoire_file,
            }
        )

    def outcome(
        self,
        skill: str,
        action: str,
        outcome: str,
        *,
        detail: str = "",
        folder: str | None = None,
        snapshot: SkillSnapshot | None = None,
        target: Path | None = None,
    ) -> None:
        self._outcomes.append(
            {
                "skill": skill,
                "action": action,
                "outcome": outcome,
                "detail": detail,
                "folder": str(snapshot.folder) if snapshot else folder,
                "files_sha256": snapshot.files_sha256 if snapshot else None,
                "git_tree": snapshot.git_tree if snapshot else None,
                "declaration_hash": snapshot.declaration_hash if snapshot else None,
                "tree_hash": snapshot.tree_hash if snapshot else None,
                "target": str(target) if target else None,
            }
        )

    def write(self, conn: apsw.Connection) -> None:
        at = utc_now_iso()
        with conn:
            for row in self._hashes:
                conn.execute(UPSERT_SKILL_HASHES, {**row, "at": at})
            for row in self._outcomes:
                conn.execute(INSERT_OUTCOME, {**row, "at": at})
        self._hashes.clear()
        self._outcomes.clear()
