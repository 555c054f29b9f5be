"""A sink that POSTs records to a webhook, as one JSON array per flush:
``[{"topic", "partition", "offset", "key", "value"}, …]`` (key and value as text).

Records are only buffered in ``write``; ``flush`` sends them. The host commits offsets only
after ``flush`` succeeds, so a webhook that is down (a network error or a non-2xx answer)
makes ``flush`` raise a retriable error: the host retries, commits nothing meanwhile, and the
buffer is kept until a 2xx. A request the host refuses (the URL's host is not in the
connector's ``http.allow``) cannot succeed by retrying: that is fatal.
"""

from turnpike import ConfigError, RecordError, Sink, export, http

KEYS = ("url", "timeout")


def _text(b):
    return None if b is None else b.decode("utf-8", "replace")


class Webhook(Sink):
    def create(self, config):
        for key in config:
            if key not in KEYS:
                raise ConfigError(f"unknown key (expected one of {', '.join(KEYS)})", key=key)
        self.url = config.get("url")
        try:
            http.check_url(self.url)
        except http.HttpError as e:
            raise ConfigError(e.message, key="url") from None
        self.timeout = config.get("timeout")
        if self.timeout is not None and (isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or self.timeout <= 0):
            raise ConfigError("expected seconds to wait for the webhook (a positive number)", key="timeout")
        self.buffer = []

    def write(self, records):
        for r in records:
            self.buffer.append({"topic": r.topic, "partition": r.partition, "offset": r.offset, "key": _text(r.key), "value": _text(r.value)})

    def flush(self):
        if not self.buffer:
            return
        try:
            answer = http.post(self.url, self.buffer, timeout=self.timeout)
        except http.HttpError as e:
            if e.refused:
                raise RecordError.fatal(f"{self.url}: {e.message}") from None
            raise RecordError.retriable(f"{self.url}: {e.message}") from None
        if not answer.ok:
            raise RecordError.retriable(f"{self.url} answered {answer.status}")
        self.buffer.clear()


export(Webhook)
