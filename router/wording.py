"""Counts in messages, in words: "1 tool", "2 tools", never "1 tools"."""


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """'1 server', '0 servers', '3 model prices'; plural when adding 's' is wrong."""
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"
