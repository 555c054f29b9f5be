"""Errors a plugin raises on purpose.

They are the only exceptions the SDK turns into answers for the host: a ``RecordError``
becomes the contract's ``plugin-error`` (or a per-record error) with its kind, a
``ConfigError`` from ``create`` becomes the ``config-error`` the user sees. Any other
exception is a plugin fault, like a Rust panic: the component traps and the host discards
the instance, so a bug is never mistaken for a bad record.
"""

INVALID_RECORD = "invalid_record"
RETRIABLE = "retriable"
FATAL = "fatal"

KINDS = (INVALID_RECORD, RETRIABLE, FATAL)


class RecordError(Exception):
    """A record (or a whole batch, poll, write or flush) the plugin could not handle.

    ``kind`` tells the host what to do, as ``error-kind`` in wit/types.wit:
    ``INVALID_RECORD`` (default) applies the connector's error policy (dead-letter, skip or
    stop) to the record; ``RETRIABLE`` makes the host retry with backoff; ``FATAL`` stops
    the connector.
    """

    def __init__(self, message, kind=INVALID_RECORD):
        if kind not in KINDS:
            raise ValueError(f"kind must be {INVALID_RECORD!r}, {RETRIABLE!r} or {FATAL!r}, not {kind!r}")
        super().__init__(message)
        self.message = str(message)
        self.kind = kind

    @classmethod
    def invalid(cls, message):
        """The record is bad (the usual case)."""
        return cls(message, INVALID_RECORD)

    @classmethod
    def retriable(cls, message):
        """A transient failure (a busy or unreachable service) worth retrying."""
        return cls(message, RETRIABLE)

    @classmethod
    def fatal(cls, message):
        """The plugin cannot go on; the host fails the connector."""
        return cls(message, FATAL)

    def __eq__(self, other):
        # Tests compare errors by what the host would see.
        if not isinstance(other, RecordError):
            return NotImplemented
        return (self.kind, self.message) == (other.kind, other.message)

    def __hash__(self):
        return hash((self.kind, self.message))

    def __repr__(self):
        name = {INVALID_RECORD: "invalid", RETRIABLE: "retriable", FATAL: "fatal"}[self.kind]
        return f"RecordError.{name}({self.message!r})"


class ConfigError(Exception):
    """The configuration is refused; ``key`` names the offending key (dotted path), if one."""

    def __init__(self, message, key=None):
        super().__init__(message)
        self.message = str(message)
        self.key = key

    def __eq__(self, other):
        if not isinstance(other, ConfigError):
            return NotImplemented
        return (self.key, self.message) == (other.key, other.message)

    def __hash__(self):
        return hash((self.key, self.message))

    def __str__(self):
        return f"{self.key}: {self.message}" if self.key else self.message

    def __repr__(self):
        return f"ConfigError({self.message!r}, key={self.key!r})"
