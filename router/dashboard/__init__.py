"""`context-router dashboard`: a read-only Datasette over the router's SQLite file."""
