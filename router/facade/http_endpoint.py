"""An HTTP backend's address: its expanded URL, the headers it is reached with (secrets from
${env:NAME} references included: never in its repr, so never logged) and whether the server
speaks Streamable HTTP or the older HTTP+SSE transport."""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from router.backends.servers import ServerConfig


@dataclass(frozen=True)
class HttpEndpoint:
    url: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # values may be secrets
    sse: bool = False

    @classmethod
    def of(cls, config: ServerConfig, expand: Callable[[str], str]) -> "HttpEndpoint":
        return cls(
            url=expand(config.url or ""),
            headers={name: expand(value) for name, value in config.headers.items()},
            sse=config.http_transport == "sse",
        )


@asynccontextmanager
async def connect(endpoint: HttpEndpoint) -> AsyncIterator[TransportStreams]:
    """The SDK's client transport for the endpoint."""
    headers = endpoint.headers or None
    if endpoint.sse:
        async with sse_client(endpoint.url, headers=headers) as streams:
            yield streams
        return
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(endpoint.url, http_client=http) as streams:
            yield streams
