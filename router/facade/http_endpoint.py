"""An HTTP backend's address: its URL, the headers it is reached with, and its transport.

A str (the expanded URL) so the backend pool passes it where it always passed the URL; it
also carries the expanded headers (secrets from ${env:NAME} references included: never
logged) and whether the server speaks Streamable HTTP or the older HTTP+SSE transport.
"""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from router.servers import ServerConfig


class HttpEndpoint(str):
    headers: dict[str, str]
    sse: bool

    @classmethod
    def of(cls, config: ServerConfig, expand: Callable[[str], str]) -> "HttpEndpoint":
        endpoint = cls(expand(config.url or ""))
        endpoint.headers = {name: expand(value) for name, value in config.headers.items()}
        endpoint.sse = config.http_transport == "sse"
        return endpoint

    def __repr__(self) -> str:  # the URL only: header values may be secrets
        return f"HttpEndpoint({str(self)!r})"


@asynccontextmanager
async def connect(endpoint: str) -> AsyncIterator[TransportStreams]:
    """The SDK's client transport for the endpoint (a plain str: Streamable HTTP, no headers)."""
    headers = getattr(endpoint, "headers", None) or None
    if getattr(endpoint, "sse", False):
        async with sse_client(str(endpoint), headers=headers) as streams:
            yield streams
        return
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(str(endpoint), http_client=http) as streams:
            yield streams
