"""No restart (issue 14): a running router picks up a changed servers file for calls. A new
server is callable, a removed one is stopped and refused, a changed one is restarted with its
new declaration, and a file that does not load leaves the running config as it was."""

import anyio
import pytest

from tests.facade_support import alive, text_of, wait_until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def declarations(facade) -> tuple[str, str]:
    """The servers file as written, and the same without [servers.misbehaving]."""
    text = facade.servers_file.read_text(encoding="utf-8")
    start, end = text.index("[servers.misbehaving]"), text.index("[servers.absent]")
    return text, text[:start] + text[end:]


def with_tag(text: str, tag: str) -> str:
    """misbehaving declared with one more environment variable: a changed declaration."""
    return text.replace("FLAKY_FLAG_FILE =", f'RELOAD_TAG = "{tag}", FLAKY_FLAG_FILE =', 1)


async def whoami(router) -> tuple[bool, str]:
    result = await router.call_tool("mcp_call_tool", {"toolName": "whoami", "args": {}})
    return bool(result.is_error), text_of(result)


async def eventually(router, predicate, timeout_s: float = 10.0) -> tuple[bool, str]:
    with anyio.fail_after(timeout_s):
        while True:
            answer = await whoami(router)
            if predicate(answer):
                return answer
            await anyio.sleep(0.25)


async def test_servers_file_changes_apply_to_calls_without_a_restart(facade):
    full, without = declarations(facade)
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:
        failed, first = await whoami(router)
        assert not failed

        facade.servers_file.write_text(without, encoding="utf-8")
        _, refused = await eventually(router, lambda answer: answer[0])
        assert "its server 'misbehaving' is not set up: no servers file declares its server" in refused
        assert await wait_until(lambda: not alive(int(first)), timeout_s=10)  # removed: stopped

        facade.servers_file.write_text(with_tag(full, "v2"), encoding="utf-8")
        _, second = await eventually(router, lambda answer: not answer[0])  # added: callable
        assert second != first

        facade.servers_file.write_text(with_tag(full, "v3"), encoding="utf-8")
        _, third = await eventually(router, lambda answer: not answer[0] and answer[1] != second)
        assert await wait_until(lambda: not alive(int(second)), timeout_s=10)  # changed: restarted

        facade.servers_file.write_text("[servers.broken\n", encoding="utf-8")
        await anyio.sleep(1.5)  # past the once-a-second check
        assert await whoami(router) == (False, third)  # a file that does not load changes nothing
        # and time, declared all along, still answers
        time_now = await router.call_tool(
            "mcp_call_tool", {"toolName": "get_current_time", "args": {"timezone": "UTC"}}
        )
        assert not time_now.is_error
