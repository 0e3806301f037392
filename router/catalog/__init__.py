"""The catalog: seeds and user catalogs loaded into the SQLite file in one transaction,
ranked search over its FTS5 index, a tool's full schema, harvests from live backends, and
the quality measures search is judged by."""
