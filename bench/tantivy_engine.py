"""tantivy (a maintained Rust search engine, PyPI `tantivy`) over the same tools: the speed
reference of issue 21, measured in the same run as the router and plain FTS5.

Configured like plain FTS5 (bench/plain_fts5.py): the name in words ×3, the description ×1,
the argument text ×0.5, English stemming, the query's words with stop words out, OR-ed. The
index lives in memory; a query's words are passed as plain terms, never as query syntax.
"""

import re

import tantivy

from router.catalog.query_words import stop_words
from router.catalog.tool_text import arg_text, name_words

FIELDS = {"name_words": 3.0, "description": 1.0, "arg_text": 0.5}
# the writer's memory budget while indexing (tantivy's minimum is 15 MB a thread)
WRITER_HEAP_BYTES = 200_000_000
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class Tantivy:
    def __init__(self, tools: list[dict]):
        """tools: MCP tool objects (name, description, inputSchema)."""
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("name", stored=True, tokenizer_name="raw")
        for field in FIELDS:
            builder.add_text_field(field, tokenizer_name="en_stem")
        self.index = tantivy.Index(builder.build())
        writer = self.index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
        for t in tools:
            writer.add_document(
                tantivy.Document(
                    name=t["name"],
                    name_words=name_words(t["name"]),
                    description=t.get("description") or "",
                    arg_text=arg_text(t.get("inputSchema") or {}),
                )
            )
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()
        self.stops = stop_words()

    def rank(self, query: str, k: int = 10) -> list[str]:
        words = [w for w in dict.fromkeys(_WORD.findall(query.lower())) if w not in self.stops]
        if not words:
            return []
        parsed, _errors = self.index.parse_query_lenient(" ".join(words), list(FIELDS), field_boosts=FIELDS)
        hits = self.searcher.search(parsed, k).hits
        return [self.searcher.doc(address)["name"][0] for _score, address in hits]
