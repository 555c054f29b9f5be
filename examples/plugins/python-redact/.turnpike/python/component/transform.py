"""The exported `transformer` resource (componentize-py looks it up in a module named after the
exported interface). Wraps the author's Transform subclass from the `plugin` module."""

import json

import plugin  # noqa: F401  (the author's module; importing it registers its Transform)
from componentize_py_types import Err
from turnpike import ConfigError, registered
from turnpike._layout import Encoder, decode
from turnpike._transform import run
from wit_world.exports import transform as wit
from wit_world.imports import types

_KINDS = {"invalid": types.ErrorKind.INVALID_RECORD, "retriable": types.ErrorKind.RETRIABLE, "fatal": types.ErrorKind.FATAL}


class Transformer(wit.Transformer):
    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def create(cls, config):
        try:
            parsed = json.loads(config) if config else {}
            inner = registered()()
            inner.create(parsed)
        except ConfigError as e:
            raise Err(types.ConfigError(e.key, e.message))
        except Exception as e:
            raise Err(types.ConfigError(None, f"{type(e).__name__}: {e}"))
        return cls(inner)

    def transform(self, batch):
        records = decode(batch.data, batch.topics, batch.records, batch.positions, batch.headers)
        outputs, errors = run(self.inner, records)
        enc = Encoder()
        for index, record in outputs:
            enc.push(index, record)
        errs = [types.RecordError(i, types.PluginError(_KINDS[kind], message)) for i, kind, message in errors]
        return types.OutputBatch(bytes(enc.data), enc.topics, enc.records, enc.timestamps, enc.headers, errs)
