"""The workspace a client works in: its MCP root where it declares roots, else the router's
own (`serve --workspace`, else the router's working directory).

Backends whose declaration names ${WORKSPACE} (git, filesystem) run there
(router/facade/backends.py), and what cannot work there is said as unavailable
(router/backends/availability.py). A client that declares several roots works in the first one that
is a local directory.

How roots are asked for depends on the protocol version the client negotiated:
- up to 2025-11-25 (the initialize handshake): a `roots/list` request to the client, sent
  with the first search or call of the connection (stdio: the one client; HTTP: each
  Mcp-Session-Id) and kept until the client sends `notifications/roots/list_changed`;
- 2026-07-28 (roots deprecated by SEP-2577, not removed): no server-to-client requests and
  no roots/list_changed, so a call from a client declaring the `roots` capability is
  answered with an InputRequiredResult asking `roots/list`, and the client's retry carries
  its roots in `inputResponses` (the SDK's Client does this with its `list_roots_callback`):
  a backend always starts where the client is now. A search (what is callable) takes the
  roots the connection's client gave last, over stdio; it asks too when there were none, or
  over HTTP, where a 2026-07-28 request names no session to remember them for.
A client that does not declare `roots`, or whose answer fails or names no local directory,
gets the router's own workspace. Each new root is announced once per process (`on_root`:
serve says on stderr whether the servers that need a workspace can work there).
"""

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

logger = logging.getLogger(__name__)

# The key of the roots/list request in a 2026-07-28 InputRequiredResult.
ROOTS_INPUT_KEY = "roots"
# How long a client may take to list its roots before the router's own workspace is used.
ROOTS_TIMEOUT_S = 5.0
# Connections whose workspace is remembered (HTTP sessions come and go; stdio has one).
MAX_CONNECTIONS = 1024


def workspace_of_roots(roots: list[types.Root]) -> Path | None:
    """The first root that is a local directory (a file:// URI), or None."""
    for root in roots:
        parts = urlsplit(str(root.uri))
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            continue
        path = Path(unquote(parts.path))
        if path.is_absolute() and path.is_dir():
            return path.resolve()
    return None


class ClientWorkspaces:
    """Each client's workspace, for one router process."""

    def __init__(self, default: Path, on_root: Callable[[Path], None] | None = None) -> None:
        self.default = default
        # connection → the workspace its roots gave last (or the default)
        self._known: dict[str, Path] = {}
        self._on_root = on_root
        self._announced: set[Path] = set()

    def forget(self, connection: str) -> None:
        """The client said its roots changed: ask again on its next request."""
        self._known.pop(connection, None)

    async def of(
        self, ctx: Any, params: types.CallToolRequestParams, connection: str | None, *, fresh: bool
    ) -> Path | types.InputRequiredResult:
        """The workspace of the client making this request (`ctx`: the SDK's request context),
        or, on 2026-07-28, the InputRequiredResult that asks the client for its roots.
        `connection`: None where requests cannot be told apart by client; `fresh`: a call,
        which on 2026-07-28 asks every time."""
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return self.default
        known = self._known.get(connection) if connection is not None else None
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = (params.input_responses or {}).get(ROOTS_INPUT_KEY)
            if answer is not None:
                return self._remember(connection, self._answered(answer))
            if known is not None and not fresh:
                return known
            return types.InputRequiredResult(input_requests={ROOTS_INPUT_KEY: types.ListRootsRequest()})
        if known is None:
            known = self._remember(connection, await self._ask(ctx))
        return known

    def _remember(self, connection: str | None, workspace: Path) -> Path:
        if connection is not None:
            if len(self._known) >= MAX_CONNECTIONS:
                self._known.clear()
            self._known[connection] = workspace
        return workspace

    def _answered(self, answer: types.InputResponse) -> Path:
        if not isinstance(answer, types.ListRootsResult):
            logger.warning(
                "the client answered roots/list with %s: using %s", type(answer).__name__, self.default
            )
            return self.default
        return self._chosen(answer.roots)

    async def _ask(self, ctx: Any) -> Path:
        try:
            with anyio.fail_after(ROOTS_TIMEOUT_S):
                # on the request's own channel: over HTTP, the response stream of its POST
                result = await ctx.session.send_request(
                    types.ListRootsRequest(),
                    types.ListRootsResult,
                    metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
                )
        except (MCPError, TimeoutError, anyio.BrokenResourceError, ValueError) as exc:
            logger.warning(
                "the client's roots/list failed (%s): using %s", exc or type(exc).__name__, self.default
            )
            return self.default
        return self._chosen(result.roots)

    def _chosen(self, roots: list[types.Root]) -> Path:
        workspace = workspace_of_roots(roots)
        if workspace is None:
            if roots:
                logger.warning("none of the client's roots is a local directory: using %s", self.default)
            return self.default
        if self._on_root is not None and workspace not in self._announced:
            if len(self._announced) >= MAX_CONNECTIONS:
                self._announced.clear()
            self._announced.add(workspace)
            self._on_root(workspace)
        return workspace
