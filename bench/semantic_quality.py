"""Quality of a static embedding model for tool retrieval: alone and fused with plain FTS5.

Chooses the model the router ships (router/semantic/build_model.py makes candidates). Per set
of bench/quality.py's SETS, each model is measured as:
- cosine alone: a query's vector against each tool's, tools as "name words: description";
- fused with plain FTS5 (bench/plain_fts5.py) by issue 21's formula over the union of both
  top-100 lists: α × (BM25 / the query's best BM25) + (1 − α) × cosine, for each α in ALPHAS.
Recall@5 and nDCG@10 per set, and their macro over the development sets (which may choose
the model) and the held-out sets (reported, never used to choose).

Each model's cost is reported too: the median time to encode one query, in-process.

Usage: python -m bench.semantic_quality MODEL_DIR|onnx... [--dev] [--json OUT]
  (onnx: the transformer of the extra semantic-onnx, router/semantic/onnx_model.py)
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from bench.plain_fts5 import PlainFts5
from bench.quality import (
    DEVELOPMENT,
    HELD_OUT,
    MULTI_STEP_K,
    MULTI_STEP_SET,
    SETS,
    catalog_tools,
    set_present,
)
from router.catalog.evaluation import RANK_DEPTH, ndcg_at, read_query_file, recall_at
from router.catalog.tool_text import name_words
from router.semantic.onnx_model import OnnxModel, default_onnx_model
from router.semantic.static_model import StaticModel

Model = StaticModel | OnnxModel
# queries timed for a model's cost per query (one at a time, as search encodes them)
TIMED_QUERIES = 200

# Each side's candidates (issue 21: the union of both top-100 lists).
CANDIDATES = 100
ALPHAS = (0.2, 0.3, 0.4, 0.5)
# bm25() of the plain FTS5 table, larger is better (SQLite's bm25() is negative).
SCORED_SQL = """
SELECT name, -bm25(docs, 0.0, 3.0, 1.0, 0.5) FROM docs WHERE docs MATCH :match
ORDER BY bm25(docs, 0.0, 3.0, 1.0, 0.5), name LIMIT :k
"""


def tool_text(tool: dict) -> str:
    return f"{name_words(tool['name'])}: {tool.get('description') or ''}"


class LexicalScores(PlainFts5):
    """Plain FTS5 with its BM25 scores, not only its order."""

    def scored(self, query: str, k: int = CANDIDATES) -> dict[str, float]:
        match = self.match_expression(query)
        if match is None:
            return {}
        return dict(self.conn.execute(SCORED_SQL, {"match": match, "k": k}))


def fused_ranking(bm25: dict[str, float], cosines: np.ndarray, names: list[str], alpha: float) -> list[str]:
    best = max(bm25.values(), default=0.0)
    nearest = np.argsort(-cosines, kind="stable")[:CANDIDATES]
    pool = set(bm25) | {names[i] for i in nearest}
    index = {name: i for i, name in enumerate(names)}

    def score(name: str) -> float:
        lexical = bm25.get(name, 0.0) / best if best > 0 else 0.0
        return alpha * lexical + (1 - alpha) * float(cosines[index[name]])

    return sorted(pool, key=lambda name: (-score(name), name))[:RANK_DEPTH]


def load_model(argument: str) -> tuple[str, Model]:
    if argument == "onnx":
        model = default_onnx_model()
        return model.name, model
    return Path(argument).name, StaticModel.load(argument)


def ms_per_query(model: Model, queries: list[str]) -> float:
    times = []
    for query in queries[:TIMED_QUERIES]:
        start = time.perf_counter()
        model.encode([query])
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def measure_set(spec: tuple, models: dict[str, Model]) -> dict:
    name, seed_dir, user_file, queries_file, role = spec
    tools = catalog_tools(seed_dir, user_file)
    names = [t["name"] for t in tools]
    queries = read_query_file(queries_file, need_relevant=True)
    lexical = LexicalScores(tools)
    bm25 = [lexical.scored(q.query) for q in queries]
    rankings: dict[str, list[list[str]]] = {
        "plain FTS5": [sorted(s, key=lambda n, s=s: (-s[n], n))[:RANK_DEPTH] for s in bm25]
    }
    for label, model in models.items():
        cosines = model.encode([q.query for q in queries]) @ model.encode([tool_text(t) for t in tools]).T
        rankings[f"{label} cosine"] = [
            [names[i] for i in np.argsort(-row, kind="stable")[:RANK_DEPTH]] for row in cosines
        ]
        for alpha in ALPHAS:
            rankings[f"{label} fused α{alpha}"] = [
                fused_ranking(s, row, names, alpha) for s, row in zip(bm25, cosines)
            ]
    scores = {
        method: (
            statistics.fmean(recall_at(r, q.relevant, 5) for r, q in zip(ranked, queries)),
            statistics.fmean(ndcg_at(r, q.relevant, RANK_DEPTH) for r, q in zip(ranked, queries)),
        )
        for method, ranked in rankings.items()
    }
    # the multi-step tasks' metric (issue 21), on the set it is measured on
    multi_step = (
        {
            method: statistics.fmean(recall_at(r, q.relevant, MULTI_STEP_K) for r, q in zip(ranked, queries))
            for method, ranked in rankings.items()
        }
        if name == MULTI_STEP_SET
        else {}
    )
    return {
        "set": name,
        "role": role,
        "tools": len(tools),
        "queries": len(queries),
        "scores": scores,
        f"recall@{MULTI_STEP_K}": multi_step,
    }


def macro(results: list[dict], role: str) -> dict[str, tuple[float, float]]:
    of_role = [r for r in results if r["role"] == role]
    if not of_role:
        return {}
    return {
        method: (
            statistics.fmean(r["scores"][method][0] for r in of_role),
            statistics.fmean(r["scores"][method][1] for r in of_role),
        )
        for method in of_role[0]["scores"]
    }


def report(results: list[dict]) -> str:
    methods = list(results[0]["scores"])
    short = [r["set"].split(" (")[0] for r in results]
    lines = ["| method | " + " | ".join(short) + " | dev macro | held-out macro |"]
    lines.append("|---" * (len(short) + 3) + "|")
    macros = {role: macro(results, role) for role in (DEVELOPMENT, HELD_OUT)}
    for method in methods:
        cells = [f"{r['scores'][method][0]:.3f}/{r['scores'][method][1]:.3f}" for r in results]
        for role in (DEVELOPMENT, HELD_OUT):
            m = macros[role].get(method)
            cells.append(f"**{m[0]:.3f}/{m[1]:.3f}**" if m else "–")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    text = "R@5/nDCG@10\n\n" + "\n".join(lines)
    for r in results:
        if r[f"recall@{MULTI_STEP_K}"]:
            text += f"\n\n{r['set']}, recall@{MULTI_STEP_K} (the multi-step tasks' metric): " + "; ".join(
                f"{method} {value:.3f}" for method, value in r[f"recall@{MULTI_STEP_K}"].items()
            )
    return text


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic_quality")
    parser.add_argument("models", nargs="+", help="model2vec-format model directories, or onnx")
    parser.add_argument("--dev", action="store_true", help="development sets only")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    models = dict(load_model(argument) for argument in args.models)
    specs = [s for s in SETS if set_present(s) and not (args.dev and s[-1] == HELD_OUT)]
    results = [measure_set(spec, models) for spec in specs]
    print(report(results))
    queries = [q.query for q in read_query_file(specs[0][3], need_relevant=True)]
    for label, model in models.items():
        print(f"{label}: {ms_per_query(model, queries):.3f} ms to encode one query (median)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
