"""The MCP facade: the three meta-tools' definitions and handlers, the stdio and HTTP
server, the backends calls are forwarded to (processes, sessions, stderr), the circuit
breaker and the audit rows every call writes."""
