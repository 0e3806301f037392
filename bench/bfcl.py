"""The public benchmark: BFCL (Berkeley Function Calling Leaderboard) as a tool-retrieval set.

BFCL v4's single-turn categories ship, in the PyPI package `bfcl-eval` (Apache-2.0), every
question with the functions offered to the model and the function(s) a correct answer calls.
Pooling all offered functions into one catalog turns it into a retrieval task: for each
question, find the called function(s) among ~1,900 tools from hundreds of APIs.

The package itself pins heavy dependencies (torch via sentence-transformers, numpy 1.x), so
it is not installed: `python -m bench.bfcl` downloads the pinned wheel with pip (no
dependencies), reads the data files out of it, and writes
  bench/data/bfcl.catalog.jsonl  — a `--from` catalog (MCP tool objects, one per line)
  bench/queries/bfcl.jsonl       — {"id", "query", "relevant": [catalog names]}
Both outputs are committed, so `make bench` needs no network.
"""

import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from bench.paths import BFCL_CATALOG, BFCL_QUERIES

PACKAGE = "bfcl-eval==2026.3.23"
DATA_DIR = "bfcl_eval/data/"
# Single-turn categories with ground truth (multi-turn, memory and web search are agent
# loops, not one query → one tool).
CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
# BFCL writes Python/Java/JavaScript type names; the catalog wants JSON Schema.
TYPE_MAP = {
    "dict": "object",
    "HashMap": "object",
    "float": "number",
    "double": "number",
    "tuple": "array",
    "Array": "array",
    "ArrayList": "array",
    "String": "string",
    "char": "string",
    "Boolean": "boolean",
    "long": "integer",
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "array": "array",
    "object": "object",
}
# a longer task is pasted data, not a request (the converted sets are frozen with this bound)
MAX_QUERY_CHARS = 16_000


def json_schema(node):
    """A BFCL parameter schema as JSON Schema: mapped types, unknown types dropped."""
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "type":
            mapped = TYPE_MAP.get(value) if isinstance(value, str) else None
            if mapped:
                out["type"] = mapped
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {name: json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = json_schema(value)
        elif key == "required" and isinstance(value, list):
            out["required"] = [v for v in value if isinstance(v, str)]
        elif key in ("description", "enum", "default", "format", "minimum", "maximum"):
            out[key] = value
    return out


def user_text(question) -> str:
    turn = question[0] if question else []
    return "\n".join(m["content"] for m in turn if m.get("role") == "user").strip()


def convert(wheel: Path) -> tuple[list[dict], list[dict]]:
    """One catalog tool per function name (the first definition met: BFCL's later variants
    of a function reword its description), and one query per question."""
    tools: dict[str, dict] = {}
    queries: list[dict] = []
    with zipfile.ZipFile(wheel) as zf:
        for category in CATEGORIES:
            data = zf.read(f"{DATA_DIR}BFCL_v4_{category}.json").decode().splitlines()
            answers = zf.read(f"{DATA_DIR}possible_answer/BFCL_v4_{category}.json").decode().splitlines()
            truth = {a["id"]: a["ground_truth"] for a in map(json.loads, answers)}
            for entry in map(json.loads, data):
                for function in entry["function"]:
                    if function["name"] in tools:
                        continue
                    schema = json_schema(function.get("parameters") or {})
                    schema["type"] = "object"
                    tools[function["name"]] = {
                        "name": function["name"],
                        "description": function.get("description") or function["name"],
                        "inputSchema": schema,
                        "server": "bfcl",
                        "profile": "bfcl",
                    }
                called = {name for call in truth.get(entry["id"], []) for name in call}
                relevant = sorted(called & tools.keys())
                query = user_text(entry["question"])
                if relevant and query and len(query) <= MAX_QUERY_CHARS:
                    queries.append({"id": entry["id"], "query": query, "relevant": relevant})
    return sorted(tools.values(), key=lambda t: t["name"]), queries


def download_wheel(target: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            str(target),
            PACKAGE,
        ],
        check=True,
    )
    return next(target.glob("bfcl_eval-*.whl"))


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows))


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        wheel = Path(argv[0]) if argv else download_wheel(Path(tmp))
        tools, queries = convert(wheel)
    write_jsonl(BFCL_CATALOG, tools)
    write_jsonl(BFCL_QUERIES, queries)
    print(f"BFCL: {len(tools)} tools → {BFCL_CATALOG}; {len(queries)} queries → {BFCL_QUERIES}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
