"""Public tool-retrieval sets besides BFCL, converted to a `--from` catalog and a queries file.

Each set is read from its public repository (a git checkout or bare clone at the commit named
below) and written under bench/public/, which git ignores: data a developer fetched stays out of
the project's commits. `make bench` measures the sets it finds there and names the others.

- MetaTool (HowieHwong/MetaTool, MIT): 199 ChatGPT-plugin-style tools, name and description
  only; its ToolE single-tool queries are conversational ("Can I find academic papers on
  this topic?"). A fixed sample of SAMPLE_QUERIES of the 20,614 keeps the file small.
- LiveMCPBench (icip-cas/LiveMCPBench, Apache-2.0): 527 real tools of 70 real MCP servers with
  their inputSchemas; 95 multi-step tasks annotated with the tools they need. A tool name two
  servers share is prefixed with its server in the catalog, and a task naming it counts
  every such tool as relevant.

Usage: python -m bench.public_sets metatool|livemcpbench GIT_DIR
"""

import csv
import io
import json
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from bench.bfcl import MAX_QUERY_CHARS, write_jsonl
from bench.paths import LIVEMCPBENCH_CATALOG, LIVEMCPBENCH_QUERIES, METATOOL_CATALOG, METATOOL_QUERIES

SAMPLE_QUERIES = 1_000
SEED = 20261201

METATOOL = {
    "commit": "35e81bb7576826e980c80fed8f8c0a2b4a1e6fbb",
    "catalog": METATOOL_CATALOG,
    "queries": METATOOL_QUERIES,
}
LIVEMCPBENCH = {
    "commit": "a928e57d1ee7a25579b9a7036030faffff72d15b",
    "catalog": LIVEMCPBENCH_CATALOG,
    "queries": LIVEMCPBENCH_QUERIES,
}


def git_show(git_dir: Path, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def write_set(name: str, tools: list[dict], queries: list[dict], where: dict) -> None:
    """Write a converted set after checking it: tools and queries there are, and every relevant
    name a query gives is a tool of the catalog (a wrong name would silently cap every metric)."""
    names = {tool["name"] for tool in tools}
    unknown = sorted({n for query in queries for n in query["relevant"]} - names)
    if not tools or not queries or unknown:
        raise SystemExit(
            f"{name}: {len(tools)} tools, {len(queries)} queries, unknown relevant names {unknown[:5]}"
        )
    write_jsonl(where["catalog"], tools)
    write_jsonl(where["queries"], queries)
    print(f"{name}: {len(tools)} tools → {where['catalog']}; {len(queries)} queries → {where['queries']}")


def catalog_name(name: str) -> str:
    """A tool name as MCP allows it (letters, digits, '_', '.', '-'): 'PDF&URLTool' → 'PDF_URLTool'."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", name)[:128]


def usable_schema(schema: object) -> dict:
    """The tool's inputSchema, or, when it is not a valid JSON Schema object (a few servers
    publish e.g. `exclusiveMinimum: true`), its argument names and descriptions only: all
    that search reads of it."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return {"type": "object", "properties": {}}
    try:
        Draft202012Validator.check_schema(schema)
        return schema
    except SchemaError:
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        return {
            "type": "object",
            "properties": {
                name: {"description": str(arg.get("description", ""))} if isinstance(arg, dict) else {}
                for name, arg in properties.items()
            },
        }


def convert_metatool(git_dir: Path) -> tuple[list[dict], list[dict]]:
    commit = METATOOL["commit"]
    descriptions = json.loads(git_show(git_dir, commit, "dataset/plugin_des.json"))
    tools = [
        {
            "name": catalog_name(name),
            "description": description.strip() or name,
            "inputSchema": {"type": "object", "properties": {}},
            "server": "metatool",
            "profile": "metatool",
        }
        for name, description in sorted(descriptions.items())
    ]
    rows = list(csv.DictReader(io.StringIO(git_show(git_dir, commit, "dataset/data/all_clean_data.csv"))))
    rows = [r for r in rows if r["Tool"] in descriptions and r["Query"].strip()]
    sample = sorted(random.Random(SEED).sample(range(len(rows)), SAMPLE_QUERIES))
    queries = [
        {
            "id": f"metatool-{i}",
            "query": rows[i]["Query"].strip(),
            "relevant": [catalog_name(rows[i]["Tool"])],
        }
        for i in sample
    ]
    return tools, queries


def convert_livemcpbench(git_dir: Path) -> tuple[list[dict], list[dict]]:
    commit = LIVEMCPBENCH["commit"]
    servers = json.loads(git_show(git_dir, commit, "tools/LiveMCPTool/tools.json"))
    listed = [
        (entry["name"], tool)
        for entry in servers
        for server_tools in entry["tools"].values()
        for tool in server_tools["tools"]
    ]
    shared = {name for name, n in Counter(t["name"] for _, t in listed).items() if n > 1}
    tools, by_name = [], {}
    for server, tool in listed:
        name = catalog_name(f"{server}__{tool['name']}" if tool["name"] in shared else tool["name"])
        schema = usable_schema(tool.get("inputSchema"))
        tools.append(
            {
                "name": name,
                "description": (tool.get("description") or "").strip() or tool["name"],
                "inputSchema": schema,
                "server": catalog_name(server)[:64],
                "profile": "livemcpbench",
            }
        )
        by_name.setdefault(tool["name"], []).append(name)
    tasks = json.loads(git_show(git_dir, commit, "annotated_data/all_annotations.json"))
    queries = []
    for task in tasks:
        named = re.findall(r"^\s*\d+\.\s*(.+?)\s*$", task["Annotator Metadata"]["Tools"], re.MULTILINE)
        relevant = sorted({catalog for n in named for catalog in by_name.get(n, [])})
        if relevant and len(task["Question"].strip()) <= MAX_QUERY_CHARS:
            queries.append({"id": task["task_id"], "query": task["Question"].strip(), "relevant": relevant})
    return sorted(tools, key=lambda t: t["name"]), queries


CONVERTERS = {"metatool": (convert_metatool, METATOOL), "livemcpbench": (convert_livemcpbench, LIVEMCPBENCH)}


def convert_main(converters: dict, argv: list[str]) -> int:
    """python -m bench.<module> NAME GIT_DIR: convert one set from its repository."""
    name, git_dir = argv[0], Path(argv[1])
    convert, where = converters[name]
    tools, queries = convert(git_dir)
    write_set(name, tools, queries, where)
    return 0


if __name__ == "__main__":
    sys.exit(convert_main(CONVERTERS, sys.argv[1:]))
