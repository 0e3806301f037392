"""The secrets bar, end to end: a real break-glass server over stdio, a workspace holding a
.netrc, a PGP private key, a script with `Authorization: Basic …`, a password with spaces and
more (tests/breakglass_secrets.py), all relevant to the problem and some named by the caller.
None of them reaches a request the OpenRouter stand-in received, a row of the database, or
the server's log."""

import json

import pytest

from router.breakglass.settings import DEFAULT_PRICES
from tests.breakglass_secrets import CORPUS, ENVIRONMENT, READABLE_URL, URL_SECRETS, plant
from tests.breakglass_support import (
    API_KEY,
    TIERS,
    break_glass_client,
    prepared_db,
    server_params,
    write_config,
)
from tests.db_rows import every_stored_text
from tests.openrouter_stub import OpenRouterStub

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
PROBLEM = (
    "break glass: the merge fails after the gap check; the merge api call and the merge db "
    f"config look right. (pasted from the shell: password {CORPUS['.netrc password']}) My password "
    f"is {CORPUS['password with spaces']}, and logging in works by hand. The failing request: "
    + URL_SECRETS["api_key in a URL"][0].format(URL_SECRETS["api_key in a URL"][1])
)


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_no_planted_secret_reaches_a_request_a_row_or_a_log(tmp_path):
    workspace = tmp_path / "ws"
    plant(workspace)
    db = prepared_db(tmp_path / "router.db")
    config = write_config(tmp_path / "bg.toml", {"context.max_workspace_files": 30})
    log = tmp_path / "server.log"
    with OpenRouterStub(DEFAULT_PRICES, API_KEY) as stub, log.open("w") as errlog:
        params = server_params(db, config, workspace, stub.base_url, extra_env=ENVIRONMENT)
        async with break_glass_client(params, errlog=errlog) as client:
            call = await client.call_tool(
                "break_glass",
                {
                    "problem": PROBLEM,
                    "problem_type": "code_bug",
                    "earlier_tiers": {
                        **TIERS,
                        "skill_system": {
                            **TIERS["skill_system"],
                            "failure": f"401 with {CORPUS['basic auth']}",
                        },
                    },
                    "context_files": [
                        ".netrc",
                        "deploy/signing.asc",
                        ".env",
                        "config/merge_db_plain.yaml",
                        "notes/merge_login.md",
                    ],
                },
            )
    assert not call.is_error, call.content[0].text
    result = json.loads(call.content[0].text)
    assert result["status"] == "ok"
    # the problem and the ordinary files did arrive; the credential files did not
    sent = stub.all_text()
    assert "the merge fails after the gap check" in sent and "def merge(gap)" in sent
    assert "my passphrase is [REDACTED]" in sent and "deploy account is [REDACTED]." in sent
    assert READABLE_URL in sent and "/v1/merge?api_key=[REDACTED]&x=1" in sent
    assert {"src/merge.py", "notes/merge.md", "scripts/call_merge_api.sh", "config/merge_db.yaml"} <= set(
        result["context_files"]
    )
    assert ".netrc" not in result["context_files"] and ".envrc" not in result["context_files"]
    assert any(".netrc left out: a credential file is never sent" in n for n in result["context_notes"])
    prompts = "\n".join(m["content"] for r in stub.completions() for m in r["body"]["messages"])
    assert "Authorization: Basic [REDACTED]" in prompts and 'db_password: "[REDACTED]"' in prompts
    assert result["secrets_removed"]
    stored, logged = every_stored_text(db), log.read_text()
    assert "merge fails" in stored and logged  # the places checked are not empty
    leaks = {
        where: sorted(name for name, value in CORPUS.items() if value in text)
        for where, text in (("request", sent), ("row", stored), ("log", logged))
    }
    assert leaks == {"request": [], "row": [], "log": []}
