"""Errors a plugin raises on purpose."""

INVALID = "invalid"
RETRIABLE = "retriable"
FATAL = "fatal"


class RecordError(Exception):
    """This record cannot be processed.

    ``kind`` tells the host what to do: ``"invalid"`` (default) applies the connector's error
    policy to this record; ``"retriable"`` asks the host to retry the batch with backoff;
    ``"fatal"`` stops the connector.
    """

    def __init__(self, message, kind=INVALID):
        if kind not in (INVALID, RETRIABLE, FATAL):
            raise ValueError(f"kind must be 'invalid', 'retriable' or 'fatal', not {kind!r}")
        super().__init__(message)
        self.message = str(message)
        self.kind = kind


class ConfigError(Exception):
    """The configuration is refused; ``key`` names the offending key (dotted path)."""

    def __init__(self, message, key=None):
        super().__init__(message)
        self.message = str(message)
        self.key = key
