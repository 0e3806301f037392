"""The fresh held-out sets: public tool-retrieval data nobody on this project tuned on.

Added after MetaTool and LiveMCPBench had been looked at (they became development sets), and
converted, checked for sanity (counts, every relevant name a catalog tool) and frozen before
the router's figures on them were ever computed (docs/benchmarks.md has the protocol). Each
is read from a checkout or bare clone of its public repository at the commit named here and
written under bench/public/, which git ignores (fetched data stays out of the project's commits).

- ToolBench (OpenBMB/ToolBench, Apache-2.0; the solvable test queries as StableToolBench,
  THUNLP-MT/StableToolBench, Apache-2.0, ships them): RapidAPI endpoints with their
  parameters, the function-calling shape. Every endpoint offered to any of the 765 test
  queries (6 groups: one tool, one category, several categories) forms one catalog; each
  query's relevant endpoints are its "relevant APIs".
- ToolAlpaca (tangqiaoyu/ToolAlpaca, Apache-2.0): the functions of the 21 real and simulated
  public APIs of its evaluation sets, with their parameters; each instruction's relevant
  functions are those its golden answer calls.
- Gorilla APIBench, HuggingFace part (ShishirPatil/gorilla, Apache-2.0): the model-hub APIs
  as tools (domain, functionality, description, arguments); each evaluation instruction's
  relevant tool is the API its answer loads.

Tools are named `<server>__<tool>` when the source groups them under a service (ToolBench's
RapidAPI tool, ToolAlpaca's API): their own names alone ("Search", "Get") say little and
clash, and routers that merge servers name them so.

Usage: python -m bench.fresh_sets toolbench|toolalpaca|gorilla GIT_DIR
"""

import json
import re
import sys
from pathlib import Path

from jsonschema import Draft202012Validator

from bench.paths import (
    GORILLA_CATALOG,
    GORILLA_QUERIES,
    TOOLALPACA_CATALOG,
    TOOLALPACA_QUERIES,
    TOOLBENCH_CATALOG,
    TOOLBENCH_QUERIES,
)
from bench.public_sets import catalog_name, convert_main, git_show

TOOLBENCH = {
    "commit": "aa4ed9f4737ad98bd706663f01d63623c3427812",
    "catalog": TOOLBENCH_CATALOG,
    "queries": TOOLBENCH_QUERIES,
}
TOOLALPACA = {
    "commit": "189069998d64a7baf1b4a1c3c4b2e75eb9d05532",
    "catalog": TOOLALPACA_CATALOG,
    "queries": TOOLALPACA_QUERIES,
}
GORILLA = {
    "commit": "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8",
    "catalog": GORILLA_CATALOG,
    "queries": GORILLA_QUERIES,
}

TOOLBENCH_GROUPS = (
    "G1_instruction",
    "G1_category",
    "G1_tool",
    "G2_instruction",
    "G2_category",
    "G3_instruction",
)
# RapidAPI's parameter types as JSON Schema types; anything else (DATE, TIME, BINARY) is text.
RAPIDAPI_TYPES = {"NUMBER": "number", "BOOLEAN": "boolean", "ARRAY": "array", "OBJECT": "object"}
SERVER_NAME_MAX = 64


def server_name(text: str) -> str:
    return catalog_name(text)[:SERVER_NAME_MAX].strip("_") or "server"


def tool_name(server: str, name: str) -> str:
    return catalog_name(f"{server}__{name}")


def checked(schema: dict) -> dict:
    Draft202012Validator.check_schema(schema)
    return schema


def convert_toolbench(git_dir: Path) -> tuple[list[dict], list[dict]]:
    commit = TOOLBENCH["commit"]
    tools: dict[str, dict] = {}
    queries = []
    for group in TOOLBENCH_GROUPS:
        for line in json.loads(git_show(git_dir, commit, f"solvable_queries/test_instruction/{group}.json")):
            for api in line["api_list"]:
                name = tool_name(api["tool_name"], api["api_name"])
                tools.setdefault(name, _rapidapi_tool(name, api))
            relevant = sorted({tool_name(tool, api) for tool, api in line["relevant APIs"]})
            queries.append(
                {"id": f"{group}-{line['query_id']}", "query": line["query"].strip(), "relevant": relevant}
            )
    return sorted(tools.values(), key=lambda t: t["name"]), queries


def _rapidapi_tool(name: str, api: dict) -> dict:
    properties, required = {}, []
    for is_required, key in ((True, "required_parameters"), (False, "optional_parameters")):
        for parameter in api.get(key) or []:
            arg = str(parameter["name"])
            kind = RAPIDAPI_TYPES.get(str(parameter.get("type", "")).upper(), "string")
            properties[arg] = {"type": kind, "description": str(parameter.get("description") or "").strip()}
            if is_required:
                required.append(arg)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = sorted(set(required))
    return {
        "name": name,
        "description": (api.get("api_description") or "").strip() or api["api_name"],
        "inputSchema": checked(schema),
        "server": server_name(api["tool_name"]),
        "profile": "toolbench",
    }


# ToolAlpaca writes each function as "<description>\nParameters: {json}\nOutput: ...", each
# parameter as "Required. string. <description>" or "Optional. integer. <description>".
_FUNCTION_PARTS = re.compile(
    r"^(?P<description>.*?)\nParameters: (?P<parameters>\{.*?\})\nOutput:", re.DOTALL
)
_PARAMETER = re.compile(
    r"^(?P<need>Required|Optional)\. (?P<type>[A-Za-z]+)\. ?(?P<description>.*)$", re.DOTALL
)
JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def convert_toolalpaca(git_dir: Path) -> tuple[list[dict], list[dict]]:
    commit = TOOLALPACA["commit"]
    tools, queries = [], []
    for part in ("eval_real", "eval_simulated"):
        for api in json.loads(git_show(git_dir, commit, f"data/{part}.json")):
            server = server_name(api["Name"])
            # the functions are the API's endpoints; Function_Description also holds the output
            # formats ("components")
            functions = list(api["Function_Projection"])
            for function in functions:
                tools.append(_toolalpaca_tool(server, function, api["Function_Description"][function]))
            for number, (instruction, answer) in enumerate(zip(api["Instructions"], api["Golden_Answers"])):
                called = {step["Action"] for step in answer} & set(functions)
                if called and instruction.strip():
                    queries.append(
                        {
                            "id": f"{part}-{server}-{number}",
                            "query": instruction.strip(),
                            "relevant": sorted(tool_name(server, f) for f in called),
                        }
                    )
    return sorted(tools, key=lambda t: t["name"]), queries


def _toolalpaca_tool(server: str, function: str, text: str) -> dict:
    parts = _FUNCTION_PARTS.match(text)
    description = (parts["description"] if parts else text.split("\nParameters:")[0]).strip() or function
    parameters = json.loads(parts["parameters"]) if parts else {}
    properties, required = {}, []
    for arg, spec in parameters.items():
        found = _PARAMETER.match(str(spec))
        kind = found["type"].lower() if found else "string"
        properties[arg] = {
            "type": kind if kind in JSON_TYPES else "string",
            "description": (found["description"] if found else str(spec)).strip(),
        }
        if found and found["need"] == "Required":
            required.append(arg)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = sorted(required)
    return {
        "name": tool_name(server, function),
        "description": description,
        "inputSchema": checked(schema),
        "server": server,
        "profile": "toolalpaca",
    }


_INSTRUCTION = re.compile(r"###Instruction:\s*(?P<text>.*?)\s*(?:###|$)", re.DOTALL)


def convert_gorilla(git_dir: Path) -> tuple[list[dict], list[dict]]:
    commit = GORILLA["commit"]
    tools: dict[str, dict] = {}
    for line in git_show(git_dir, commit, "data/api/huggingface_api.jsonl").splitlines():
        if line.strip():
            api = json.loads(line)
            tools.setdefault(catalog_name(api["api_name"]), _hub_tool(api))
    queries = []
    for number, line in enumerate(
        git_show(git_dir, commit, "data/apibench/huggingface_eval.json").splitlines()
    ):
        if not line.strip():
            continue
        item = json.loads(line)
        found = _INSTRUCTION.search(item["code"])
        name = catalog_name(item["api_data"]["api_name"])
        if found and found["text"] and name in tools:
            queries.append({"id": f"huggingface-{number}", "query": found["text"], "relevant": [name]})
    return sorted(tools.values(), key=lambda t: t["name"]), queries


def _hub_tool(api: dict) -> dict:
    arguments = api.get("api_arguments")
    if isinstance(arguments, dict):
        names = list(arguments)
    elif isinstance(arguments, list):
        names = [str(a) for a in arguments]
    else:
        names = [a.strip() for a in str(arguments or "").split(",")]
    properties = {catalog_name(n)[:64]: {"type": "string"} for n in names if catalog_name(n).strip("_")}
    purpose = " ".join(str(api.get(k) or "").strip() for k in ("domain", "functionality")).strip()
    description = " ".join(p for p in (purpose + ".", str(api.get("description") or "").strip()) if p != ".")
    return {
        "name": catalog_name(api["api_name"]),
        "description": description or api["api_name"],
        "inputSchema": checked({"type": "object", "properties": properties}),
        "server": "huggingface",
        "profile": "gorilla",
    }


CONVERTERS = {
    "toolbench": (convert_toolbench, TOOLBENCH),
    "toolalpaca": (convert_toolalpaca, TOOLALPACA),
    "gorilla": (convert_gorilla, GORILLA),
}


if __name__ == "__main__":
    sys.exit(convert_main(CONVERTERS, sys.argv[1:]))
