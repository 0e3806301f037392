"""Small MCP servers of our own that fail, crash or hang on purpose (for facade tests)."""
