"""configs/breakglass.toml → validated settings. Money becomes integer micro-dollars here."""

import tomllib
from pathlib import Path
from typing import Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from router.errors import RouterError
from router.paths import CONFIGS_DIR
from router.validation import first_field_error

DEFAULT_CONFIG = CONFIGS_DIR / "breakglass.toml"
DEFAULT_PRICES = CONFIGS_DIR / "openrouter-models.json"
# configs/openrouter-models.json is a snapshot written by hand in the /api/v1/models shape
# (the API gives no date, and there was no network where it was written): this is when its
# prices were taken, so estimates warn once they are older than max_price_age_days
SNAPSHOT_PRICED_AT = "2026-12-01T00:00:00.000Z"
MICRO = 1_000_000

ProblemType = Literal["lean_proof", "code_bug", "architecture", "math_novel", "infra_debug"]
PROBLEM_TYPES: tuple[str, ...] = get_args(ProblemType)


class ConfigError(RouterError):
    """configs/breakglass.toml (or a --config file) is invalid; the message names the field."""


def usd_to_micro(usd: float) -> int:
    return round(usd * MICRO)


def usd(micro: int) -> str:
    """Micro-dollars as a person reads them in a message: '$0.1234'."""
    return f"${micro / MICRO:.4f}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OpenRouterSettings(_Strict):
    fusion: bool = True
    judge: str
    timeout_seconds: float = Field(gt=0)
    max_retry_after_seconds: float = Field(ge=0)
    # a progress notification at least this often while waiting for the panel
    heartbeat_seconds: float = Field(10.0, gt=0)
    app_url: str = ""
    app_title: str = ""


class CostSettings(_Strict):
    default_budget_usd: float = Field(gt=0)
    confirm_above_usd: float = Field(ge=0)
    escalate_multiple: float = Field(gt=0)
    session_max_invocations: int = Field(ge=0)
    session_max_usd: float = Field(ge=0)
    day_max_invocations: int = Field(ge=0)
    day_max_usd: float = Field(ge=0)
    expected_output_tokens: int = Field(gt=0)
    output_cap_tokens: int = Field(gt=0)
    # the least max_tokens that still leaves room for a useful answer when a cap is lowered
    min_output_tokens: int = Field(gt=0)
    attempts_reserved: int = Field(ge=1, le=4)
    confirmation_token_minutes: float = Field(gt=0)
    # a running call renews its lease this often; a lease not renewed for lease_seconds is dead
    lease_seconds: float = Field(gt=0)
    max_price_age_days: float = Field(gt=0)


class ContextSettings(_Strict):
    max_file_bytes: int = Field(gt=0)
    max_total_bytes: int = Field(gt=0)
    max_workspace_files: int = Field(ge=0)
    max_scanned_files: int = Field(gt=0)
    lake_timeout_seconds: float = Field(gt=0)
    max_build_log_bytes: int = Field(gt=0)
    similar_problems: int = Field(ge=0)


class TypeSettings(_Strict):
    threshold_usd: float = Field(gt=0)
    panel: list[str] = Field(min_length=1)
    description: str
    keywords: list[str]
    extensions: list[str] = []


class Settings(_Strict):
    openrouter: OpenRouterSettings
    cost: CostSettings
    context: ContextSettings
    types: dict[ProblemType, TypeSettings]

    def type_settings(self, problem_type: str) -> TypeSettings:
        """The panel and threshold of a problem type (a KeyError for one the config lacks)."""
        return self.types[cast(ProblemType, problem_type)]

    def threshold_micro(self, problem_type: str) -> int:
        return usd_to_micro(self.type_settings(problem_type).threshold_usd)


def load_settings(path: Path | None = None) -> Settings:
    """Read and validate the break-glass config; an error names the file and the field."""
    path = path or DEFAULT_CONFIG
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {first_field_error(exc)}") from None
    missing = [t for t in PROBLEM_TYPES if t not in settings.types]
    if missing:
        raise ConfigError(f"{path}: types: no section for {', '.join(missing)}")
    return settings
