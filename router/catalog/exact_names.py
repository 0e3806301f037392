"""A query that names a tool: its catalog name (`adb_install_apk`, `git status`), or its
server and its own name (`ghidra decompile_function`, `adb install apk`).

The query's words are joined back into the spellings tool names use (snake_case, kebab-case,
camelCase, PascalCase, run together) and each spelling is looked up by the catalog's unique
indexes (tools.name; tools.server + backend_name): a handful of index seeks, whatever the
catalog's size. Search puts such a tool first.
"""

import json
import re

import apsw

# Queries longer than this many words are descriptions, not names.
MAX_NAME_WORDS = 6
# server + tool name is tried for queries of at most this many words (each split costs seeks)
MAX_SERVER_TOOL_WORDS = 4

EXACT_NAME_SQL = """
SELECT id FROM tools WHERE name IN (SELECT value FROM json_each(:names))
UNION
SELECT t.id FROM json_each(:pairs) p
JOIN tools t ON t.server = json_extract(p.value, '$[0]') AND t.backend_name = json_extract(p.value, '$[1]')
"""


def spellings(words: list[str]) -> set[str]:
    """The ways a tool name made of these words is commonly written."""
    if not words:
        return set()
    lower = [w.lower() for w in words]
    camel = lower[0] + "".join(w.capitalize() for w in lower[1:])
    return {
        "_".join(lower),
        "-".join(lower),
        "".join(lower),
        camel,
        camel[0].upper() + camel[1:],
        " ".join(words),
    }


def exact_name_ids(conn: apsw.Connection, query: str) -> list[int]:
    """Ids of the tools the whole query names (usually none, sometimes one)."""
    tokens = query.strip().strip("`'\"").split()
    if not tokens or len(tokens) > MAX_NAME_WORDS:
        return []
    names: set[str] = set()
    pairs: list[tuple[str, str]] = []
    whole = " ".join(tokens)
    names.add(whole)
    words = [w for token in tokens for w in re.split(r"[\s_\-./:]+", token) if w]
    names |= spellings(words)
    if 2 <= len(tokens) <= MAX_SERVER_TOOL_WORDS:
        # server + the tool's own name: the server is the first word(s)
        for cut in range(1, len(tokens)):
            server_words = [w.lower() for w in tokens[:cut]]
            tool_words = [w for token in tokens[cut:] for w in re.split(r"[_\-./:]+", token) if w]
            for server in {"-".join(server_words), "_".join(server_words), "".join(server_words)}:
                for tool in spellings(tool_words) | {" ".join(tokens[cut:])}:
                    pairs.append((server, tool))
    rows = conn.execute(
        EXACT_NAME_SQL, {"names": json.dumps(sorted(names)), "pairs": json.dumps(sorted(set(pairs)))}
    )
    return sorted(row[0] for row in rows)
