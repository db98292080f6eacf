"""JSON messages as dataclasses: `from_json` checks each field's JSON type and raises
`MessageError` naming the message and field; `to_json` writes the message back.

Keys a message does not name are kept in its `more` dict (where it has one, `keep_more`) or
ignored, so an older peer's extra fields never break a newer one. Standard library only: this
file travels with the worker folder.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, ClassVar

MISSING = dataclasses.MISSING
NONE = type(None)
OPT_STR = (str, NONE)


MISSING = dataclasses.MISSING


class MessageError(ValueError):
    """A malformed message: the text names the type and field."""


def json_field(kinds=object, default=MISSING, *, of=None, many=False, factory=None):
    """A message field: `kinds` its JSON type(s), `of` a message type it holds (a list of them if
    `many`); no default makes it required."""
    meta = {"kinds": kinds, "of": of, "many": many}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


class Message:
    """JSON (de)serialisation for the dataclasses below, driven by their fields' metadata."""

    keep_more: ClassVar[bool] = False  # subclasses with a `more` dict keep the keys they do not name
    drop_none: ClassVar[bool] = False  # leave null fields out of the JSON

    @classmethod
    def from_json(cls, data: Any, where: str = ""):
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise MessageError(f"{where}: expected a JSON object, got {type(data).__name__}")
        values: dict = {}
        names = set()
        for fld in dataclasses.fields(cls):
            if fld.name == "more":
                continue
            names.add(fld.name)
            at = f"{where}.{fld.name}"
            if fld.name not in data or (data[fld.name] is None and fld.default is not MISSING
                                         and not _nullable(fld)):  # null: the default
                if fld.default is MISSING and fld.default_factory is MISSING:
                    raise MessageError(f"{at}: missing")
                continue
            values[fld.name] = _read(fld, data[fld.name], at)
        if cls.keep_more:
            values["more"] = {k: v for k, v in data.items() if k not in names}
        return cls(**values)

    def to_json(self) -> dict:
        out: dict = {}
        for fld in dataclasses.fields(self):
            value = getattr(self, fld.name)
            if fld.name == "more":
                out.update(value)
            elif fld.metadata.get("many") and value is not None:
                out[fld.name] = [v.to_json() for v in value]
            elif isinstance(value, Message):
                out[fld.name] = value.to_json()
            elif value is not None or not self.drop_none:
                out[fld.name] = value
        return out


def _nullable(fld) -> bool:
    kinds = fld.metadata.get("kinds", object)
    return fld.default is None or kinds is object or (isinstance(kinds, tuple) and NONE in kinds)


def _read(fld, value, at: str):
    meta = fld.metadata
    if value is None:
        if _nullable(fld):
            return None
        raise MessageError(f"{at}: must not be null")
    of = meta.get("of")
    if of is not None and meta.get("many"):
        if not isinstance(value, list):
            raise MessageError(f"{at}: expected a list, got {type(value).__name__}")
        return [of.from_json(v, f"{at}[{i}]") for i, v in enumerate(value)]
    if of is not None:
        return of.from_json(value, at)
    kinds = meta.get("kinds", object)
    if not isinstance(value, kinds):
        names = ("null" if k is NONE else k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,)))
        want = " or ".join(names)
        raise MessageError(f"{at}: expected {want}, got {type(value).__name__}")
    return value
