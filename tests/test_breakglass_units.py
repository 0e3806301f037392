"""break-glass parts on their own: gate, classifier, secret removal, prices and estimates,
the ledger's caps and one-time tokens, and the catalog command loading prices."""

import json
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest

from router.breakglass.classify import classify
from router.breakglass.context import ContextError, assemble, fts_query, resolve_named
from router.breakglass.gate import EarlierTiers, gate_refusal
from router.breakglass.prices import PriceError, load_prices, read_prices
from router.breakglass.pricing import estimate_run
from router.breakglass.settings import DEFAULT_PRICES, ConfigError, load_settings
from router.db import connect, query_dicts
from router.paths import SEEDS_DIR
from router.redaction.redactor import REDACTED, Redactor
from tests.breakglass_support import API_KEY, TIERS

SECRETS = {
    "openrouter": API_KEY,
    "anthropic": "sk-ant-api03-" + "A1b2" * 10,
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_" + "x9Y8" * 9,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "password": "hunter2-correct-horse",
}


@pytest.fixture(scope="module")
def settings():
    return load_settings()


def tiers(**override):
    data = {k: dict(v) for k, v in TIERS.items()}
    data.update(override)
    return EarlierTiers.model_validate({k: v for k, v in data.items() if v is not None})


# -- gate ---------------------------------------------------------------------------------


def test_gate_passes_trigger_and_three_tiers():
    assert gate_refusal("break glass: the lemma cannot be closed by simp", tiers()) is None
    assert gate_refusal("  Break Glass: the lemma cannot be closed by simp", tiers()) is None


def test_gate_names_every_missing_piece():
    message = gate_refusal(
        "please fix my lemma",
        tiers(skill_system=None, frontier_model={"used": "gpt", "tried": "simp and omega", "failure": ""}),
    )
    assert "must start with 'break glass:'" in message
    assert "earlier_tiers.skill_system: no evidence that the skill/tool system was tried" in message
    assert "earlier_tiers.frontier_model.failure: how it failed" in message
    assert "local_model" not in message


def test_gate_refuses_missing_evidence_and_empty_statement():
    message = gate_refusal("break glass:", None)
    assert "statement after 'break glass:' is empty" in message
    for tier in ("local_model", "frontier_model", "skill_system"):
        assert f"earlier_tiers.{tier}: no evidence" in message


# -- classification -------------------------------------------------------------------------


def test_classifier_is_deterministic_and_explains(settings):
    lean = classify(settings, "cleanMerge_preservesGap sorry: simp cannot close the lemma", ["src/Gap.lean"])
    assert lean.problem_type == "lean_proof"
    assert "keyword 'sorry'" in lean.explanation and "file src/Gap.lean" in lean.explanation
    assert (
        classify(settings, "cleanMerge_preservesGap sorry: simp cannot close the lemma", ["src/Gap.lean"])
        == lean
    )
    infra = classify(settings, "the docker container cannot reach dns inside kubernetes", [])
    assert infra.problem_type == "infra_debug"
    assert classify(settings, "the conjecture needs an asymptotic bound", []).problem_type == "math_novel"
    assert (
        classify(settings, "should this module boundary become an interface", []).problem_type
        == "architecture"
    )
    assert classify(settings, "the test fails with a traceback", ["a.py"]).problem_type == "code_bug"


def test_classifier_without_signal_says_so(settings):
    found = classify(settings, "something odd happens", [])
    assert found.problem_type == "code_bug" and "no type signal" in found.explanation


# -- secret removal -------------------------------------------------------------------------


def test_redactor_removes_known_secret_shapes():
    text = "\n".join(
        [
            f"key {SECRETS['openrouter']} here",
            f"ANTHROPIC={SECRETS['anthropic']}",
            f"aws {SECRETS['aws']}",
            f"gh {SECRETS['github']}",
            f"Authorization: Bearer {SECRETS['jwt']}",
            f"db_password = '{SECRETS['password']}'",
            "postgres://admin:s3cretpass@db:5432/x",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        ]
    )
    redactor = Redactor(environ={})
    out = redactor.text(text)
    for value in [*SECRETS.values(), "s3cretpass", "b3BlbnNzaC1rZXktdjEAAAAA"]:
        assert value not in out
    assert out.count(REDACTED) >= 8
    assert "db_password = '" in out  # the name stays, so the panel knows something was there
    assert sum(redactor.removed.values()) >= 8


def test_redactor_env_values_and_dotenv():
    redactor = Redactor(environ={"MY_SERVICE_TOKEN": "plain-looking-value-123", "HOME": "/root"})
    assert "plain-looking-value-123" not in redactor.text("config: plain-looking-value-123")
    dotenv = redactor.file(".env.local", "DATABASE_URL=postgres://x\nexport DEBUG=1\n")
    assert "postgres://x" not in dotenv and "DEBUG=" + REDACTED in dotenv
    assert "/root" in redactor.text("home is /root")


# -- prices and estimates -----------------------------------------------------------------


def test_prices_load_exactly_and_idempotently(conn):
    assert load_prices(conn, DEFAULT_PRICES) == 7
    first = query_dicts(
        conn,
        "SELECT model, prompt_picodollars_per_tok, completion_picodollars_per_tok "
        "FROM model_prices ORDER BY model",
    )
    load_prices(conn, DEFAULT_PRICES)
    again = query_dicts(
        conn,
        "SELECT model, prompt_picodollars_per_tok, completion_picodollars_per_tok "
        "FROM model_prices ORDER BY model",
    )
    assert first == again
    opus = read_prices(conn)["anthropic/claude-opus-4.8"]
    assert opus.prompt_pico == 5_000_000 and opus.completion_pico == 25_000_000  # $5 and $25 per M


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda d: d["data"][1]["pricing"].pop("prompt"),
            r"data\[1\] \(anthropic/claude-opus-4.8\).pricing.prompt: missing",
        ),
        (
            lambda d: d["data"][2]["pricing"].update(completion="cheap"),
            r"data\[2\].*pricing.completion: not a decimal",
        ),
        (lambda d: d["data"][3]["pricing"].update(prompt="-0.1"), r"data\[3\].*non-negative"),
        (lambda d: d["data"].append(dict(d["data"][0])), r"data\[8\].*listed twice"),
    ],
)
def test_bad_price_file_names_the_field_and_keeps_old_prices(conn, tmp_path, mutate, message):
    load_prices(conn, DEFAULT_PRICES)
    document = json.loads(DEFAULT_PRICES.read_text())
    mutate(document)
    bad = tmp_path / "models.json"
    bad.write_text(json.dumps(document))
    with pytest.raises(PriceError, match=message):
        load_prices(conn, bad)
    assert conn.execute("SELECT count(*) FROM model_prices").fetchone()[0] == 7


def test_estimate_is_tokens_times_prices(conn):
    load_prices(conn, DEFAULT_PRICES)
    prices = read_prices(conn)
    panel = ["openai/gpt-5.5", "deepseek/deepseek-v4"]
    e = estimate_run(prices, panel, "anthropic/claude-opus-4.8", 10_000, 1_000, 4_000, 2)
    expected = (
        Decimal("0.00000125") * 10_000
        + Decimal("0.00001") * 1_000
        + Decimal("0.0000003") * 10_000
        + Decimal("0.0000012") * 1_000
        + Decimal("0.000005") * (10_000 + 2 * 1_000)
        + Decimal("0.000025") * 1_000
    )
    assert e.expected_micro == int(expected * 1_000_000)
    worst = (
        Decimal("0.00000125") * 10_000
        + Decimal("0.00001") * 4_000
        + Decimal("0.0000003") * 10_000
        + Decimal("0.0000012") * 4_000
        + Decimal("0.000005") * (10_000 + 2 * 4_000)
        + Decimal("0.000025") * 4_000
    )
    assert e.worst_run_micro == int(worst * 1_000_000) and e.worst_case_micro == 2 * e.worst_run_micro
    with pytest.raises(PriceError, match="no price in the catalog for vendor/unknown"):
        estimate_run(prices, ["vendor/unknown"], "anthropic/claude-opus-4.8", 10, 1, 1, 1)


def test_catalog_command_loads_prices(db_path, tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    shutil.copy(SEEDS_DIR / "time.json", seeds / "time.json")  # one seed: this test is about prices
    done = subprocess.run(
        [sys.executable, "-m", "router", "catalog", "--db", str(db_path), "--seeds", str(seeds)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "7 model prices" in done.stdout
    out = subprocess.run(
        ["sqlite3", str(db_path), "SELECT count(*) FROM model_prices"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "7"


def test_catalog_command_with_a_bad_price_file_writes_nothing(db_path, tmp_path):
    existing = connect(db_path)
    load_prices(existing, DEFAULT_PRICES)
    existing.close()
    document = json.loads(DEFAULT_PRICES.read_text())
    document["data"][4]["pricing"]["prompt"] = "free"
    bad = tmp_path / "models.json"
    bad.write_text(json.dumps(document))
    done = subprocess.run(
        [sys.executable, "-m", "router", "catalog", "--db", str(db_path), "--prices", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert (
        f"{bad}: data[4] (google/gemini-3.1-pro).pricing.prompt: not a decimal price: 'free'" in done.stderr
    )
    counts = sqlite3_shell(
        db_path, "SELECT (SELECT count(*) FROM tools) AS tools, (SELECT count(*) FROM model_prices) AS prices"
    )
    assert counts == [{"tools": 0, "prices": 7}]  # neither the catalog nor the prices changed


def test_config_errors_name_the_field(tmp_path):
    bad = tmp_path / "bg.toml"
    bad.write_text(
        (DEFAULT_PRICES.parent / "breakglass.toml")
        .read_text()
        .replace("session_max_invocations = 3", "session_max_invocations = -1")
    )
    with pytest.raises(ConfigError, match=r"cost.session_max_invocations"):
        load_settings(bad)


# -- context --------------------------------------------------------------------------------


def test_named_files_must_exist_inside_the_workspace(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert resolve_named(tmp_path, ["ok.py"]) == [(tmp_path / "ok.py").resolve()]
    with pytest.raises(ContextError, match=r"context_files\[1\] \(../etc/passwd\): outside the workspace"):
        resolve_named(tmp_path, ["ok.py", "../etc/passwd"])
    with pytest.raises(ContextError, match=r"context_files\[0\] \(gone.py\): no such file"):
        resolve_named(tmp_path, ["gone.py"])


def test_context_picks_relevant_files_within_bounds_and_scrubs(conn, settings, tmp_path):
    (tmp_path / "AGENTS.md").write_text("No Float in compute paths.\n")
    (tmp_path / "merge.py").write_text("def clean_merge(gap):\n    return gap  # cleanmerge preserves gap\n")
    (tmp_path / "unrelated.txt").write_text("nothing to see\n")
    (tmp_path / ".env").write_text(f"OPENROUTER_API_KEY={API_KEY}\n")
    (tmp_path / "settings.py").write_text(f"API_KEY = '{SECRETS['anthropic']}'  # cleanmerge gap\n")
    redactor = Redactor(environ={})
    ctx = assemble(conn, settings.context, tmp_path, "cleanmerge loses the gap", "code_bug", [], redactor)
    paths = [f.path for f in ctx.files]
    assert "merge.py" in paths and "settings.py" in paths
    assert ".env" not in paths and "unrelated.txt" not in paths and "AGENTS.md" not in paths
    assert ctx.constraints.startswith("No Float")
    assert SECRETS["anthropic"] not in "".join(f.text for f in ctx.files)


def test_fts_query_quotes_every_term():
    assert fts_query(["near", 'a"b']) == '"near" OR "a""b"'
    assert fts_query([]) is None


# -- views and docs -------------------------------------------------------------------------

BREAKGLASS_VIEWS = ("v_cost_per_session", "v_cost_per_day", "v_breakglass_recent")


def sqlite3_shell(db_path, sql):
    done = subprocess.run(["sqlite3", "-json", str(db_path), sql], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout or "[]")


def test_the_docs_document_the_server_and_its_views():
    from router.paths import SCHEMA_FILE
    from tests.docs_support import doc_text

    readme = doc_text("docs/break-glass.md")
    schema = SCHEMA_FILE.read_text()
    assert "context-router break-glass" in readme and "OPENROUTER_BASE_URL" in readme
    for view in BREAKGLASS_VIEWS:
        assert f"`{view}`" in readme and f"CREATE VIEW {view} AS" in schema
    for option in ("--config", "--workspace", "--session", "--session-max-usd", "--session-max-calls"):
        assert f"`{option}" in readme
    for option in ("--from FILE", "--fetch", "--as-of YYYY-MM-DD"):
        assert f"`context-router prices {option}`" in readme or f"`{option}`" in readme
