"""Servers files → typed backend server declarations.

Two layers by default: the shipped configs/servers.toml and the user's own servers file
(router.paths.servers_files). A later layer wins: a server it declares replaces the same
name's whole table below it, and its [defaults] keys replace those keys.
"""

import tomllib
from collections.abc import Sequence
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


class ServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    profile: str
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    install: str = ""
    call_timeout_s: float | None = Field(default=None, gt=0)
    startup_timeout_s: float | None = Field(default=None, gt=0)
    idle_stop_s: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _exactly_one_transport(self) -> "ServerConfig":
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (HTTP)")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"


class ServersConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    defaults: Defaults = Field(default_factory=Defaults)
    servers: dict[str, ServerConfig]
    # which file declared each server (the layer that won), for `context-router servers`
    _origins: dict[str, Path] = PrivateAttr(default_factory=dict)
    _files: list[Path] = PrivateAttr(default_factory=list)

    def origin(self, server: str) -> Path | None:
        return self._origins.get(server)

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
    merged: dict[str, Any] = {"defaults": {}, "servers": {}}
    origins: dict[str, Path] = {}
    for path in layers:
        raw = _read_layer(path)
        defaults = raw.pop("defaults", {})
        servers = raw.pop("servers", {})
        if not isinstance(defaults, dict) or not isinstance(servers, dict):
            raise ConfigError(f"{path}: [defaults] and [servers.NAME] must be tables")
        merged["defaults"].update(defaults)
        for name, table in servers.items():
            if isinstance(table, dict):
                table.setdefault("name", name)
            merged["servers"][name] = table
            origins[name] = path
        merged.update(raw)  # unknown top-level keys: the model refuses them, naming the field
        try:
            ServersConfig.model_validate({"defaults": defaults, "servers": servers, **raw})
        except ValidationError as exc:
            raise ConfigError(f"{path}: {first_field_error(exc)}") from None
    try:
        config = ServersConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(f"{', '.join(map(str, layers))}: {first_field_error(exc)}") from None
    config._origins = origins
    config._files = layers
    return config


def _read_layer(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
