"""Secrets removed from text before it leaves the machine or reaches the database or a log:
the redactor (redactor.py), the provider token shapes it finds in linear time
(secret_shapes.py), the literals that let it skip a pattern (regex_literals.py), and the
log filter `serve` puts on its handlers (logs.py)."""
