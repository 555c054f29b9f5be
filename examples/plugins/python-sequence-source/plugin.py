"""A source counting 0, 1, 2, …: one ``{"n": i, "source": name}`` record (key ``str(i)``) per
number, its position ``str(i)``, so a restarted connector carries on right after the last
number Kafka stored."""

from turnpike import ConfigError, Record, Source, emit, export

KEYS = ("name", "limit", "per_poll")


def _count(config, key, default, least):
    """An optional whole number of at least ``least``."""
    value = config.get(key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(f"expected a whole number of at least {least}, got {value!r}", key=key)
    return value


class Sequence(Source):
    def create(self, config, position):
        for key in config:
            if key not in KEYS:
                raise ConfigError(f"unknown key (expected one of {', '.join(KEYS)})", key=key)
        self.name = config.get("name")
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError("name this sequence (text), e.g. name: orders", key="name")
        self.limit = _count(config, "limit", None, 0)
        self.per_poll = _count(config, "per_poll", 100, 1)
        if position is None:
            self.next = 0
        else:
            try:
                self.next = int(position.decode("ascii")) + 1
            except (UnicodeDecodeError, ValueError):
                raise ConfigError(f"the stored position {position!r} is not a number this source wrote") from None

    def poll(self, max_records):
        count = min(max_records, self.per_poll)
        if self.limit is not None:
            count = min(count, self.limit - self.next)
        out = []
        for i in range(self.next, self.next + max(count, 0)):
            out.append(emit(Record({"n": i, "source": self.name}, key=str(i)), str(i)))
        self.next += len(out)
        return out


export(Sequence)
