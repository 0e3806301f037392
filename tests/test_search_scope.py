"""Which servers search offers: [search] in the user's servers file, written by `servers
--search/--hide/--show` (comments kept), honoured by the CLI's search and by a running
router's mcp_search_tools, which picks a change up without a restart."""

import json
import re
import time

import anyio
import pytest

from router.backends.servers import ConfigError, load_servers
from router.cli import main
from router.db import connect
from router.facade.search_page import PAGE_TOKEN_BUDGET
from router.paths import SHIPPED_SERVERS_FILE, user_servers_file
from tests.facade_support import json_of, running_router

CORE = {"time", "git", "fetch", "filesystem", "memory"}
APPSEC_PREFIXES = ("ghidra_", "r2_")


def searched(db, query: str, capsys, limit: int = 50) -> list[str]:
    assert main(["search", "--db", str(db), "--json", query, "--limit", str(limit)]) == 0
    return [hit["name"] for hit in json.loads(capsys.readouterr().out)]


def test_search_settings_layer_key_by_key_and_a_bad_value_names_its_file(tmp_path):
    low = tmp_path / "low.toml"
    low.write_text('[search]\nservers = "callable"\nhidden = ["blender"]\n')
    high = tmp_path / "high.toml"
    high.write_text('[search]\nhidden = ["ghidra"]\n')
    search = load_servers([SHIPPED_SERVERS_FILE, low, high]).search
    assert (search.servers, search.hidden) == ("callable", ["ghidra"])
    assert search.not_searched({"adb": "not installed", "ghidra": "not installed"}) == ["adb", "ghidra"]
    assert load_servers(SHIPPED_SERVERS_FILE).search.not_searched({"adb": "not installed"}) == []
    high.write_text('[search]\nservers = "some"\n')
    with pytest.raises(ConfigError, match=r"high\.toml: field search\.servers"):
        load_servers([SHIPPED_SERVERS_FILE, high])


def test_hidden_servers_leave_cli_search_and_inspect_says_why(seeded_db, capsys):
    path = user_servers_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# my own notes: keep them\n")
    before = searched(seeded_db, "decompile a function", capsys)
    assert any(name.startswith(APPSEC_PREFIXES) for name in before)

    assert main(["servers", "--db", str(seeded_db), "--hide", "ghidra", "radare2"]) == 0
    out = capsys.readouterr().out
    assert "search offers all servers; hidden: ghidra, radare2" in out
    assert "searched: hidden from search by [search] hidden (context-router servers --show ghidra)" in out
    text = path.read_text()
    assert text.startswith("# my own notes: keep them\n") and 'hidden = ["ghidra", "radare2"]' in text

    assert not any(
        name.startswith(APPSEC_PREFIXES) for name in searched(seeded_db, "decompile a function", capsys)
    )
    # even the query naming one exactly: a hidden server's tools are never hits
    assert "ghidra_decompile_function" not in searched(seeded_db, "ghidra_decompile_function", capsys)
    assert main(["inspect", "--db", str(seeded_db), "ghidra_decompile_function"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert "--show ghidra" in shown["notSearched"] and shown["inputSchema"]["properties"]

    assert main(["servers", "--db", str(seeded_db), "--show", "ghidra", "--hide", "nosuch"]) != 0
    assert "no server named 'nosuch'" in capsys.readouterr().err
    assert path.read_text() == text  # refused whole: nothing written


def test_search_callable_offers_only_servers_callable_here(seeded_db, capsys):
    assert main(["servers", "--db", str(seeded_db), "--search", "callable"]) == 0
    assert '[search]\nservers = "callable"\n' in user_servers_file().read_text()
    assert load_servers([SHIPPED_SERVERS_FILE, user_servers_file()]).search.servers == "callable"
    capsys.readouterr()
    conn = connect(seeded_db)
    server_of = dict(conn.execute("SELECT name, server FROM tools").fetchall())
    conn.close()
    for query in ("decompile a function", "install an apk on the emulator", "read a file"):
        names = searched(seeded_db, query, capsys)
        assert all(server_of[name] in CORE for name in names), query
    assert searched(seeded_db, "read a file", capsys)[0] in {"read_text_file", "read_file"}
    assert main(["inspect", "--db", str(seeded_db), "adb_install_apk"]) == 0
    assert '"callable"' in json.loads(capsys.readouterr().out)["notSearched"]
    assert main(["servers", "--db", str(seeded_db), "--search", "all"]) == 0
    capsys.readouterr()
    assert any(server_of[name] == "adb" for name in searched(seeded_db, "install an apk", capsys))


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_running_router_follows_the_users_search_settings_without_a_restart(seeded_db, tmp_path):
    user = tmp_path / "user-servers.toml"
    user.write_text("# mine\n")
    layers = ["--servers", str(SHIPPED_SERVERS_FILE), "--servers", str(user)]
    async with running_router(
        seeded_db, SHIPPED_SERVERS_FILE, tmp_path, extra_args=tuple(layers[2:])
    ) as router:

        async def page() -> dict:
            return json_of(await router.call_tool("mcp_search_tools", {"query": "decompile a function"}))

        assert [entry["server"] for entry in (await page())["unavailable"]][:2] == ["ghidra", "radare2"]
        assert main(["servers", "--db", str(seeded_db), *layers, "--hide", "ghidra"]) == 0
        deadline = time.monotonic() + 30  # the files are looked at again once a second
        while "ghidra" in [entry["server"] for entry in (await page()).get("unavailable", [])]:
            assert time.monotonic() < deadline, "the router did not pick up [search] hidden"
            await anyio.sleep(0.2)
        servers = [entry["server"] for entry in (await page())["unavailable"]]
        assert servers[0] == "radare2" and "ghidra" not in servers
        shown = json_of(
            await router.call_tool("mcp_inspect_schema", {"toolName": "ghidra_decompile_function"})
        )
        assert "--show ghidra" in shown["notSearched"]


# --- the CLI shows what ranks a hit -------------------------------------------------------


def test_cli_search_shows_the_unavailable_penalty_so_its_scores_read_in_order(seeded_db, capsys):
    assert (
        main(["search", "--db", str(seeded_db), "search the web", "--limit", "6", "--explain", "--all"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    shown = [re.match(r"^ ?\d+\. \S+  \[\w+\]  (-?[\d.]+)", line) for line in lines]
    scores = [float(match.group(1)) for match in shown if match]
    assert len(scores) == 6 and scores == sorted(scores, reverse=True)
    penalised = [line for line in lines if " - 3.00 unavailable: not installed" in line]
    assert penalised and any("- unavailable 3.00" in line for line in lines)
    first = next(line for line in penalised)
    ranked, raw = map(float, re.findall(r"(-?[\d.]+) \(= (-?[\d.]+) - 3\.00", first)[0])
    assert ranked == pytest.approx(raw - 3.0, abs=0.011)


def test_cli_search_page_prints_what_the_agent_reads(seeded_db, capsys):
    assert main(["search", "--db", str(seeded_db), "decompile a function", "--page"]) == 0
    captured = capsys.readouterr()
    page = json.loads(captured.out)
    assert page["unavailable"][0]["server"] == "ghidra"
    tokens = int(re.search(r"\((\d+) tokens, cl100k\)", captured.err).group(1))
    assert 0 < tokens <= PAGE_TOKEN_BUDGET
