"""Identity of JSON values: RFC 8785 canonical bytes, hashed with blake3, tagged 'b3:'.

The one place where "the same definition" is defined: key order, whitespace and number
spelling never change a hash.
"""

from collections.abc import Iterable
from typing import Any

import blake3
import rfc8785

HASH_PREFIX = "b3:"


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of a JSON value."""
    return rfc8785.dumps(value)


def b3_hex(data: bytes) -> str:
    return HASH_PREFIX + blake3.blake3(data).hexdigest()


def b3_hex_of_chunks(chunks: Iterable[bytes]) -> str:
    """b3_hex of the chunks' concatenation, without building it (a model's files are ~9 MB)."""
    hasher = blake3.blake3()
    for chunk in chunks:
        hasher.update(chunk)
    return HASH_PREFIX + hasher.hexdigest()


def content_hash(value: Any) -> str:
    """b3:<hex> of the canonical bytes of a JSON value."""
    return b3_hex(canonical_bytes(value))
