"""break-glass: the last-resort multi-model panel behind a strict, concurrency-safe cost gate.

Data flow: gate (trigger + tier evidence) → classify → context (redacted) → estimate from the
catalog's prices → confirmation (elicitation or one-time token) → reserve the worst case in
the ledger (BEGIN IMMEDIATE) → OpenRouter Fusion, or the router's own fan-out → validated
answer → settle with the provider's usage.cost. Every step leaves rows in the SQLite file.
"""
