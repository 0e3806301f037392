"""The router's log under a flood (router/facade/log_guard.py): each kind of line is let
through REPEAT_BURST times per window, the rest dropped and counted on the next line of that
kind; a failure is described without the secrets its text may quote."""

import logging

from router.facade.log_guard import RepeatLimiter, describe_failure


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def records(logger_name: str, template: str, count: int) -> list[logging.LogRecord]:
    return [
        logging.LogRecord(logger_name, logging.WARNING, __file__, 1, template, (index,), None)
        for index in range(count)
    ]


def test_each_kind_of_line_is_limited_alone_and_the_dropped_ones_are_counted_later():
    clock = Clock()
    limiter = RepeatLimiter(burst=3, window_s=10.0, clock=clock)
    noisy = [limiter.filter(r) for r in records("uvicorn.error", "Exception in ASGI application %d", 100)]
    other = [limiter.filter(r) for r in records("asyncio", "socket.accept() failed %d", 2)]
    assert noisy.count(True) == 3 and noisy[:3] == [True] * 3
    assert other == [True, True]  # another kind is not silenced by the noisy one
    clock.now = 10.5
    [later] = records("uvicorn.error", "Exception in ASGI application %d", 1)
    assert limiter.filter(later)
    assert later.getMessage() == (
        "Exception in ASGI application 0 [97 more like this were not logged in the last 10 s]"
    )


def test_a_failure_is_described_by_its_type_and_text_without_secrets():
    failure = ValueError("bad line: Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789")
    described = describe_failure(failure)
    assert described.startswith("ValueError: bad line: Authorization: Bearer ")
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in described
    group = ExceptionGroup("unhandled errors in a TaskGroup", [OSError(24, "Too many open files")])
    assert describe_failure(group) == "OSError: [Errno 24] Too many open files"
    assert describe_failure(TimeoutError()) == "TimeoutError"


def test_a_failure_whose_text_cannot_be_read_is_described_by_its_type():
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    assert describe_failure(Unprintable()) == "Unprintable"
