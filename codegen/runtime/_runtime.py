"""Runtime helpers shared by every module of the generated package: JSON-RPC errors,
error paths in wire terms, and the validators behind upstream's lenient-deserialisation
markers. Nothing here depends on the schema; acp-codegen copies this file as it is.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
)
from pydantic_core import CoreSchema, PydanticCustomError, PydanticOmit, core_schema

# JSON-RPC 2.0 error codes, plus the ACP ones the session methods use.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002


class JsonRpcError(Exception):
    """An error answer for the peer: raise it from a handler to send ``code``/``message``/``data``.

    ``JsonRpcError(code, message, data)`` for any code; the subclasses below fix the
    code and default the message, e.g. ``raise ResourceNotFoundError(data={"sessionId": sid})``.
    """

    code: int
    message: str
    data: Any | None

    def __init__(self, code: int, message: str, data: Any | None = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    def to_error(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC response (``data`` only when set)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class _FixedCodeError(JsonRpcError):
    CODE: ClassVar[int]
    MESSAGE: ClassVar[str]

    def __init__(self, message: str | None = None, data: Any | None = None) -> None:
        super().__init__(self.CODE, self.MESSAGE if message is None else message, data)


class ParseError(_FixedCodeError):
    """The text is not JSON (``-32700``)."""

    CODE = PARSE_ERROR
    MESSAGE = "Parse error"


class InvalidRequestError(_FixedCodeError):
    """The JSON is not a JSON-RPC 2.0 request or notification (``-32600``)."""

    CODE = INVALID_REQUEST
    MESSAGE = "Invalid request"


class MethodNotFoundError(_FixedCodeError):
    """Unknown method, or one this side does not implement or has not enabled (``-32601``)."""

    CODE = METHOD_NOT_FOUND
    MESSAGE = "Method not found"


class InvalidParamsError(_FixedCodeError):
    """The params do not fit the method (``-32602``)."""

    CODE = INVALID_PARAMS
    MESSAGE = "Invalid params"


class InternalError(_FixedCodeError):
    """Something failed on this side (``-32603``); carries no traceback text."""

    CODE = INTERNAL_ERROR
    MESSAGE = "Internal error"


class ResourceNotFoundError(_FixedCodeError):
    """The resource named in the params (e.g. a session) does not exist (``-32002``)."""

    CODE = RESOURCE_NOT_FOUND
    MESSAGE = "Resource not found"


def wire_path(
    data: Any, loc: tuple[int | str, ...], missing: bool = False
) -> tuple[int | str, ...]:
    """The path of a pydantic error location in the value as sent: union-member tags
    (``"literal['only']"``, ``"str"``, a variant's name) are not keys of the input, so
    walking the input alongside the location drops them. With ``missing``, the last
    part is kept when absent (the error is that the key is missing)."""
    path: list[int | str] = []
    for i, part in enumerate(loc):
        if isinstance(data, Mapping) and (
            part in data or (missing and i == len(loc) - 1)
        ):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            continue
        path.append(part)
    return tuple(path)


# Referenced by the models (see the models' BaseModel template): annotations in a field's
# ``Annotated``, type-level, so that valid values are validated by pydantic-core alone.


def _reject_null(value: Any) -> Any:
    if value is None:
        raise ValueError("may be omitted, but not null")
    return value


class _NotNull:
    """Annotation of an optional field the schema does not let be null (``NOT_NULL``):
    typed ``X | None = None`` (``None`` is "absent"), but ``null`` on the wire fails.

    A type-level constraint, not a validator: the field's validator is ``X``'s own, without
    the nullable step, so pydantic-core rejects ``null`` as it rejects any other wrong type
    ("Input should be a valid string") and valid values pay nothing. The default (None)
    is not validated, and pydantic serialises None for any type."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        if schema["type"] == "nullable":  # `X | None`, constraints of X already inside
            inner: CoreSchema = schema["schema"]
            return inner
        # Any other shape:
        return core_schema.no_info_before_validator_function(_reject_null, schema)

    def __repr__(self) -> str:
        return "NOT_NULL"


NOT_NULL: Final = _NotNull()


class NotOneOf:
    """Annotation of the tag of a tagged union's catch-all variant: the values the other
    variants are tagged with are not this one's (upstream keeps the variant apart with
    ``not: {anyOf: [{"properties": {tag: {"const": value}}}, ...]}``). A message with a
    known tag is read as its own variant or refused, never taken as the catch-all."""

    def __init__(self, *values: Any) -> None:
        self.values = values

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        values = self.values

        def check(value: Any) -> Any:
            # By type too: 1 is no True.
            if any(type(value) is type(known) and value == known for known in values):
                raise PydanticCustomError(
                    "acp_known_tag",
                    "{tag} is another variant's tag, not this one's",
                    {"tag": repr(value)},
                )
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))

    def __repr__(self) -> str:
        return f"NotOneOf({', '.join(map(repr, self.values))})"


def _valid_items(value: list[Any], exc: ValidationError) -> list[Any]:
    bad = {
        next((p for p in e["loc"] if isinstance(p, int)), None) for e in exc.errors()
    }
    return [item for i, item in enumerate(value) if i not in bad]


class Lenient:
    """Annotation of a field with upstream's lenient-deserialisation markers:

    * ``skip_invalid_items`` (``x-deserialize-skip-invalid-items``): list items that fail
      validation are dropped;
    * ``absent_on_error`` (``x-deserialize-default-on-error``, optional fields only): a
      value that still fails is dropped as if it had not been sent. The field reads as
      ``default`` (the field's own) but stays unset, so it is omitted on output, never an
      explicit null, which may mean something ("clear the title");
    * ``null_reads_as`` (``x-deserialize-default-on-null``, lists and maps): a ``null``
      reads as this value, the type's empty one (``[]`` or ``{}``), as upstream reads it;
    * ``null_absent`` (``default-on-null = "all"``, optional fields the schema does not
      let be null): a ``null`` (Python's ``None``) reads as "not given": the field keeps
      ``default`` and stays unset, so it is never written as null.

    The field's type is tried first, in pydantic-core; only a value that fails it reaches
    the recovery, a Python function (so valid messages never call Python). The shared
    instances below cover the usual cases; other fields get their own.
    """

    def __init__(
        self,
        *,
        skip_invalid_items: bool = False,
        absent_on_error: bool = False,
        default: Any = None,
        null_reads_as: Any = None,
        null_absent: bool = False,
    ) -> None:
        self.skip_invalid_items = skip_invalid_items
        self.absent_on_error = absent_on_error
        self.default = default
        self.null_reads_as = null_reads_as
        self.null_absent = null_absent

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        name = handler.field_name
        if (self.absent_on_error or self.null_absent) and name is None:
            raise TypeError("absent_on_error and null_absent mark a model field")

        # Called only for a value the field's type refused (the union's first member).
        def recover(
            value: Any, validate: ValidatorFunctionWrapHandler, info: ValidationInfo
        ) -> Any:
            if value is None and self.null_reads_as is not None:
                return validate(copy.deepcopy(self.null_reads_as))
            if value is None and self.null_absent:
                pass  # absent: below
            elif self.skip_invalid_items and isinstance(value, list):
                try:
                    # Fails again, this time with the items' errors.
                    return validate(value)
                except ValidationError as exc:
                    valid = _valid_items(value, exc)
                try:
                    return validate(valid)
                except ValidationError:
                    if not self.absent_on_error:
                        raise
            elif not self.absent_on_error:
                return validate(value)  # fails as the field's type fails
            # pydantic counts a field as set whenever its validator returns a value; so the
            # default goes into the model's dict (``info.data`` is that dict) and the raised
            # PydanticOmit leaves the field out of ``model_fields_set``.
            assert name is not None and isinstance(info.data, dict)
            default = self.default
            info.data[name] = (
                None if default is None else validate(copy.deepcopy(default))
            )
            raise PydanticOmit

        fallback = core_schema.with_info_wrap_validator_function(recover, schema)
        lenient = core_schema.union_schema([schema, fallback], mode="left_to_right")
        # A recovered value is a lax match: in a smart union (pydantic's default), a member
        # the value is valid for wins over one that had to recover (``{"_meta": []}`` is
        # an extension's result, not a response whose `_meta` was dropped). pydantic-core
        # tries the strict schema first there and counts a fallback to the lax one as lax;
        # elsewhere it goes straight to the lax one. So ``strict=True`` reads the field
        # without the marker: the schema's types only.
        return core_schema.lax_or_strict_schema(
            lax_schema=lenient, strict_schema=schema
        )

    def __repr__(self) -> str:
        args = [
            f"{flag}=True"
            for flag in ("skip_invalid_items", "absent_on_error", "null_absent")
            if getattr(self, flag)
        ]
        args += [
            f"{key}={getattr(self, key)!r}"
            for key in ("default", "null_reads_as")
            if getattr(self, key) is not None
        ]
        return f"Lenient({', '.join(args)})"


ABSENT_ON_ERROR: Final = Lenient(absent_on_error=True)
SKIP_INVALID_ITEMS: Final = Lenient(skip_invalid_items=True)
SKIP_INVALID_ITEMS_OR_ABSENT: Final = Lenient(
    skip_invalid_items=True, absent_on_error=True
)
NULL_ABSENT: Final = Lenient(null_absent=True)


class _Tag:
    """Annotation of a tag field (a required single constant, ``TAG``): the class body
    gives it its constant as the default, for Python code (``Text(text="hi")``); a
    ``Tagged`` model keeps it required when reading."""

    def __repr__(self) -> str:
        return "TAG"


TAG: Final = _Tag()


def _tag_required(schema: CoreSchema, cls: type[BaseModel], tags: set[str]) -> None:
    """Take the defaults of the ``tags`` fields out of ``cls``'s schema, in place."""
    if schema["type"] == "definitions":
        for inner in (schema["schema"], *schema["definitions"]):
            _tag_required(inner, cls, tags)
    elif schema["type"] == "model" and schema["cls"] is cls:
        fields = schema["schema"]
        for name in tags if fields["type"] == "model-fields" else ():
            field = fields["fields"][name]["schema"]
            if field["type"] == "default":
                fields["fields"][name]["schema"] = field["schema"]


@functools.cache
def _tags(cls: type[BaseModel]) -> tuple[tuple[str, str, Any], ...]:
    """A model's tag fields: (attribute, wire name, constant)."""
    return tuple(
        (name, field.alias or name, field.default)
        for name, field in cls.model_fields.items()
        if any(m is TAG for m in field.metadata)
    )


class Tagged(BaseModel):
    """First base of a model with tag fields (``TAG``). Reading (``model_validate``,
    ``model_validate_json``, a union) requires the tag as the schema does, with no step
    added: the defaults are taken out of the validator when it is built. Constructing in
    Python fills in a missing tag, so it is set and written even with ``exclude_unset``;
    pydantic does not call this ``__init__`` when reading (``__pydantic_base_init__``,
    as for its own ``RootModel``)."""

    model_config = ConfigDict(defer_build=True)  # never built itself

    def __init__(self, /, **data: Any) -> None:
        for name, alias, value in _tags(type(self)):
            if name not in data and alias not in data:
                data[name] = value
        super().__init__(**data)

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        schema = handler(source)
        _tag_required(schema, cls, {name for name, _, _ in _tags(cls)})
        return schema
