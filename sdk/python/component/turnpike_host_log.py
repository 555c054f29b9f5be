"""``turnpike.log`` over the ``turnpike:plugin/log`` import, inside the component only (the glue
installs ``write`` as the sink), so ``turnpike.log`` itself imports nothing generated and
works natively."""

from wit_world.imports import log as host

_LEVELS = {"trace": host.Level.TRACE, "debug": host.Level.DEBUG, "info": host.Level.INFO,
           "warn": host.Level.WARN, "error": host.Level.ERROR}


def write(level, message, fields):
    """Hands one line to the host: ``level`` one of ``turnpike.log.LEVELS``, ``fields`` a list
    of ``(key, value)`` text pairs."""
    host.log(_LEVELS[level], message, fields)
