"""The user's servers file, edited in place: `import` and `add` declare a server, `remove`
takes one out (or, for a shipped server, switches it off with `enabled = false`), `servers
--search/--hide/--show` set which servers search offers ([search]).

tomlkit edits the document the user may have commented by hand and writes back everything it
did not touch as it was. Every change is checked first: the edited layer, on top of the
shipped servers file, must load (router.backends.servers.load_servers), or nothing is written.
"""

import os
import tomllib
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from router.backends.servers import ConfigError, ServerConfig, layer_servers, read_layer
from router.files import write_atomically


class UserServersFile:
    def __init__(self, path: Path, starter_text: str = "") -> None:
        self.path = path
        try:
            text = path.read_text(encoding="utf-8") if path.exists() else starter_text
            self.document = tomlkit.parse(text)
        except TOMLKitError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
        self._private = False

    def _servers(self) -> Any:
        if "servers" not in self.document:
            self.document.add("servers", tomlkit.table(is_super_table=True))
        return self.document["servers"]

    def declares(self, name: str) -> bool:
        return name in self.document.get("servers", {})

    def declare(self, server: ServerConfig, comment: str = "") -> None:
        """Add (or replace) [servers.NAME] with the server's non-default fields."""
        table = tomlkit.table()
        if comment:
            table.comment(comment)
        for key, value in server.model_dump(exclude={"name"}, exclude_defaults=True).items():
            table[key] = value
        servers = self._servers()
        if server.name in servers:
            del servers[server.name]
        servers[server.name] = table

    def disable(self, name: str, comment: str) -> None:
        table = tomlkit.table()
        table.comment(comment)
        table["enabled"] = False
        servers = self._servers()
        if name in servers:
            del servers[name]
        servers[name] = table

    def remove(self, name: str) -> None:
        del self._servers()[name]

    def _search(self) -> Any:
        if "search" not in self.document:
            self.document.add("search", tomlkit.table())
        return self.document["search"]

    def set_search_scope(self, scope: str) -> None:
        self._search()["servers"] = scope

    def hidden(self) -> list[str]:
        return [str(name) for name in self.document.get("search", {}).get("hidden", [])]

    def set_hidden(self, names: list[str]) -> None:
        """[search] hidden = names (sorted); no key at all when none is hidden."""
        search = self._search()
        if names:
            search["hidden"] = sorted(set(names))
        elif "hidden" in search:
            del search["hidden"]

    def keep_private(self) -> None:
        """Literal secrets are in it: readable by its owner only."""
        self._private = True

    def save(self, lower_layers: list[Path]) -> None:
        text = tomlkit.dumps(self.document)
        try:  # checked as the router will read it, with the layers under it, before it is written
            layer_servers(
                [*((path, read_layer(path)) for path in lower_layers), (self.path, tomllib.loads(text))]
            )
        except ConfigError as exc:
            raise ConfigError(f"{exc}; nothing written") from None
        write_atomically(self.path, text)
        if self._private:
            os.chmod(self.path, 0o600)
