"""The database file failing under a running router (issue 35, item 9), on a real router over
stdio: on a full disk (a real one: a small tmpfs filled to the last block) searches still
answer, calls are refused unforwarded, and every request made while full has its audit row
once space frees; a database file deleted under the router is said on stderr and in the
answer of every call that would write, instead of answered ok."""

import json
import shutil
import subprocess
import time
from pathlib import Path

import apsw
import pytest

from tests.db_rows import rows
from tests.facade_support import RawStdioClient, router_params

pytestmark = pytest.mark.slow

DISK_SIZE = "8m"
CALL = {"toolName": "get_current_time", "args": {"timezone": "UTC"}}


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of DISK_SIZE mounted in the test's temp dir (mounting needs root, as CI runs)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_SIZE}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk has no block left."""
    filler = disk / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError as exc:
            assert exc.errno == 28, exc  # ENOSPC
    return filler


def audit_of(db: Path) -> list[tuple[str, str]]:
    return [
        (r["meta_tool"], r["outcome"]) for r in rows(db, "SELECT meta_tool, outcome FROM audit ORDER BY id")
    ]


def audit_rows_read_only(db: Path) -> int:
    """How many audit rows the file holds, read without writing (the disk may be full)."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("SELECT count(*) FROM audit").fetchall()[0][0]
    finally:
        conn.close()


def wait_for_rows(db: Path, count: int, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while len(audit_of(db)) < count and time.monotonic() < deadline:
        time.sleep(0.2)


def test_on_a_full_disk_every_request_has_its_audit_row_once_space_frees(facade, small_disk, tmp_path):
    db = small_disk / "router.db"
    shutil.copy(facade.db, db)
    with (tmp_path / "stderr").open("wb") as stderr:
        params = router_params(db, facade.servers_file, facade.workspace)
        client = RawStdioClient(params, stderr=stderr)
        try:
            assert not client.call_tool("mcp_search_tools", {"query": "current time"}).get("isError")
            filler = fill(small_disk)
            searched = [client.call_tool("mcp_search_tools", {"query": "what time is it"}) for _ in range(5)]
            refused = [client.call_tool("mcp_call_tool", CALL) for _ in range(3)]
            client.write_raw(b'{"jsonrpc":"2.0","id":77,"method":"ping","error":{"code":1,"message":"x"}}\n')
            invalid = json.loads(client.read_line(timeout_s=10))
            assert audit_rows_read_only(db) == 1  # nothing written while full
            filler.unlink()
            wait_for_rows(db, 10)
            after = [client.call_tool("mcp_call_tool", CALL) for _ in range(2)]
        finally:
            client.close()
    for result in searched:  # a search reads: it still answers
        assert not result.get("isError") and json.loads(result["content"][0]["text"])["tools"]
    for result in refused:  # a call is never forwarded unaudited
        assert result["isError"] and "the disk is full" in result["content"][0]["text"], result
    assert invalid["id"] == 77 and invalid["error"]["code"] == -32600
    for result in after:
        assert not result.get("isError"), result
    assert audit_of(db) == (
        [("mcp_search_tools", "ok")] * 6
        + [("mcp_call_tool", "database_full")] * 3
        + [("(unreadable request)", "invalid_request")]
        + [("mcp_call_tool", "ok")] * 2
    )
    stamped = rows(db, "SELECT started_at, finished_at FROM audit ORDER BY id")
    assert all(row["finished_at"] >= row["started_at"] for row in stamped)


def test_a_database_file_deleted_under_the_router_is_said_on_stderr_and_in_every_answer_that_writes(
    facade, tmp_path
):
    stderr_path = tmp_path / "stderr"
    with stderr_path.open("wb") as stderr:
        params = router_params(facade.db, facade.servers_file, facade.workspace)
        client = RawStdioClient(params, stderr=stderr)
        try:
            assert not client.call_tool("mcp_search_tools", {"query": "current time"}).get("isError")
            facade.db.unlink()
            searched = client.call_tool("mcp_search_tools", {"query": "current time"})
            called = client.call_tool("mcp_call_tool", CALL)
            assert client.request("tools/list")["tools"]  # what writes nothing is still answered
            time.sleep(3)  # the watch looks every 2 s: stderr says so without any call too
        finally:
            client.close()
    logged = stderr_path.read_text()
    assert logged.count(f"ERROR router.facade.database: database {facade.db} was deleted") == 1
    for result in (searched, called):
        assert result["isError"], result
        text = result["content"][0]["text"]
        assert text.startswith(f"database {facade.db} was deleted while the router was running"), text
        assert "restore the file from a backup or build a new one" in text
    assert not facade.db.exists()  # no new, empty file was made in its place
    assert client.process.returncode == 0
