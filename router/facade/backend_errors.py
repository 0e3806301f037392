"""What can go wrong with a backend, each with the audit outcome it is recorded as and
whether it counts against the backend's process (for the per-server breaker)."""

from router.errors import RouterError
from router.facade import audit


class BackendError(RouterError):
    """A backend could not serve a call; counts as a failure for the circuit breaker.

    `process_failure`: the backend's process itself failed (it did not start, crashed or
    hung), which counts against the whole backend, not only the tool called."""

    outcome = audit.BACKEND_FAILED
    process_failure = False


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


class UnsetVariableError(BackendError):
    """A ${env:NAME} a server needs is not set in the router's environment."""

    outcome = audit.NOT_CONFIGURED
