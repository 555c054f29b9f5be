"""The exported ``reader`` resource (componentize-py looks it up in a module named after the
exported interface): the author's Source, poll by poll."""

import turnpike_glue as glue
from turnpike._plugin import SOURCE
from turnpike._source import run_poll
from wit_world.exports import source as wit

PLUGIN = glue.plugin_class(SOURCE)


class Reader(wit.Reader):
    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def create(cls, config, position):
        return cls(glue.create(PLUGIN, SOURCE, config, position))

    def poll(self, max_records):
        writer, errors = glue.call(run_poll, self.inner, max_records)
        return wit.SourceBatch(*writer.columns(), glue.record_errors(errors))
