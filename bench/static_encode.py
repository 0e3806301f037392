"""The static model's loader: its pure-Python tokenizer against the `tokenizers` library.

The router encodes with static-embed-runner's LiteTokenizer (router/semantic/static_model.py);
the `tokenizers` library (Rust, what model2vec uses, the loader before issue 21's change) is
timed beside it with the same vectors and mean, in the same run:
- one query: each query of the seeded and everyday sets encoded alone, in order, on a freshly
  loaded model (its first pass: words new to the process), then again (a search's words are
  mostly words searches have used);
- the seeded catalog's tool texts in one call, and SYNTHETIC_TOOLS registry-shaped synthetic
  tools (bench/synthetic.py) in the catalog load's batches, each on a fresh model;
- agreement: on every tool text and query of every set present, whether the token ids the
  vectors are made of (truncated, unknown tokens dropped) are the library's.

Run alone: `python -m bench.static_encode` (needs `tokenizers`: the bench extra).
"""

import json
import statistics
import time
from collections.abc import Callable

from bench import synthetic
from bench.paths import QUERIES_DIR, SEEDED_QUERIES
from bench.quality import SETS, catalog_tools, set_present
from bench.report import Options, Section, markdown_table
from router.catalog.embeddings import ENCODE_BATCH
from router.catalog.tool_text import embedding_text, name_words
from router.semantic.static_model import MODEL_DIR, StaticModel

SYNTHETIC_TOOLS = 100_000
QUERY_PASSES = 2
EVERYDAY_QUERIES = QUERIES_DIR / "everyday.jsonl"


def lite_model() -> StaticModel:
    return StaticModel.load(MODEL_DIR)


def tokenizers_model() -> StaticModel:
    """The same model with the `tokenizers` library's ids (truncated, unknown dropped)."""
    from tokenizers import Tokenizer

    model = StaticModel.load(MODEL_DIR)
    tokenizer = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(model._max_length)
    unk = model._unk_id

    def token_ids(texts: list[str]) -> list[list[int]]:
        encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
        return [[i for i in e.ids if i != unk] for e in encodings]

    model.token_ids = token_ids  # type: ignore[method-assign]
    return model


LOADERS: dict[str, Callable[[], StaticModel]] = {
    "static-embed-runner LiteTokenizer (shipped)": lite_model,
    "tokenizers (Rust, the loader before)": tokenizers_model,
}


def tool_texts(tools: list[dict]) -> list[str]:
    return [embedding_text(name_words(t["name"]), t.get("description") or "") for t in tools]


def queries_of(path) -> list[str]:
    return [json.loads(line)["query"] for line in path.read_text().splitlines() if line.strip()]


def per_query_us(model: StaticModel, queries: list[str]) -> list[float]:
    """Median µs of each pass over the queries, one encode call per query."""
    medians = []
    for _ in range(QUERY_PASSES):
        times = []
        for query in queries:
            started = time.perf_counter()
            model.encode([query])
            times.append(time.perf_counter() - started)
        medians.append(statistics.median(times) * 1e6)
    return medians


def seconds(encode: Callable[[], object]) -> float:
    started = time.perf_counter()
    encode()
    return time.perf_counter() - started


def batched(model: StaticModel, texts: list[str]) -> None:
    for start in range(0, len(texts), ENCODE_BATCH):
        model.encode(texts[start : start + ENCODE_BATCH])


def speed() -> tuple[list[list[object]], dict]:
    queries = queries_of(SEEDED_QUERIES) + queries_of(EVERYDAY_QUERIES)
    seeded = tool_texts(catalog_tools(SETS[1][1], None))
    big = tool_texts(synthetic.catalog(SYNTHETIC_TOOLS))
    rows, data = [], {}
    for label, load in LOADERS.items():
        first, repeated = per_query_us(load(), queries)
        seeded_s = seconds(lambda load=load: load().encode(seeded))
        model = load()
        big_s = seconds(lambda model=model: batched(model, big))
        data[label] = {
            "query_first_us": first,
            "query_repeated_us": repeated,
            "seeded_s": seeded_s,
            "synthetic_s": big_s,
        }
        rows.append(
            [
                label,
                f"{first:.0f}",
                f"{repeated:.0f}",
                f"{seeded_s * 1e3:.0f}",
                f"{big_s:.1f} ({SYNTHETIC_TOOLS / big_s:,.0f}/s)",
            ]
        )
    return rows, data


def agreement() -> tuple[list[list[object]], dict]:
    ours, theirs = lite_model(), tokenizers_model()
    texts: dict[str, list[str]] = {}
    for name, seed_dir, user_file, queries_file, _role in SETS:
        if set_present((name, seed_dir, user_file, queries_file, _role)):
            texts[f"{name}: tools"] = tool_texts(catalog_tools(seed_dir, user_file))
            texts[f"{name}: queries"] = queries_of(queries_file)
    texts["everyday queries"] = queries_of(EVERYDAY_QUERIES)
    rows, data = [], {}
    for label, group in texts.items():
        same = sum(a == b for a, b in zip(ours.token_ids(group), theirs.token_ids(group)))
        data[label] = [same, len(group)]
        rows.append([label, f"{same:,} / {len(group):,}"])
    same, total = (sum(v[i] for v in data.values()) for i in (0, 1))
    rows.append(["**all**", f"**{same:,} / {total:,}** ({same / total:.2%})"])
    return rows, data


def run(options: Options) -> Section:
    speed_rows, speed_data = speed()
    agree_rows, agree_data = agreement()
    markdown = (
        markdown_table(
            [
                "tokenizer",
                "one query, µs (first pass)",
                "one query, µs (again)",
                "seeded catalog, ms",
                f"{SYNTHETIC_TOOLS:,} synthetic tools, s",
            ],
            speed_rows,
        )
        + "\n\nToken ids identical to the `tokenizers` library's (what the vectors are made of):\n\n"
        + markdown_table(["texts", "identical"], agree_rows)
    )
    return Section(
        "Static model: encoding speed and tokenizer agreement",
        markdown,
        {"speed": speed_data, "agreement": agree_data},
    )


if __name__ == "__main__":
    print(run(Options(sizes=(), write=False)).markdown)
