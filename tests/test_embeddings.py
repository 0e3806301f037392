"""Vectors in the SQLite file: a load embeds every tool definition once, in its transaction,
with the real default model; unchanged tools are never encoded again; a new model re-embeds."""

import json
import shutil
import subprocess

import numpy as np
import pytest

from router.catalog import embeddings
from router.catalog.embeddings import catalog_model
from router.catalog.load import load_catalog
from router.catalog.model_vectors import quantize
from router.catalog.tool_text import embedding_text
from router.db import connect
from router.paths import SEEDS_DIR
from tests.conftest import project_env


class Counted:
    """The real model, counting the texts it is asked to encode; `identity` may be renamed to
    stand for another model's files."""

    def __init__(self, identity: str | None = None, fail: bool = False):
        self.model = catalog_model()
        assert self.model is not None, "the default model ships with the package"
        self.identity = identity or self.model.identity
        self.dim = self.model.dim
        self.texts: list[str] = []
        self.fail = fail

    def encode(self, texts: list[str]) -> np.ndarray:
        if self.fail:
            raise RuntimeError("model files unreadable")
        self.texts += texts
        return self.model.encode(texts)


def rows(conn) -> dict[str, tuple]:
    return {
        name: (model, dim, created)
        for name, model, dim, created in conn.execute(
            "SELECT tool, model, dim, created_at FROM v_tool_embeddings ORDER BY tool"
        )
    }


def user_catalog(tmp_path, tools: list[tuple[str, str]]):
    path = tmp_path / "mine.jsonl"
    path.write_text(
        "".join(
            json.dumps({"name": n, "description": d, "inputSchema": {"type": "object"}}) + "\n"
            for n, d in tools
        )
    )
    return path


def test_a_load_embeds_every_tool_with_the_catalog_model(conn):
    model = Counted()
    summary = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[], model=model)
    embedded = rows(conn)
    assert len(embedded) == summary.total and summary.embedded > 0
    assert {m for m, _, _ in embedded.values()} == {model.identity}
    assert {d for _, d, _ in embedded.values()} == {model.dim}
    # one definition, one vector, and one per distinct example text: nothing encoded twice
    distinct = conn.execute("SELECT count(DISTINCT definition_hash) FROM tools").fetchone()[0]
    examples = conn.execute("SELECT count(*) FROM example_embeddings").fetchone()[0]
    assert summary.embedded == distinct and summary.examples_embedded == examples > 0
    assert len(model.texts) == distinct + examples == len(set(model.texts))
    assert f"{summary.embedded} embedded" in summary.one_line()


def test_the_stored_vector_is_the_models_vector_of_name_words_and_description(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    name_words, description, scale, blob = conn.execute(
        "SELECT t.name_words, t.description, e.scale, e.vector FROM tools t "
        "JOIN tool_embeddings e USING (definition_hash) WHERE t.name = 'git_log'"
    ).fetchone()
    assert name_words == "git log"
    stored = np.frombuffer(blob, np.int8).astype(np.float32) * scale
    expected = catalog_model().encode([embedding_text(name_words, description)])[0]
    assert float(stored @ expected) / float(np.linalg.norm(stored)) > 0.995


def test_reloading_unchanged_tools_encodes_nothing_and_keeps_every_vector(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    before = rows(conn)
    model = Counted()
    summary = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[], model=model)
    assert model.texts == [] and summary.embedded == 0
    assert rows(conn) == before  # same rows, same created_at stamps


def test_a_changed_tool_is_embedded_again_alone_and_its_old_vector_dropped(conn, tmp_path):
    first = user_catalog(tmp_path, [("get-sum", "Add two integers."), ("get-product", "Multiply them.")])
    load_catalog(conn, seed_dir=None, user_files=[first])
    old_hash = conn.execute("SELECT definition_hash FROM tools WHERE name = 'get-sum'").fetchone()[0]
    changed = user_catalog(tmp_path, [("get-sum", "Add two numbers."), ("get-product", "Multiply them.")])
    model = Counted()
    load_catalog(conn, seed_dir=None, user_files=[changed], model=model)
    assert model.texts == ["get sum: Add two numbers."]
    hashes = {h for (h,) in conn.execute("SELECT definition_hash FROM tool_embeddings")}
    assert old_hash not in hashes and len(hashes) == 2


def test_a_new_model_re_embeds_everything_and_drops_the_old_models_vectors(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    other = Counted(identity="static:another-model:b3:00")
    summary = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[], model=other)
    assert summary.embedded + summary.examples_embedded == len(other.texts) > 0
    assert {m for m, _, _ in rows(conn).values()} == {other.identity}
    assert conn.execute("SELECT DISTINCT model FROM example_embeddings").fetchall() == [(other.identity,)]


def test_a_model_that_fails_leaves_the_old_catalog_and_its_vectors_whole(conn, tmp_path):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    before = rows(conn)
    extra = user_catalog(tmp_path, [("get-sum", "Add two numbers.")])
    with pytest.raises(RuntimeError, match="unreadable"):
        load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[extra], model=Counted(fail=True))
    assert rows(conn) == before
    assert conn.execute("SELECT count(*) FROM tools WHERE name = 'get-sum'").fetchone()[0] == 0


def test_a_large_load_shows_its_progress_on_stderr(conn, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(embeddings, "PROGRESS_MIN_TOOLS", 3)
    monkeypatch.setattr(embeddings, "ENCODE_BATCH", 2)
    tools = [(f"tool-{i}", f"Does thing number {i}.") for i in range(5)]
    load_catalog(conn, seed_dir=None, user_files=[user_catalog(tmp_path, tools)])
    assert capsys.readouterr().err.splitlines() == [
        "embedding tools: 2/5",
        "embedding tools: 4/5",
        "embedding tools: 5/5",
    ]


def test_quantized_vectors_keep_their_direction():
    vectors = catalog_model().encode(["list files in a directory", "", "git log"])
    codes, scales = quantize(vectors)
    restored = codes.astype(np.float32) * scales[:, None]
    assert codes.dtype == np.int8 and np.abs(codes).max() <= 127
    for original, back in zip(vectors, restored):
        if np.linalg.norm(original) == 0:  # no known token: all zeros, scale 0
            assert not back.any()
        else:
            assert float(original @ back) / float(np.linalg.norm(back)) > 0.995


def test_catalog_embeds_the_seeds_with_no_network_at_all(tmp_path, venv_bin):
    """`catalog` in a network namespace with no interfaces: the model is local."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n is not permitted here: {probe.stderr.decode().strip()}")
    db = tmp_path / "offline.db"
    command = ["unshare", "-n", str(venv_bin / "context-router"), "catalog", "--db", str(db)]
    first = subprocess.run(
        command, capture_output=True, text=True, env=project_env(), check=False, timeout=300
    )
    assert first.returncode == 0, first.stderr
    assert " embedded" in first.stdout
    again = subprocess.run(
        command, capture_output=True, text=True, env=project_env(), check=False, timeout=300
    )
    assert again.returncode == 0, again.stderr
    assert "embedded" not in again.stdout  # a reload of unchanged seeds recomputes no vector
    offline = connect(db)
    assert offline.execute("SELECT count(*) FROM v_tool_embeddings WHERE model IS NULL").fetchone() == (0,)
    offline.close()
