"""`context-router configs`: deterministic generation, committed files up to date, and a bad
input refused before anything is written."""

import shutil

from router.cli import main
from router.configs.generate import GATEWAY_FILE, OPENCODE_FILE, generate, stale_files
from router.configs.inputs import read_inputs
from router.paths import CONFIGS_DIR, SEEDS_DIR
from router.paths import SHIPPED_SERVERS_FILE as SERVERS_FILE


def test_committed_configs_are_exactly_what_generation_produces():
    assert stale_files(generate(read_inputs()), CONFIGS_DIR) == []
    assert main(["configs", "--check"]) == 0


def test_same_input_same_bytes(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    assert main(["configs", "--out", str(first)]) == 0
    assert main(["configs", "--out", str(second)]) == 0
    for name in (OPENCODE_FILE, GATEWAY_FILE):
        assert (first / name).read_bytes() == (second / name).read_bytes()
        assert (first / name).read_bytes() == (CONFIGS_DIR / name).read_bytes()


def test_check_reports_a_hand_edited_file(tmp_path, capsys):
    assert main(["configs", "--out", str(tmp_path)]) == 0
    path = tmp_path / GATEWAY_FILE
    path.write_text(path.read_text().replace("port: 3000", "port: 3001"))
    assert main(["configs", "--out", str(tmp_path), "--check"]) == 1
    assert f"{path}: out of date" in capsys.readouterr().out


def test_a_changed_catalog_changes_the_gateway_rules(tmp_path):
    seeds = tmp_path / "seeds"
    shutil.copytree(SEEDS_DIR, seeds)
    (seeds / "time.json").unlink()
    configs = generate(read_inputs(seeds, SERVERS_FILE))
    assert '"get_current_time"' in (CONFIGS_DIR / GATEWAY_FILE).read_text()
    assert '"get_current_time"' not in configs.files[GATEWAY_FILE]


def test_a_bad_seed_is_named_and_nothing_is_written(tmp_path, capsys):
    seeds = tmp_path / "seeds"
    shutil.copytree(SEEDS_DIR, seeds)
    (seeds / "time.json").write_text('{"server": "time", "profile": "core"')
    out = tmp_path / "out"
    assert main(["configs", "--out", str(out)]) == 0
    before = {name: (out / name).read_bytes() for name in (OPENCODE_FILE, GATEWAY_FILE)}
    assert main(["configs", "--out", str(out), "--seeds", str(seeds)]) == 2
    assert "time.json" in capsys.readouterr().err
    assert {name: (out / name).read_bytes() for name in before} == before


def test_a_relative_data_dir_is_refused(tmp_path, capsys):
    assert main(["configs", "--out", str(tmp_path), "--data-dir", "data"]) == 2
    assert "--data-dir 'data': must be an absolute path" in capsys.readouterr().err
    assert not (tmp_path / GATEWAY_FILE).exists()


def test_the_docs_document_the_command_and_the_measured_numbers():
    """Docs that cannot drift: the options, the companions, and the token figures quoted."""
    import json

    from router.agents.roles import ROLE_MATRIX
    from router.configs.companions import COMPANIONS, CONTEXT_MODE
    from router.configs.naming import router_entry_name
    from router.configs.surface import offered_tools
    from tests.docs_support import doc_text

    section = doc_text("docs/configs.md")
    for text in ("context-router configs", "--check", "--out", "--data-dir", "port 3000"):
        assert text in section, text
    for companion in COMPANIONS:
        assert f"`{companion.name}`" in section
    assert f"{sum(CONTEXT_MODE.tool_tokens.values()):,} tokens" in section

    config = json.loads((CONFIGS_DIR / OPENCODE_FILE).read_text(encoding="utf-8"))
    routers = [name for name in config["mcp"] if name.startswith("router-")]
    offered = offered_tools(routers, [c for c in COMPANIONS if config["mcp"][c.name]["enabled"]])
    per_role = [
        sum(t for name, t in offered.items() if name.startswith(f"{router_entry_name(r)}_"))
        for r in ROLE_MATRIX
    ]
    assert f"{min(per_role)} to {max(per_role)} tokens" in section
    assert f"{sum(offered.values()):,} for everything offered" in section
