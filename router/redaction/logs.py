"""The router's log lines, redacted: a warning may quote what a backend wrote (a stray line on
its stdout, its error, a traceback's message), and the router's stderr is a log that must not
carry a secret (router/redaction/redactor.py)."""

import logging
import threading

from router.redaction.redactor import Redactor, redacted

# A traceback is kept from its end (where its message is), at most this long.
MAX_TRACEBACK_CHARS = 8000


class RedactingFilter(logging.Filter):
    """Rewrites each record's message (and traceback) redacted, before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redacted(record.getMessage()), None
        if record.exc_info:
            trace = logging.Formatter().formatException(record.exc_info)
            if len(trace) > MAX_TRACEBACK_CHARS:
                trace = trace[-MAX_TRACEBACK_CHARS:].partition("\n")[2]
            record.exc_text, record.exc_info = Redactor().text(trace), None
        return True


def prepare_redaction() -> None:
    """For `serve`: the log lines redacted from now on, and the redactor's patterns (detect-
    secrets' plugins, a tenth of a second or more to import and compile) loaded in the
    background, so the first error redacted on the event loop does not wait for them."""
    redact_logs()
    threading.Thread(target=Redactor().text, args=("",), name="load-redactor", daemon=True).start()


def redact_logs(logger: logging.Logger | None = None) -> None:
    """Every handler of `logger` (default: the root's, as logging.basicConfig set them up)."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
