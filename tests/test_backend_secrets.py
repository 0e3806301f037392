"""What a backend or a caller sends, the router repeats in its own words only redacted (issue 35
items 3 and 4): a real backend answers a call with a JSON-RPC error holding a URL password, an
OpenRouter key, a GitHub token and a URL with a token in its query, and writes the same to its
stderr; a caller names tools by a token and by a URL with a password. None of the secrets is in
a tool result, any row of the database, or the router's stderr; the words around them are."""

import json
import os
import sys

import pytest

from router.facade.jsonrpc_lines import LineClient
from tests.db_rows import every_stored_text
from tests.facade_support import add_backend
from tests.servers import noisy

pytestmark = pytest.mark.slow

URL_PASSWORD = "Pg5ecretXyZ7"
OPENROUTER_KEY = "sk-or-v1-" + "0123456789abcdef" * 4
GITHUB_TOKEN = "ghp_" + "x9Y8" * 9
QUERY_TOKEN = "qt5backendtoken81"
READABLE_URL = "https://status.example.com/db?region=eu&page=2"
BACKEND_ERROR = (
    f"db connect failed: postgres://app:{URL_PASSWORD}@db.internal/app api_key={OPENROUTER_KEY} "
    f"{GITHUB_TOKEN} via wss://db.internal/feed?token={QUERY_TOKEN} (see {READABLE_URL})"
)
SECRETS = {
    "URL password": URL_PASSWORD,
    "OpenRouter key": OPENROUTER_KEY,
    "GitHub token": GITHUB_TOKEN,
    "token in a URL's query": QUERY_TOKEN,
}
# tool names a caller made up
CALLER_TOKEN = "ghp_" + "Q7w2" * 9
CALLER_URL_PASSWORD = "Hunter2Caller"
CALLER_NAMES = [CALLER_TOKEN, f"https://admin:{CALLER_URL_PASSWORD}@tools.example.com/x"]


def test_a_backends_error_and_a_callers_tool_names_are_redacted_everywhere_the_router_repeats_them(
    facade, harvested_catalog, tmp_path
):
    declaration = f"""profile = "custom"
command = {json.dumps(sys.executable)}
args = [{json.dumps(noisy.__file__)}]"""
    add_backend(facade, harvested_catalog, "noisy", declaration, noisy.TOOLS)
    params = facade.params(extra_args=("--no-wake-on-search",))
    answers = []
    with (tmp_path / "router.stderr").open("wb") as stderr:
        with LineClient(
            [params.command, *params.args], os.environ | (params.env or {}), stderr=stderr
        ) as client:
            answers.append(
                client.call_tool(
                    "mcp_call_tool", {"toolName": "fail_loudly", "args": {"message": BACKEND_ERROR}}
                )
            )
            for name in CALLER_NAMES:
                answers.append(client.call_tool("mcp_call_tool", {"toolName": name, "args": {}}))
                answers.append(client.call_tool("mcp_inspect_schema", {"toolName": name}))
    assert all(answer.get("isError") for answer in answers), answers
    said = json.dumps(answers)
    assert "db connect failed: postgres" in said and READABLE_URL in said  # the words around them
    assert "no tool named" in said
    stored = every_stored_text(facade.db)
    logged = (tmp_path / "router.stderr").read_text(encoding="utf-8", errors="replace")
    assert "failing: db connect failed" in logged and f"token=[REDACTED] (see {READABLE_URL})" in logged
    assert "backend 'noisy' refused 'fail_loudly'" in stored  # the audit row and the breaker's
    leaks = {
        where: sorted(name for name, value in SECRETS.items() if value in text)
        for where, text in (("answer", said), ("row", stored), ("stderr", logged))
    }
    assert leaks == {"answer": [], "row": [], "stderr": []}
    for value in (CALLER_TOKEN, CALLER_URL_PASSWORD):
        assert value not in stored and value not in logged
