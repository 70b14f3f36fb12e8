"""What every transcript record is (`Rec`), and how a record type is declared (records/models.py gathers them all).

Kept apart from the declarations so that each part of the run declares its records in a module of its own, under 400
lines, and every reader still finds them all in one place: models.py.
"""

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict

from cursorpilot.records.secret import mask_secrets, masked  # noqa: F401 - the one way a secret is shown and masked, for every reader


class Rec(BaseModel):
    """What every record carries. A record of an unknown type, or one that does not fit its declaration, is read as this.
    (The common five have defaults only so that a writer builds a record without them: the transcript adds them, and a
    reader refuses a record that lacks them, records_read.parse.)"""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    type: str = ""
    seq: int = 0
    ts: str = ""  # UTC, ISO 8601 with milliseconds
    mono: float = 0.0  # monotonic seconds: the clock that times everything within a run
    run_id: str = ""

    if not TYPE_CHECKING:  # (mypy sees each model's own fields as its constructor's keywords)
        def __init__(self, **data: Any) -> None:
            """Built, not validated; the fields written in the order they were given."""
            built = type(self).model_construct(**data)
            given = [_ALIASED.get(k, k) for k in data]
            values = built.__dict__
            object.__setattr__(self, "__dict__", {**{k: values[k] for k in given if k in values}, **values})
            object.__setattr__(self, "__pydantic_fields_set__", built.__pydantic_fields_set__)
            object.__setattr__(self, "__pydantic_extra__", built.__pydantic_extra__)
            object.__setattr__(self, "__pydantic_private__", built.__pydantic_private__)

        # Readers validate (model_validate) without calling this: pydantic calls a model's own __init__ from validation
        # unless it carries the mark its own BaseModel.__init__ carries (pydantic 2.0+; test_records' misfit test
        # fails if that ever changes).
        __init__.__pydantic_base_init__ = True


TYPES: dict[str, type[Rec]] = {}
NAMES: dict[type[Rec], str] = {}
COMMON = tuple(Rec.model_fields)
_ALIASED: dict[str, str] = {}  # a field written under another name (`from`) -> its attribute (`from_`)


def declare(name: str):
    """Register a record type under the name it is written with."""

    def add(cls: type[Rec]) -> type[Rec]:
        TYPES[name] = cls
        NAMES[cls] = name
        _ALIASED.update({f.alias: k for k, f in cls.model_fields.items() if f.alias and f.alias != k})
        return cls

    return add


class _Omitted:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omitted()  # a field left out of the record, not even written null: `changed=a.changed or R.OMIT`


_R = TypeVar("_R", bound=Rec)


def name_of(rec: Rec) -> str:
    """The type a record model is written as (a plain Rec, a type this version does not declare, as its own `type`)."""
    return NAMES.get(type(rec)) or rec.type


def body(rec: Rec) -> dict[str, Any]:
    """The fields a writer gave a record model, as written (`from`, not `from_`), in the order given (OMIT ones left out)."""
    fields = type(rec).model_fields
    given = rec.model_fields_set
    out = {(fields[k].alias or k): v for k, v in rec.__dict__.items() if k in given and k not in COMMON and v is not OMIT}
    return {**out, **{k: v for k, v in (rec.model_extra or {}).items() if v is not OMIT}}


def numbered(rec: _R, step: int) -> _R:
    """The record with its step's number written first (a pilot does not know its step's number; its loop's host does)."""
    return type(rec)(**{"step": step, **body(rec)})
