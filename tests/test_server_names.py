"""The servers a request names (router/catalog/server_names.py), on the real seeded catalog: by
the server's name or the word its tools' names start with, never by an English word, and what
the page makes of it (fit gate rule 9)."""

import pytest

from router.backends.servers import SearchSettings
from router.catalog.match_plan import term_stats
from router.catalog.server_names import server_names
from router.facade.search_page import page_for_query
from tests.test_search_page import default_install


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    from router.catalog.load import load_catalog
    from router.db import connect
    from router.paths import SEEDS_DIR

    conn = connect(tmp_path_factory.mktemp("server-names") / "seeded.db")
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    yield conn
    conn.close()


@pytest.mark.parametrize(
    "query, servers",
    [
        ("any http urls hiding in firmware.bin? it's loaded in r2", {"radare2"}),  # its tools' prefix
        ("list the imports with radare2", {"radare2"}),  # its name
        ("decompile main in ghidra, then check it in R2", {"ghidra", "radare2"}),
        ("what files did I touch but never add to git", {"git"}),
        # English words name nothing: people use them for themselves
        ("what time is it in tokyo", set()),
        ("fetch https://example.com", set()),
        ("is there a memory leak in node 22?", set()),
        # a word that only starts like a name is none
        ("add .venv/ to .gitignore and push to github", set()),
    ],
)
def test_a_request_names_a_server_by_its_name_or_its_tools_prefix(seeded, query, servers):
    version = term_stats(seeded).refresh()
    assert server_names(seeded).refresh(version).named(query) == servers


def test_a_request_that_names_its_server_gets_no_other_server_s_loose_match(seeded):
    query = "any http urls hiding in firmware.bin? it's loaded in r2"
    page = page_for_query(
        seeded, query, limit=10, unavailable=default_install(seeded), settings=SearchSettings()
    )
    assert page["tools"] == []  # the file readers shared "firmware.bin" and nothing else
    assert page["unavailable"][0]["server"] == "radare2"
