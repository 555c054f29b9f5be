"""The exported ``forwarding-transform`` resource (contract 0.1.4; componentize-py looks it up
in a module named after the exported interface): the author's Transform, batch by batch, with
the parts an output takes unchanged from its input named instead of copied. Hosts since 0.1.4
call this one; older hosts call ``transform.py``."""

import turnpike_glue as glue
from turnpike._layout import decode
from turnpike._plugin import TRANSFORM
from turnpike._transform import run_batch
from wit_world.exports import forwarding_transform as wit
from wit_world.imports import turnpike_plugin_types as types

PLUGIN = glue.plugin_class(TRANSFORM)


class Transformer(wit.Transformer):
    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def create(cls, config):
        return cls(glue.create(PLUGIN, TRANSFORM, config))

    def transform(self, batch):
        records = decode(batch.data, batch.topics, batch.records, batch.positions, batch.headers)
        writer, errors = glue.call(run_batch, self.inner, records, True)
        outputs = types.OutputBatch(*writer.columns(), glue.record_errors(errors))
        return wit.ForwardingBatch(outputs, writer.forwarded)
