"""The agents kit: the role matrix, the cached prompt prefix, OpenCode permissions,
typed handoffs, A2A agent cards, the task DAG and provider request bodies."""
