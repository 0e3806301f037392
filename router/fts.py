"""FTS5 query text built from words, never from syntax a caller wrote."""


def fts_string(word: str) -> str:
    """An FTS5 string literal: the word in double quotes, inner quotes doubled. Inside one, '*',
    ':', '-', NEAR, AND and parentheses are only characters."""
    return '"' + word.replace('"', '""') + '"'


def fts_or_query(words: list[str]) -> str:
    """Any of the words (each an FTS5 string); '' for no words."""
    return " OR ".join(fts_string(word) for word in words)
