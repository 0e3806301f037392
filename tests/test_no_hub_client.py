"""Issue 21: the default install's semantic search needs no model-hub client. A catalog load
and a search through the CLI, in a fresh process, embed with the shipped static model and
import none of the hub's or the native tokenizer's modules."""

import json
import subprocess
import sys

# top-level packages the default path must never import: hub clients, the native tokenizer and
# weights reader it used to need, and what would pull them (transformers, model2vec, torch)
NEVER_IMPORTED = (
    "huggingface_hub",
    "hf_xet",
    "tokenizers",
    "safetensors",
    "transformers",
    "model2vec",
    "torch",
    "onnxruntime",
)
# static-embed-runner's downloader (urllib): the loader uses its tokenizer and reader only
NEVER_IMPORTED_MODULES = ("static_embed_runner.hub",)

CATALOG_THEN_SEARCH = """
import json, sys
from router.cli import main
db = sys.argv[1]
assert main(["catalog", "--db", db]) == 0
assert main(["search", "--db", db, "--json", "--explain", "--limit", "5", "add two numbers"]) == 0
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_a_catalog_load_and_a_search_embed_without_any_hub_client(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", CATALOG_THEN_SEARCH, str(tmp_path / "fresh.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    modules = set(json.loads(out.stderr.strip().splitlines()[-1]))
    imported = sorted(m for m in modules if m.split(".")[0] in NEVER_IMPORTED or m in NEVER_IMPORTED_MODULES)
    assert imported == []
    # the semantic part really ran, with the pure-Python tokenizer
    assert "static_embed_runner.hf_tokenizer_lite" in modules
    hits = json.loads(out.stdout[out.stdout.index("[") :])
    assert hits and all(hit["explain"]["semantic"] > 0 for hit in hits)
