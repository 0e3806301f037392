"""Servers files → typed backend server declarations.

Two layers by default: the shipped configs/servers.toml and the user's own servers file
(router.paths.servers_files). A later layer wins: a server it declares replaces the same
name's whole table below it, and its [defaults] keys replace those keys. A table saying
`enabled = false` switches the server off (`context-router remove` writes one for a shipped
server): it is not started, and its tools leave the catalog; a later layer may declare it again.
[search] says which servers' tools search offers (`context-router servers --search/--hide/--show`
writes it), [http] how many clients `serve --http` keeps; their keys layer like [defaults].
"""

import tomllib
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from router.errors import RouterError
from router.paths import SHIPPED_SERVERS_FILE
from router.validation import first_field_error


class ConfigError(RouterError):
    pass


class Defaults(BaseModel):
    model_config = ConfigDict(extra="forbid")

    call_timeout_s: float = Field(default=30.0, gt=0)
    startup_timeout_s: float = Field(default=20.0, gt=0)
    idle_stop_s: float = Field(default=300.0, gt=0)
    # circuit breaker per backend tool: this many failures in a row open it for breaker_open_s
    breaker_failures: int = Field(default=3, ge=1)
    breaker_open_s: float = Field(default=60.0, gt=0)


# [search] servers: "all" searches every catalogued server (a match that cannot be called here
# shows as one compact line per server, with its reason); "callable" only the servers that can
# be called here now.
SearchScope = Literal["all", "callable"]
SEARCH_ALL: SearchScope = "all"
SEARCH_CALLABLE: SearchScope = "callable"


class SearchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: SearchScope = SEARCH_ALL
    # servers never searched, whatever their state (their tools stay in the catalog: inspect
    # and a call by name still find them)
    hidden: list[str] = Field(default_factory=list)

    def why_not_searched(self, server: str, unavailable: Collection[str]) -> str | None:
        """Why search leaves the server's tools out (given the servers unavailable here), or None."""
        if server in self.hidden:
            return f"hidden from search by [search] hidden (context-router servers --show {server})"
        if self.servers == SEARCH_CALLABLE and server in unavailable:
            return (
                'not callable here, and [search] servers = "callable" (context-router servers --search all)'
            )
        return None

    def not_searched(self, unavailable: Collection[str]) -> list[str]:
        """The servers whose tools search leaves out, given those unavailable here."""
        if self.servers == SEARCH_ALL:  # the common case: no need to look at every server
            return sorted(set(self.hidden))
        return sorted(set(self.hidden) | set(unavailable))


class HttpSettings(BaseModel):
    """`serve --http`: how many clients it keeps and for how long (read when it starts)."""

    model_config = ConfigDict(extra="forbid")

    # MCP sessions open at once, and per client (its address and the name it gives in
    # initialize); one more closes the oldest idle session (its client gets 404 and opens a
    # new one) rather than refusing the new client
    max_sessions: int = Field(default=1000, ge=1)
    max_sessions_per_client: int = Field(default=100, ge=1)
    # a session with no request for this long is closed
    session_idle_s: float = Field(default=600.0, gt=0)
    # a connection must send its request head, then its body, within these
    request_head_timeout_s: float = Field(default=10.0, gt=0)
    request_body_timeout_s: float = Field(default=30.0, gt=0)
    # open connections at once; never more than the open-file limit leaves room for (the
    # default: as many as it leaves room for)
    max_connections: int | None = Field(default=None, ge=1)


class ServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    profile: str
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    # HTTP servers: request headers (values may be ${env:NAME} references), and the MCP
    # transport the URL speaks: Streamable HTTP, or the older HTTP+SSE
    headers: dict[str, str] = Field(default_factory=dict)
    http_transport: Literal["streamable-http", "sse"] = "streamable-http"
    # what to install when the program is missing (shown wherever the server is unavailable)
    install: str = ""
    # what the workspace must be for the server to work there: "git-repository" (inside a git
    # working tree); elsewhere it is reported unavailable with that reason instead of started
    needs_workspace: Literal["git-repository"] | None = None
    call_timeout_s: float | None = Field(default=None, gt=0)
    startup_timeout_s: float | None = Field(default=None, gt=0)
    idle_stop_s: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _exactly_one_transport(self) -> "ServerConfig":
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (HTTP)")
        if self.command is not None and self.headers:
            raise ValueError("headers are for HTTP servers (url); a stdio server takes env")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    @property
    def templated_texts(self) -> list[str]:
        """Every value placeholders (${WORKSPACE}, ${DATA_DIR}, ${env:NAME}) are expanded in."""
        return [*self.args, *self.env.values(), self.url or "", *self.headers.values()]


class ServersConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    defaults: Defaults = Field(default_factory=Defaults)
    search: SearchSettings = Field(default_factory=SearchSettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    servers: dict[str, ServerConfig]
    # which file declared each server (the layer that won), for `context-router servers`
    _origins: dict[str, Path] = PrivateAttr(default_factory=dict)
    _files: list[Path] = PrivateAttr(default_factory=list)
    # servers switched off by `enabled = false`, and the layer that did it
    _disabled: dict[str, Path] = PrivateAttr(default_factory=dict)

    def origin(self, server: str) -> Path | None:
        return self._origins.get(server)

    @property
    def disabled(self) -> dict[str, Path]:
        """Servers an `enabled = false` table switched off, with the file that says so."""
        return dict(self._disabled)

    @property
    def files(self) -> list[Path]:
        """The layers this config was read from, lowest first."""
        return list(self._files)

    def timeouts(self, server: ServerConfig) -> Defaults:
        """The server's own timeouts, falling back to [defaults]."""
        return Defaults(
            call_timeout_s=server.call_timeout_s or self.defaults.call_timeout_s,
            startup_timeout_s=server.startup_timeout_s or self.defaults.startup_timeout_s,
            idle_stop_s=server.idle_stop_s or self.defaults.idle_stop_s,
        )

    def longest_call_s(self) -> float:
        """The longest a forwarded call to any declared server may take before the router
        gives up on it: a cold start plus the call itself."""
        limits = [self.timeouts(server) for server in self.servers.values()] or [self.defaults]
        return max(t.startup_timeout_s + t.call_timeout_s for t in limits)


def load_servers(paths: Path | Sequence[Path] = (SHIPPED_SERVERS_FILE,)) -> ServersConfig:
    """Read and layer servers files (lowest first); a missing or invalid file names itself."""
    layers = [paths] if isinstance(paths, Path) else list(paths)
    return layer_servers([(path, read_layer(path)) for path in layers])


def layer_servers(layers: Sequence[tuple[Path, dict[str, Any]]]) -> ServersConfig:
    """Servers files already read (path, freshly parsed TOML, which this consumes), lowest
    first, layered and checked: what load_servers does after reading, and what a servers file
    about to be written is checked by."""
    merged: dict[str, Any] = {"defaults": {}, "search": {}, "http": {}, "servers": {}}
    origins: dict[str, Path] = {}
    disabled: dict[str, Path] = {}
    for path, raw in layers:
        defaults = raw.pop("defaults", {})
        search = raw.pop("search", {})
        http = raw.pop("http", {})
        servers = raw.pop("servers", {})
        if not all(isinstance(table, dict) for table in (defaults, search, http, servers)):
            raise ConfigError(f"{path}: [defaults], [search], [http] and [servers.NAME] must be tables")
        merged["defaults"].update(defaults)
        merged["search"].update(search)
        merged["http"].update(http)
        switched_off = _disabled_tables(path, servers)
        for name, table in servers.items():
            if name in switched_off:
                merged["servers"].pop(name, None)
                origins.pop(name, None)
                disabled[name] = path
                continue
            if isinstance(table, dict):
                table.setdefault("name", name)
            merged["servers"][name] = table
            origins[name] = path
            disabled.pop(name, None)
        merged.update(raw)  # unknown top-level keys: the model refuses them, naming the field
        declared = {name: table for name, table in servers.items() if name not in switched_off}
        try:
            ServersConfig.model_validate(
                {"defaults": defaults, "search": search, "http": http, "servers": declared, **raw}
            )
        except ValidationError as exc:
            raise ConfigError(f"{path}: {first_field_error(exc)}") from None
    try:
        config = ServersConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(f"{', '.join(str(path) for path, _ in layers)}: {first_field_error(exc)}") from None
    config._origins = origins
    config._files = [path for path, _ in layers]
    config._disabled = disabled
    return config


def _disabled_tables(path: Path, servers: dict[str, Any]) -> set[str]:
    """Names whose table says `enabled = false` (its other keys, if any, are kept but unused)."""
    names = set()
    for name, table in servers.items():
        if isinstance(table, dict) and "enabled" in table:
            if not isinstance(table["enabled"], bool):
                raise ConfigError(f"{path}: field servers.{name}.enabled: must be true or false")
            if table["enabled"] is False:
                names.add(name)
            else:
                del table["enabled"]
    return names


def read_layer(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
