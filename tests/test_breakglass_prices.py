"""`context-router prices`: a saved /api/v1/models response (or a fetch from the stand-in)
loads every model with its prices, and estimates use them; old prices warn, a panel model
without a price refuses the call by name."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest

from router.breakglass.gate import EarlierTiers
from router.breakglass.prepare import Request, prepare
from router.breakglass.prices import read_prices
from router.breakglass.settings import DEFAULT_PRICES, load_settings
from router.cli import main
from router.db import connect, query_dicts
from tests.breakglass_support import API_KEY, LEAN_PROBLEM, TIERS
from tests.openrouter_stub import OpenRouterStub

LEAN_PANEL = ["anthropic/claude-opus-4.8", "deepseek/deepseek-v4", "google/gemini-3.1-pro"]


def models_file(tmp_path, factor: int = 1, drop: str | None = None):
    """The snapshot in the /api/v1/models shape, every price times `factor` (exact decimals)."""
    document = json.loads(DEFAULT_PRICES.read_text())
    for model in document["data"]:
        pricing = model["pricing"]
        if pricing["prompt"] != "-1":
            for field in ("prompt", "completion"):
                pricing[field] = str(Decimal(pricing[field]) * factor)
    document["data"] = [m for m in document["data"] if m["id"] != drop]
    path = tmp_path / f"models-x{factor}.json"
    path.write_text(json.dumps(document))
    return path, document


def prepared(conn, tmp_path):
    (tmp_path / "ws").mkdir(exist_ok=True)
    settings = load_settings()
    roomy = settings.cost.model_copy(update={"session_max_usd": 1000.0, "day_max_usd": 1000.0})
    return prepare(
        conn,
        settings.model_copy(update={"cost": roomy}),
        tmp_path / "ws",
        "s",
        Request(LEAN_PROBLEM, [], "lean_proof", 100.0, EarlierTiers.model_validate(TIERS)),
        lambda stage: None,
    )


def test_prices_from_a_saved_response_load_every_model(db_path, tmp_path, capsys):
    path, document = models_file(tmp_path, factor=3)
    assert main(["prices", "--db", str(db_path), "--from", str(path), "--as-of", "2026-11-20"]) == 0
    out = capsys.readouterr().out
    assert "7 model prices" in out and "skipped 1: openrouter/auto (variable price)" in out
    conn = connect(db_path)
    stored = {
        row["model"]: row
        for row in query_dicts(
            conn,
            "SELECT model, name, prompt_picodollars_per_tok AS p, completion_picodollars_per_tok AS c,"
            " context_length, priced_at FROM model_prices",
        )
    }
    priced = [m for m in document["data"] if m["pricing"]["prompt"] != "-1"]
    assert sorted(stored) == sorted(m["id"] for m in priced)
    for model in priced:
        row = stored[model["id"]]
        assert row["p"] == Decimal(model["pricing"]["prompt"]) * 10**12
        assert row["c"] == Decimal(model["pricing"]["completion"]) * 10**12
        assert (row["name"], row["context_length"]) == (model["name"], model["context_length"])
        assert row["priced_at"] == "2026-11-20T00:00:00.000Z"


def test_estimates_use_the_loaded_prices(db_path, tmp_path):
    conn = connect(db_path)
    once, _ = models_file(tmp_path, factor=1)
    main(["prices", "--db", str(db_path), "--from", str(once)])
    base = prepared(conn, tmp_path).estimate
    tenfold, _ = models_file(tmp_path, factor=10)
    main(["prices", "--db", str(db_path), "--from", str(tenfold)])
    assert read_prices(conn)["deepseek/deepseek-v4"].prompt_pico == 3_000_000
    ten = prepared(conn, tmp_path).estimate
    # the same tokens at ten times the price (each part rounded up to a micro-dollar once)
    assert ten.prompt_tokens == base.prompt_tokens
    assert abs(ten.expected_micro - 10 * base.expected_micro) <= 10
    assert abs(ten.worst_run_micro - 10 * base.worst_run_micro) <= 10


def test_old_prices_warn_and_a_missing_panel_model_refuses_by_name(db_path, tmp_path, pinned_clock):
    conn = connect(db_path)
    path, _ = models_file(tmp_path)
    # priced as of the date 45 days back: 45 whole days old at any hour of today
    old = (pinned_clock - timedelta(days=45)).strftime("%Y-%m-%d")
    main(["prices", "--db", str(db_path), "--from", str(path), "--as-of", old])
    warnings = prepared(conn, tmp_path).warnings
    assert any("prices older than 30 days: anthropic/claude-opus-4.8 (45 days)" in w for w in warnings)
    missing, _ = models_file(tmp_path, drop="deepseek/deepseek-v4")
    main(["prices", "--db", str(db_path), "--from", str(missing)])
    result = prepared(conn, tmp_path)
    assert result.refusal.startswith("no price in the catalog for deepseek/deepseek-v4")
    assert "context-router prices --fetch" in result.refusal


def test_prices_fetch_asks_the_models_endpoint(db_path, tmp_path, monkeypatch, capsys):
    path, _ = models_file(tmp_path, factor=2)
    with OpenRouterStub(path, API_KEY) as stub:
        monkeypatch.setenv("OPENROUTER_BASE_URL", stub.base_url)
        assert main(["prices", "--db", str(db_path), "--fetch"]) == 0
    assert [r["path"] for r in stub.requests] == ["/api/v1/models"]
    assert f"7 model prices from {stub.base_url}/api/v1/models" in capsys.readouterr().out
    assert read_prices(connect(db_path))["openai/gpt-5.5"].prompt_pico == 2_500_000


@pytest.mark.parametrize(
    "args, message",
    [
        (["--from", "missing.json"], "missing.json: cannot read"),
        (["--from", "models.json", "--as-of", "yesterday"], "--as-of 'yesterday': expected a date"),
    ],
)
def test_prices_errors_name_the_problem_and_keep_the_old_prices(db_path, tmp_path, capsys, args, message):
    (tmp_path / "models.json").write_text(DEFAULT_PRICES.read_text())
    main(["prices", "--db", str(db_path), "--from", str(DEFAULT_PRICES)])
    assert main(["prices", "--db", str(db_path), *args]) == 2
    assert message in capsys.readouterr().err
    assert connect(db_path).execute("SELECT count(*) FROM model_prices").fetchone()[0] == 7
