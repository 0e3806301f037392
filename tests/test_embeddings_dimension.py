"""Vectors that do not fit the model (issue 35 item 7): rows of tool_embeddings of another
dimension under the current model's name (a damaged file, a half-applied upgrade). Search
reads them as missing and answers by the words, with one warning on stderr; the router's
mcp_search_tools answers too; `catalog` embeds them again, after which the warning is gone."""

import json
import os
import subprocess

import pytest

from router.catalog.embeddings import catalog_model
from router.db import connect
from router.facade.jsonrpc_lines import LineClient
from tests.conftest import project_env

WRONG_DIM = 64
WARNING = "tool vectors in the catalog do not fit the semantic model"


def damage_vectors(db) -> int:
    """Every vector replaced by one of WRONG_DIM components, under the same model's name."""
    conn = connect(db)
    conn.execute("UPDATE tool_embeddings SET dim = ?, vector = randomblob(?)", (WRONG_DIM, WRONG_DIM))
    conn.execute("UPDATE example_embeddings SET dim = ?, vector = randomblob(?)", (WRONG_DIM, WRONG_DIM))
    damaged = conn.execute("SELECT count(*) FROM tool_embeddings WHERE dim = ?", (WRONG_DIM,)).fetchone()[0]
    conn.close()
    return damaged


def cli(venv_bin, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv_bin / "context-router"), *args],
        capture_output=True,
        text=True,
        env=project_env(),
        check=False,
        timeout=300,
    )


def test_search_answers_by_the_words_with_one_warning_and_catalog_embeds_them_again(seeded_db, venv_bin):
    model = catalog_model()
    assert model is not None and model.dim != WRONG_DIM
    assert damage_vectors(seeded_db) > 0
    searched = cli(venv_bin, "search", "--db", str(seeded_db), "what time is it in Tokyo")
    assert searched.returncode == 0, searched.stderr
    assert "Traceback" not in searched.stderr and "get_current_time" in searched.stdout
    assert searched.stderr.count(WARNING) == 1 and "context-router catalog" in searched.stderr
    # explain shows the ranking had no semantic part: the vectors were read as missing
    explained = cli(venv_bin, "search", "--db", str(seeded_db), "--explain", "what time is it in Tokyo")
    assert "semantic 0.00" in explained.stdout and "semantic 0." in explained.stdout

    rebuilt = cli(venv_bin, "catalog", "--db", str(seeded_db))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert " embedded" in rebuilt.stdout  # not "nothing to do": the unfit vectors were redone
    conn = connect(seeded_db)
    dims = {dim for (dim,) in conn.execute("SELECT DISTINCT dim FROM tool_embeddings")}
    example_dims = {dim for (dim,) in conn.execute("SELECT DISTINCT dim FROM example_embeddings")}
    conn.close()
    assert dims == {model.dim} and example_dims == {model.dim}
    again = cli(venv_bin, "search", "--db", str(seeded_db), "--explain", "what time is it in Tokyo")
    assert again.returncode == 0 and WARNING not in again.stderr
    assert any(
        line.strip().startswith("= ") and "semantic 0.00" not in line for line in again.stdout.splitlines()
    )


@pytest.mark.slow
def test_the_routers_search_answers_with_unfit_vectors_and_warns_once(facade, tmp_path):
    assert damage_vectors(facade.db) > 0
    params = facade.params(extra_args=("--no-wake-on-search",))
    with (tmp_path / "router.stderr").open("wb") as stderr:
        with LineClient(
            [params.command, *params.args], os.environ | (params.env or {}), stderr=stderr
        ) as client:
            pages = [
                client.call_tool("mcp_search_tools", {"query": query})
                for query in ("what time is it", "show the git log", "what time is it in Paris")
            ]
    assert not any(page.get("isError") for page in pages), pages
    names = [tool["name"] for tool in json.loads(pages[0]["content"][0]["text"])["tools"]]
    assert "get_current_time" in names
    assert (tmp_path / "router.stderr").read_text(encoding="utf-8").count(WARNING) == 1
