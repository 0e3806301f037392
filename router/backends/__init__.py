"""The backend MCP servers the router knows how to start: their declarations (the shipped
file and the user's layer), whether each can run here, the programs they need, and the
`doctor` checks that say what stands between this machine and a working server."""
