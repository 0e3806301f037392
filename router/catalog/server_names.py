"""The servers a request names: "any http urls in firmware.bin? it's loaded in r2".

A request that says which program to use ("in r2", "with ghidra", "in blender") has picked
its server: another server's tool that merely shares its objects (the file reader beside
"firmware.bin") is no step towards it, and the fit gate (router/catalog/fit_gate.py, rule 9)
leaves such loose matches off. A server is named by its catalog name or by the word all of its
tools' names start with (radare2's tools are `r2_...`), as a whole word of the request. A name
that is an English word ("fetch", "time", "memory") names nothing: people use it for itself.
"""

import re

import apsw

from router.catalog.english_words import may_be_a_word
from router.db import PerConnection

SERVER_TOOL_NAMES_SQL = "SELECT server, name FROM tools ORDER BY server"
# The words of a request, as a server's name or a tool-name prefix is written.
_WORD = re.compile(r"[a-z0-9][a-z0-9-]*")


class ServerNames:
    """Per connection: the words that name each server, until the catalog changes."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._version: int | None = None
        self._servers_of: dict[str, set[str]] = {}  # a naming word → the servers it names

    def refresh(self, version: int) -> "ServerNames":
        if version != self._version:
            names: dict[str, list[str]] = {}
            for server, name in self._conn.execute(SERVER_TOOL_NAMES_SQL):
                names.setdefault(str(server), []).append(str(name))
            servers_of: dict[str, set[str]] = {}
            for server, tools in names.items():
                for word in _naming_words(server, tools):
                    servers_of.setdefault(word, set()).add(server)
            self._servers_of, self._version = servers_of, version
        return self

    def named(self, query: str) -> set[str]:
        """The servers the request names by a word of its own."""
        found: set[str] = set()
        for word in _WORD.findall(query.lower()):
            found |= self._servers_of.get(word, set())
        return found


def _naming_words(server: str, tools: list[str]) -> set[str]:
    """The server's name, and the prefix every one of its tools' names starts with."""
    words = {server.lower()}
    prefixes = {name.split("_", 1)[0].lower() for name in tools if "_" in name}
    if len(prefixes) == 1 and all("_" in name for name in tools):
        words |= prefixes
    return {word for word in words if not may_be_a_word(word)}


server_names = PerConnection(ServerNames)
