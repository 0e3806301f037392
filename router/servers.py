"""configs/servers.toml → typed backend server declarations."""

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from router.errors import RouterError
from router.paths import CONFIGS_DIR
from router.validation import first_field_error

SERVERS_FILE = CONFIGS_DIR / "servers.toml"


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


def load_servers(path: Path = SERVERS_FILE) -> ServersConfig:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    for name, table in raw.get("servers", {}).items():
        if isinstance(table, dict):
            table.setdefault("name", name)
    try:
        return ServersConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {first_field_error(exc)}") from None
