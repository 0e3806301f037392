"""What can go wrong with a backend, each with the audit outcome it is recorded as and
whether it counts against the backend's process (for the per-server breaker)."""

from router.errors import RouterError
from router.facade import audit
from router.redaction.redactor import redacted


class BackendError(RouterError):
    """A backend could not serve a call; counts as a failure for the circuit breaker.

    `process_failure`: the backend's process itself failed (it did not start, crashed or
    hung), which counts against the whole backend, not only the tool called.
    `counted_by_call`: the call that hears of it counts it on the breakers; False for a
    failed start (counted once, by the start, however many calls waited for it) and for a
    clean exit (no failure at all)."""

    outcome = audit.BACKEND_FAILED
    process_failure = False
    counted_by_call = True

    def __init__(self, message: str) -> None:
        # what the backend said (its error, its stderr's last words) is redacted before the
        # message goes anywhere: a tool result, an audit or breaker row, a log line
        super().__init__(redacted(message))


class MissingProgramError(BackendError):
    outcome = audit.MISSING_PROGRAM
    process_failure = True


class BackendStartError(BackendError):
    process_failure = True


class BackendTimeoutError(BackendError):
    """A start or a call that took too long; the backend's process is ended."""

    outcome = audit.TIMEOUT
    process_failure = True


class BackendCrashedError(BackendError):
    """The process exited (or closed its stdout) while a call was in flight."""

    process_failure = True


class BackendStoppedError(BackendError):
    """A start the router itself ended (the declaration changed, the router is stopping)
    before it finished: not the backend's failure."""

    counted_by_call = False


class BackendExitedError(BackendError):
    """The process exited on its own with status 0 after a call was written to it, without
    answering: a clean exit is not a crash and never counts toward a breaker, but the call
    was not completed (a read-only one is sent again, once, to a new process)."""

    outcome = audit.NOT_COMPLETED
    counted_by_call = False


class UnsetVariableError(BackendError):
    """A ${env:NAME} a server needs is not set in the router's environment."""

    outcome = audit.NOT_CONFIGURED
