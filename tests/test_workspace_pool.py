"""The backend pool keyed by (server, workspace) for servers that name ${WORKSPACE}: real
mcp-server-git and mcp-server-time processes, started in-process by a real BackendPool."""

import pytest

from router.backends.servers import load_servers
from router.facade.backends import BackendPool
from router.facade.placeholders import Placeholders
from tests.facade_support import alive, make_workspace, wait_until, write_servers_toml

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_one_git_per_workspace_one_time_for_all_and_a_changed_config_restarts_each(tmp_path):
    servers_file = write_servers_toml(tmp_path / "servers.toml", state_dir=tmp_path)
    own, other = make_workspace(tmp_path / "own"), make_workspace(tmp_path / "other")
    async with BackendPool(load_servers(servers_file), Placeholders(own, tmp_path / "data")) as pool:
        assert pool.workspace_matters
        assert pool.get("time", other) is pool.get("time") is pool.get("time", own)
        assert pool.get("git", own) is pool.get("git")
        git_other = pool.get("git", other)
        assert (
            git_other is not None and git_other is not pool.get("git") and git_other is pool.get("git", other)
        )
        await pool.session("git")
        await pool.session("git", other)
        pids = {pool.get("git").pid, git_other.pid}
        assert None not in pids and len(pids) == 2  # two processes, one per workspace
        assert git_other.tag_name != pool.get("git").tag_name  # their process trees apart
        listed = await pool.call("git", "git_status", {"repo_path": str(other)}, other)
        assert not listed.is_error and "On branch main" in listed.content[0].text

        write_servers_toml(servers_file, state_dir=tmp_path, call_timeout_s=11.0)
        pool.apply(load_servers(servers_file))  # git changed: each workspace's stops
        assert await wait_until(lambda: not any(alive(pid) for pid in pids))
        restarted = pool.get("git", other)
        assert restarted is not git_other and restarted.timeouts.call_timeout_s == 11.0
        again = await pool.call("git", "git_status", {"repo_path": str(other)}, other)
        assert not again.is_error and restarted.pid not in pids
