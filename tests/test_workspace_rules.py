"""The rules behind the client's workspace: which servers run per workspace, which root is
the workspace, what counts as a git repository, and availability worked out per workspace."""

import subprocess
from pathlib import Path

import mcp_types as types

from router.backends.availability import WORKSPACE_FIX, Availability, in_git_repository
from router.backends.servers import ServerConfig, load_servers
from router.catalog.load import load_catalog
from router.facade.client_workspace import workspace_of_roots
from router.facade.placeholders import Placeholders, uses_workspace, workspace_data_dir
from router.paths import SEEDS_DIR, SHIPPED_SERVERS_FILE


def stdio(*args: str, **env: str) -> ServerConfig:
    return ServerConfig(name="s", profile="custom", command="prog", args=list(args), env=env)


def test_a_server_runs_per_workspace_only_when_its_declaration_names_it():
    assert uses_workspace(stdio("--repository", "${WORKSPACE}"))
    assert uses_workspace(stdio("$WORKSPACE/sub"))
    assert uses_workspace(stdio(ROOT="${WORKSPACE}"))
    assert uses_workspace(ServerConfig(name="h", profile="p", url="http://127.0.0.1:1/${WORKSPACE}"))
    assert not uses_workspace(stdio("$$WORKSPACE"))  # an escaped dollar names nothing
    assert not uses_workspace(stdio("${env:WORKSPACE}"))  # the environment variable, not ours
    assert not uses_workspace(stdio("${DATA_DIR}/memory.jsonl"))
    # a workspace's own state directory makes the server one per workspace too
    assert uses_workspace(stdio(MEMORY_FILE_PATH="${WORKSPACE_DATA_DIR}/memory.jsonl"))
    shipped = load_servers(SHIPPED_SERVERS_FILE).servers
    assert {name for name, server in shipped.items() if uses_workspace(server)} == {
        "git",
        "filesystem",
        "memory",
    }


def test_a_workspaces_own_data_directory_is_under_the_data_dir_one_per_workspace_path(tmp_path):
    data = tmp_path / "router-data"
    first, second = tmp_path / "a" / "project", tmp_path / "b" / "project"
    expanded = {
        workspace: Path(Placeholders(workspace, data).expand("${WORKSPACE_DATA_DIR}/memory.jsonl", "test"))
        for workspace in (first, second)
    }
    # readable (the project's name), never shared by two projects of the same name, never
    # inside the project itself, and the same path every time for the same workspace
    assert expanded[first].parent.parent == data / "workspaces"
    assert expanded[first].parent.name.startswith("project-")
    assert expanded[first] != expanded[second]
    assert not expanded[first].is_relative_to(first)
    assert expanded[first] == Path(
        Placeholders(first, data).expand("${WORKSPACE_DATA_DIR}/memory.jsonl", "t")
    )
    assert workspace_data_dir(data, first) == expanded[first].parent


def test_the_workspace_is_the_first_root_that_is_a_local_directory(tmp_path):
    spaced = tmp_path / "my project"
    spaced.mkdir()
    roots = [
        types.Root(uri="file:///no/such/directory"),
        types.Root(uri=(tmp_path / "missing").as_uri()),
        types.Root(uri=spaced.as_uri()),  # percent-encoded: file:///.../my%20project
        types.Root(uri=tmp_path.as_uri()),
    ]
    assert workspace_of_roots(roots) == spaced
    assert workspace_of_roots([types.Root(uri=(spaced / "..").as_uri())]) == tmp_path.resolve()
    assert workspace_of_roots([]) is None
    (tmp_path / "a-file").write_text("x")
    assert workspace_of_roots([types.Root(uri=(tmp_path / "a-file").as_uri())]) is None


def test_a_git_repository_is_found_as_git_finds_it(tmp_path):
    repository = tmp_path / "repository"
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    (repository / "src" / "deep").mkdir(parents=True)
    assert in_git_repository(repository)
    assert in_git_repository(repository / "src" / "deep")
    worktree = tmp_path / "worktree"  # a worktree or submodule has a .git file
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../repository/.git/worktrees/x\n")
    assert in_git_repository(worktree)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not in_git_repository(plain)


def test_availability_is_worked_out_per_workspace(conn, tmp_path):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    config = load_servers(SHIPPED_SERVERS_FILE)
    repository, plain = tmp_path / "repository", tmp_path / "plain"
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    plain.mkdir()
    availability = Availability(clock=lambda: 0.0)
    outside = availability.unavailable(conn, config, plain)
    assert outside["git"] == (
        f"not usable in this workspace: {plain} is not inside a git repository; to fix it: {WORKSPACE_FIX}"
    )
    assert "filesystem" not in outside  # it works in any directory
    assert "git" not in availability.unavailable(conn, config, repository)
    assert availability.unavailable(conn, config, plain) is outside  # kept per workspace
    assert "git" not in availability.unavailable(conn, config)  # no workspace: not checked
