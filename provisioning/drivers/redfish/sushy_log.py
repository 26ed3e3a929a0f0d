"""sushy's log lines are DEBUG here: they narrate a request that the driver reports anyway.

sushy logs what it is about to raise, and loudly: a wrong BMC password is an ERROR
("Authentication to the session service failed") plus three WARNINGs (no session path,
falling back to basic auth, basic auth refused), at every attempt. RedfishClient turns
each of sushy's exceptions into a BMCError with a technician's message, and its caller
decides what that is: a refusal recorded on the node and logged once at WARNING (the
power refresh, a failed operation), a retry, or a bug that still logs at ERROR with its
traceback from Corral's own loggers. At ERROR, sushy's copy made an expected answer look
like a fault (issue 29: 63 such lines in an hour of `make run` for one wrong password).

The lines stay available for debugging a BMC conversation: at LOG_LEVEL=DEBUG they are
written, as DEBUG.
"""

from __future__ import annotations

import logging


class AsDebug(logging.Filter):
    """Re-level a record to DEBUG, and drop it where its logger does not want DEBUG (the
    logger's level was checked against the record's original level, before filters)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno <= logging.DEBUG:
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


AS_DEBUG = AsDebug()


def quiet_sushy() -> None:
    """Put AsDebug on every sushy logger that exists once sushy is imported (a logger's
    filters do not apply to its children's records, so `sushy` alone would not do).
    Idempotent: a filter already there is not added twice."""
    loggers = logging.root.manager.loggerDict
    for name, logger in list(loggers.items()):
        if (name == "sushy" or name.startswith("sushy.")) and isinstance(logger, logging.Logger):
            logger.addFilter(AS_DEBUG)
