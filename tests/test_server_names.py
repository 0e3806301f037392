"""The servers a request names (router/catalog/server_names.py), on the real seeded catalog: by
the server's name or the word its tools' names start with, never by an English word, and what
the page makes of it (fit gate rule 9)."""

import pytest

from router.catalog.match_plan import term_stats
from router.catalog.server_names import server_names
from tests.test_fit_gate import seeded  # noqa: F401 (a fixture)
from tests.test_search_page import default_page


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
def test_a_request_names_a_server_by_its_name_or_its_tools_prefix(seeded, query, servers):  # noqa: F811
    version = term_stats(seeded).refresh()
    assert server_names(seeded).refresh(version).named(query) == servers


def test_a_request_that_names_its_server_gets_no_other_server_s_loose_match(seeded):  # noqa: F811
    query = "any http urls hiding in firmware.bin? it's loaded in r2"
    page = default_page(seeded, query)
    assert page["tools"] == []  # the file readers shared "firmware.bin" and nothing else
    assert page["unavailable"][0]["server"] == "radare2"
