"""A stdio backend's stderr copied to the router's stderr (issue 22 item 7): a real backend
prints its key, a password, a secret-named variable's value and a passphrase in prose; the
router's stderr, a log, shows none of them, yet keeps the backend's ordinary words."""

import json
import os
import sys

import pytest

from router.db import connect
from router.facade.jsonrpc_lines import LineClient
from tests.facade_support import MISBEHAVING, audit_rows

pytestmark = pytest.mark.slow

TOKEN = "tok-4f9a1c7e2b8d6035a9e1"  # the value of a secret-named variable in its env
OPENROUTER_KEY = "sk-or-v1-" + "0123456789abcdef" * 4
PROSE = "my password is correct horse battery staple"
# what the backend writes on stderr before it serves, the last line without its end
LOUD_START = f"""
import os, runpy, sys
sys.stderr.write("starting: reading the config" + chr(10))
sys.stderr.write("OPENROUTER_API_KEY={OPENROUTER_KEY}" + chr(10))
sys.stderr.write("db login password=hunter2hunter2 for admin" + chr(10))
sys.stderr.flush()
sys.stderr.write("using token " + os.environ["SERVICE_TOKEN"][:9])  # split across two writes
sys.stderr.flush()
sys.stderr.write(os.environ["SERVICE_TOKEN"][9:] + chr(10))
sys.stderr.write("note: {PROSE}")
sys.stderr.flush()
runpy.run_path({str(MISBEHAVING)!r}, run_name="__main__")
"""
SECRETS = {
    "an OpenRouter key": OPENROUTER_KEY,
    "a password assignment": "hunter2hunter2",
    "a secret-named variable's value": TOKEN,
    "a passphrase in prose": "correct horse battery staple",
}


def loud_backend(facade, tmp_path) -> None:
    script = tmp_path / "loud.py"
    script.write_text(LOUD_START, encoding="utf-8")
    facade.reconfigure(
        extra=f"""
[servers.loud]
profile = "custom"
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(script))}]
env = {{ SERVICE_TOKEN = "{TOKEN}" }}
"""
    )
    conn = connect(facade.db)
    conn.execute("INSERT INTO servers(name, profile) VALUES ('loud', 'custom')")
    conn.execute("UPDATE tools SET server = 'loud' WHERE name = 'whoami'")
    conn.close()


def router_stderr(facade, tmp_path) -> str:
    """The router's whole stderr over a call to the loud backend and the router's exit."""
    loud_backend(facade, tmp_path)
    params = facade.params()
    with (tmp_path / "router.stderr").open("wb") as stderr:
        with LineClient([params.command, *params.args], os.environ, stderr=stderr) as client:
            result = client.call_tool("mcp_call_tool", {"toolName": "whoami", "args": {}})
            assert result.get("isError") is not True, result
    assert audit_rows(facade.db)[-1]["outcome"] == "ok"
    return (tmp_path / "router.stderr").read_text(encoding="utf-8", errors="replace")


def test_no_planted_secret_reaches_the_routers_stderr_yet_the_backends_words_do(facade, tmp_path):
    logged = router_stderr(facade, tmp_path)
    assert "starting: reading the config\n" in logged
    assert "OPENROUTER_API_KEY=[REDACTED]" in logged
    assert "using token [REDACTED]\n" in logged  # a line written in two parts, redacted whole
    assert "note: my password is " in logged  # a last line without its end, copied at the exit
    for kind, secret in SECRETS.items():
        assert secret not in logged, kind
