"""Enriches JSON records from an HTTP service: for each record, ``GET {url}/{record key}`` and
put the JSON answer under ``field`` (default ``lookup``).

A 404 means "nothing known about this key": the record passes unchanged. A request the host
refuses (the service's host is not in the connector's ``http.allow``) cannot succeed by
retrying: fatal, with the host's reason. Anything else that goes wrong (unreachable, a 5xx,
an answer that is not JSON) is retriable: the host retries with backoff.
"""

from urllib.parse import quote

from turnpike import ConfigError, RecordError, Transform, export, http

KEYS = ("url", "field", "timeout")


class Lookup(Transform):
    def create(self, config):
        for key in config:
            if key not in KEYS:
                raise ConfigError(f"unknown key (expected one of {', '.join(KEYS)})", key=key)
        url = config.get("url")
        try:
            http.check_url(url)
        except http.HttpError as e:
            raise ConfigError(e.message, key="url") from None
        self.url = url.rstrip("/")
        self.field = config.get("field", "lookup")
        if not isinstance(self.field, str) or not self.field:
            raise ConfigError("name the field to put the answer under", key="field")
        self.timeout = config.get("timeout")
        if self.timeout is not None and (isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or self.timeout <= 0):
            raise ConfigError("expected seconds to wait for the service (a positive number)", key="timeout")

    def transform(self, record):
        data = record.json()
        if not isinstance(data, dict):
            raise RecordError.invalid("the value is not a JSON object")
        if record.key is None:
            raise RecordError.invalid("the record has no key to look up")
        url = f"{self.url}/{quote(record.key.decode('utf-8', 'replace'), safe='')}"
        try:
            answer = http.get(url, headers={"accept": "application/json"}, timeout=self.timeout)
        except http.HttpError as e:
            if e.refused:
                raise RecordError.fatal(e.message) from None
            raise RecordError.retriable(f"{url}: {e.message}") from None
        if answer.status == 404:
            return record
        if not answer.ok:
            raise RecordError.retriable(f"{url} answered {answer.status}")
        try:
            data[self.field] = answer.json()
        except ValueError:
            raise RecordError.retriable(f"{url} answered with something that is not JSON") from None
        return record.with_value(data)


export(Lookup)
