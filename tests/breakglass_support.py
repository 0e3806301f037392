"""Shared set-up for the break-glass tests: a database with prices, configs with overrides,
valid tier evidence, and a real MCP client session over stdio with `python -m router
break-glass` pointed at the local OpenRouter stub."""

import json
import os
import sys
import tomllib
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from router.breakglass.prices import load_prices
from router.breakglass.settings import DEFAULT_CONFIG, DEFAULT_PRICES
from router.db import connect

API_KEY = "sk-or-v1-" + "5e" * 32
TIERS = {
    "local_model": {
        "used": "hermes3 (ollama)",
        "tried": "asked for a proof of cleanMerge_preservesGap",
        "failure": "produced a proof that does not typecheck",
    },
    "frontier_model": {
        "used": "claude-opus",
        "tried": "native_decide, canonicalize+simp",
        "failure": "simp times out: the List.zip term is too large",
    },
    "skill_system": {
        "used": "lean-prover skill",
        "tried": "exhaustive list match with the skill's tactics",
        "failure": "maximum recursion depth reached in the elaborator",
    },
}
LEAN_PROBLEM = (
    "break glass: cleanMerge_preservesGap sorry in the Lean lemma; native_decide and simp "
    "cannot reduce the List.zip term"
)


def prepared_db(path: Path, prices: Path = DEFAULT_PRICES) -> Path:
    conn = connect(path)
    load_prices(conn, prices)
    conn.close()
    return path


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(value)


def write_config(path: Path, overrides: dict | None = None) -> Path:
    """The project's breakglass.toml with `{"section.key": value}` overrides."""
    config = tomllib.loads(DEFAULT_CONFIG.read_text())
    for dotted, value in (overrides or {}).items():
        *parents, key = dotted.split(".")
        node = config
        for part in parents:
            node = node[part]
        node[key] = value
    lines: list[str] = []

    def emit(prefix: str, table: dict) -> None:
        scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
        if prefix:
            lines.append(f"[{prefix}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in scalars.items())
        for k, v in table.items():
            if isinstance(v, dict):
                emit(f"{prefix}.{k}" if prefix else k, v)

    emit("", config)
    path.write_text("\n".join(lines) + "\n")
    return path


def server_params(
    db: Path,
    config: Path,
    workspace: Path,
    stub_url: str,
    *,
    session: str | None = None,
    api_key: str | None = API_KEY,
    extra_env: dict | None = None,
    extra_args: list[str] | None = None,
) -> StdioServerParameters:
    env = dict(os.environ)
    env["OPENROUTER_BASE_URL"] = stub_url
    env.pop("OPENROUTER_API_KEY", None)
    if api_key is not None:
        env["OPENROUTER_API_KEY"] = api_key
    env.update(extra_env or {})
    args = [
        "-m",
        "router",
        "break-glass",
        "--db",
        str(db),
        "--config",
        str(config),
        "--workspace",
        str(workspace),
    ]
    if session:
        args += ["--session", session]
    args += extra_args or []
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(workspace))


@asynccontextmanager
async def break_glass_client(params: StdioServerParameters, errlog=None, **client_options):
    """A real SDK client over stdio; `errlog` (an open file) receives the server's stderr."""
    transport = stdio_client(params, errlog=errlog) if errlog is not None else params
    async with Client(transport, **client_options) as client:
        yield client


def arguments(problem: str = LEAN_PROBLEM, **extra) -> dict:
    return {"problem": problem, "earlier_tiers": TIERS, **extra}


def probe(db: Path, config: Path, workspace: Path, problem: str, problem_type: str, **cost_overrides):
    """What prepare() decides for a request, as the server would (read-only), with the config's
    cost settings overridden: the way a test learns a call's estimate and worst case."""
    from router.breakglass.gate import EarlierTiers
    from router.breakglass.prepare import Request, prepare
    from router.breakglass.settings import load_settings

    settings = load_settings(config)
    settings = settings.model_copy(update={"cost": settings.cost.model_copy(update=cost_overrides)})
    conn = connect(db)
    try:
        return prepare(
            conn,
            settings,
            workspace,
            "probe",
            Request(
                problem,
                [],
                problem_type,
                cost_overrides.get("default_budget_usd"),
                EarlierTiers.model_validate(TIERS),
            ),
            lambda stage: None,
        )
    finally:
        conn.close()
