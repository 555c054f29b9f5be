"""The exported ``writer`` resource (componentize-py looks it up in a module named after the
exported interface): the author's Sink."""

import turnpike_glue as glue
from turnpike._layout import decode
from turnpike._plugin import SINK
from turnpike._sink import pairs, run_flush, run_write
from wit_world.exports import sink as wit

PLUGIN = glue.plugin_class(SINK)


class Writer(wit.Writer):
    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def create(cls, config):
        return cls(glue.create(PLUGIN, SINK, config))

    def write(self, batch):
        records = decode(batch.data, batch.topics, batch.records, batch.positions, batch.headers)
        return glue.record_errors(glue.call(run_write, self.inner, records))

    def flush(self):
        glue.call(run_flush, self.inner)

    def assigned(self, partitions):
        self.inner.assigned(pairs(partitions))

    def revoked(self, partitions):
        self.inner.revoked(pairs(partitions))
