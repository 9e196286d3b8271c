"""The fixed part of the generated ``convert`` module: errors, value rules, the base of
every converter model and the entry points; the module itself holds only the converters
derived from the schema and their tables. Nothing here depends on the schema.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Final, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
)
from pydantic_core import from_json, to_json

from ._convert_rules import (
    _ABSOLUTE_PATH,
    _ABSOLUTE_PATH_REASON,
    _CURRENCY,
    _CURRENCY_REASON,
    _URI,
    _URI_REASON,
    _fail,
    _local_offset,
    _supply,
)
from ._runtime import wire_path


class ConversionError(ValueError):
    """A value cannot be converted: ``path`` locates it in the input, ``reason`` says why."""

    def __init__(self, path: tuple[str | int, ...], reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{self.pointer or '/'}: {reason}")

    @property
    def pointer(self) -> str:
        """``path`` as an RFC 6901 JSON pointer."""
        return "".join(
            "/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path
        )


# RFC 3339 date-time. The pattern is the fast path (checked in pydantic-core); it leaves
# out February 29th, which the Python fallback checks against the calendar.
_RFC3339: Final = (
    r"^[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
    r"[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)
_ISO8601_EXTENDED: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?"
    r"([Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?\Z"
)
_ISO8601_BASIC: Final = re.compile(
    r"([0-9]{4})([0-9]{2})([0-9]{2})[Tt]([0-9]{2})([0-9]{2})(?:([0-9]{2})(?:[.,]([0-9]+))?)?"
    r"([Zz]|[+-][0-9]{2}(?:[0-9]{2})?)?\Z"
)
_RFC3339_FORM: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)


_OFFSET: Final = re.compile(r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])\Z")


def _iso8601_to_rfc3339(value: str, info: ValidationInfo | None) -> str:
    """Rewrite an ISO 8601 date-time with a UTC offset as RFC 3339; one without an offset
    takes the offset the caller supplies (``utcOffset``: an RFC 3339 offset, or ``local``,
    this machine's time zone); refuse anything else."""
    match = _ISO8601_EXTENDED.match(value) or _ISO8601_BASIC.match(value)
    if match is None:
        raise _fail(
            None,
            "not an ISO 8601 date and time of day, so it cannot become an RFC 3339 date-time",
        )
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if zone is None:
        zone = _supply(info).get("utcOffset")
        if zone == "local":
            zone = _local_offset(year, month, day, hour, minute, second)
        if not isinstance(zone, str) or _OFFSET.match(zone) is None:
            raise _fail(
                None,
                "an ISO 8601 date-time without a UTC offset cannot become an RFC 3339"
                " date-time; pass its offset as supply={'utcOffset': ...}",
            )
    offset = (
        "Z" if zone in ("Z", "z") else zone[:3] + ":" + (zone[3:].lstrip(":") or "00")
    )
    try:
        # A leap second (60) is valid RFC 3339; datetime cannot hold it.
        datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            min(int(second or 0), 59),
        )
        if offset != "Z" and (int(offset[1:3]) > 23 or int(offset[4:6]) > 59):
            raise ValueError(offset)
    except ValueError:
        raise _fail(
            None,
            "not a valid calendar date-time, so it cannot become an RFC 3339 date-time",
        ) from None
    return f"{year}-{month}-{day}T{hour}:{minute}:{second or '00'}{'.' + fraction if fraction else ''}{offset}"


def _check_rfc3339(value: str) -> str:
    """The slow path of ``_Rfc3339``: an RFC 3339 spelling whose date is on the calendar."""
    if _RFC3339_FORM.match(value) is None:
        raise _fail(None, "not an RFC 3339 date-time")
    _iso8601_to_rfc3339(value, None)
    return value


_AbsolutePathIn: TypeAlias = Annotated[str, StringConstraints(pattern=_ABSOLUTE_PATH)]
_Rfc3339: TypeAlias = Annotated[
    Annotated[str, StringConstraints(pattern=_RFC3339)]
    | Annotated[str, AfterValidator(_check_rfc3339)],
    Field(union_mode="left_to_right"),
]
_Iso8601In: TypeAlias = Annotated[
    Annotated[str, StringConstraints(pattern=_RFC3339)]
    | Annotated[str, AfterValidator(_iso8601_to_rfc3339)],
    Field(union_mode="left_to_right"),
]


def _check_fields(
    model: BaseModel,
    target: int,
    required: tuple[tuple[str, str, str], ...] = (),
    nulls: tuple[str, ...] = (),
    invariants: tuple[tuple[str, str, str, str], ...] = (),
    collisions: frozenset[str] = frozenset(),
    info: ValidationInfo | None = None,
    supplied: tuple[tuple[str | None, str | None, str, str], ...] = (),
) -> None:
    """Checks a converter declares: target-required fields, nulls the target cannot say
    (omitted instead), source invariants, unknown properties that would shadow a field;
    and values the target requires that the source may lack (``supplied``: the source
    field that has it, the field read from elsewhere in the source, the caller's supply
    key, the name written): what the source has wins, then the caller's supply.
    """
    fields_set = model.__pydantic_fields_set__
    for has, read, key, written in supplied:
        if has is not None and has in fields_set and getattr(model, has) is not None:
            continue  # the source carries it
        given = getattr(model, read) if read is not None else None
        if given is None:
            given = _supply(info).get(key)
        if given is None:
            raise _fail(
                written,
                f"v{target} requires `{written}`; pass it as supply={{'{key}': ...}} to convert this",
            )
        private = model.__pydantic_private__
        if private is None:
            private = {}
            object.__setattr__(model, "__pydantic_private__", private)
        private.setdefault("_supplied", {})[key] = given
    for attr, wire, written in required:
        if attr not in fields_set or getattr(model, attr) is None:
            raise _fail(
                wire,
                f"v{target} requires `{written}`; it cannot be omitted or null here",
            )
    for attr in nulls:
        if attr in fields_set and getattr(model, attr) is None:
            fields_set.discard(attr)
    for if_attr, then_attr, then_wire, reason in invariants:
        if getattr(model, if_attr) is not None and getattr(model, then_attr) is None:
            raise _fail(then_wire, reason)
    for key in model.model_extra or ():
        if key in collisions:
            raise _fail(
                key,
                f"unknown property `{key}` would become the v{target} field of that name",
            )


# Default of every optional field. Never written out (conversions dump with
# exclude_unset), so it needs no type of its own.
_ABSENT: Any = None


class _Converter(BaseModel):
    """Reads a source-version value (wire names) and writes it in the target version."""

    model_config = ConfigDict(extra="allow", strict=True)


def _error(
    exc: ValidationError, value: Any, prefix: tuple[str | int, ...], version: int
) -> ConversionError:
    errors = exc.errors(include_url=False)
    chosen = next((e for e in errors if e["type"] == "acp_conversion"), errors[0])
    path = wire_path(value, tuple(chosen["loc"]))
    ctx = chosen.get("ctx") or {}
    if ctx.get("field") is not None:  # (a dotted field lives in nested objects)
        path += tuple(str(ctx["field"]).split("."))
    elif chosen["type"] == "missing" and chosen["loc"]:
        path += (chosen["loc"][-1],)
    if chosen["type"] == "acp_conversion":
        reason = str(ctx["reason"])
    elif (
        chosen["type"] == "string_pattern_mismatch"
        and ctx.get("pattern") == _ABSOLUTE_PATH
    ):
        reason = (
            _ABSOLUTE_PATH_REASON
            if version == 1
            else "not an absolute path, which v2 requires"
        )
    elif chosen["type"] == "string_pattern_mismatch" and ctx.get("pattern") == _URI:
        reason = _URI_REASON
    elif (
        chosen["type"] == "string_pattern_mismatch" and ctx.get("pattern") == _CURRENCY
    ):
        reason = _CURRENCY_REASON
    elif chosen["type"] == "literal_error":
        reason = f"{chosen['input']!r} has no form in the other version here (it takes {ctx.get('expected')})"
    else:
        reason = f"not valid v{version} input: {chosen['msg']}"
    return ConversionError(prefix + path, reason)


# Envelope values that are JSON as they are (a float may be NaN; bool is an int's subclass).
_SCALARS: Final = frozenset({str, int, bool, type(None)})

Adapters = Mapping[tuple[int, int], Mapping[str, TypeAdapter[Any]]]
Methods = Mapping[int, Mapping[str, tuple[str, str, str | None]]]
Names = Mapping[int, Mapping[str, str]]


class Conversions:
    """The conversion entry points over one generated ``convert`` module's tables: converters
    by direction and source type name, and the methods both versions define (wire name ->
    kind, params type, result type)."""

    def __init__(
        self,
        adapters: Adapters,
        methods: Methods,
        renamed: Names | None = None,
        refused: Names | None = None,
    ) -> None:
        self._adapters = adapters
        self._methods = methods
        self._renamed = (
            renamed or {}
        )  # version -> method -> its name in the other version
        self._refused = refused or {}  # version -> method of that version only -> why
        self._targets: dict[Any, TypeAdapter[Any]] = {}

    def _adapter(self, type_name: str, source: int, target: int) -> TypeAdapter[Any]:
        adapters = self._adapters.get((source, target))
        if adapters is None:
            raise ConversionError((), f"no conversion from v{source} to v{target}")
        adapter = adapters.get(type_name)
        if adapter is None:
            raise ConversionError(
                (),
                f"v{source} type {type_name!r} is not shared with v{target}; it cannot be converted",
            )
        return adapter

    def _convert(
        self,
        type_name: str,
        value: Any,
        source: int,
        target: int,
        prefix: tuple[str | int, ...] = (),
        supply: Mapping[str, Any] | None = None,
    ) -> Any:
        adapter = self._adapter(type_name, source, target)
        context = {"supply": supply} if supply else None
        try:
            return adapter.dump_python(
                adapter.validate_python(value, context=context),
                mode="json",
                by_alias=True,
                exclude_unset=True,
            )
        except ValidationError as exc:
            raise _error(exc, value, prefix, source) from None

    def convert(
        self,
        type_name: str,
        value: Any,
        *,
        source: int,
        target: int,
        supply: Mapping[str, Any] | None = None,
    ) -> Any:
        """Convert the wire value of ``type_name`` (its name in the source version).
        ``supply``: values the target requires that the source does not carry, by the
        keys docs/conversions.md lists (``messageId``, ``planId`` ...)."""
        try:
            return self._convert(type_name, value, source, target, (), supply)
        except ConversionError:
            raise
        # Nested deeper than copying or pydantic's serializer allows.
        except (RecursionError, ValueError) as exc:
            raise ConversionError((), f"the value cannot be converted: {exc}") from None

    def convert_json(
        self, type_name: str, data: str | bytes, *, source: int, target: int
    ) -> str:
        """``convert`` from JSON text to JSON text, without building Python dicts in between."""
        adapter = self._adapter(type_name, source, target)
        try:
            return adapter.dump_json(
                adapter.validate_json(data), by_alias=True, exclude_unset=True
            ).decode()
        except ValidationError as exc:
            try:
                value = json.loads(data)
            # Not JSON, or nested deeper than json reads.
            except (ValueError, RecursionError) as bad:
                raise ConversionError((), f"not JSON: {bad}") from None
            raise _error(exc, value, (), source) from None
        except ConversionError:
            raise
        # Nested deeper than pydantic's serializer allows ("Maximum serialization depth exceeded").
        except (RecursionError, ValueError) as exc:
            raise ConversionError((), f"the value cannot be converted: {exc}") from None

    def _method(self, name: Any, source: int) -> tuple[str, str, str | None]:
        spec = (
            self._methods.get(source, {}).get(name) if isinstance(name, str) else None
        )
        if spec is None:
            why = (
                self._refused.get(source, {}).get(name)
                if isinstance(name, str)
                else None
            )
            raise ConversionError(
                ("method",),
                (
                    f"method {name!r} exists in v{source} only: {why}"
                    if why
                    else f"method {name!r} is not covered by the v{source} schema; it cannot be converted"
                ),
            )
        return spec

    def convert_message(
        self,
        message: Mapping[str, Any],
        *,
        source: int,
        target: int,
        method: str | None = None,
        supply: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Convert a JSON-RPC message. Requests and notifications convert by their method,
        and carry the target version's name of it; responses (results and errors) need
        ``method``, the source version's method of their request. Error objects are the
        same in both versions and are carried as they are. ``supply``: values the target
        requires that the message does not carry (see ``convert``)."""
        try:
            return self._convert_message(message, source, target, method, supply)
        except ConversionError:
            raise
        # A value nested deeper than the stack (copying recurses) or pydantic's serializer
        # ("Maximum serialization depth exceeded", a plain ValueError) allows.
        except (RecursionError, ValueError) as exc:
            raise ConversionError(
                (), f"the message cannot be converted: {exc}"
            ) from None

    def _convert_message(
        self,
        message: Mapping[str, Any],
        source: int,
        target: int,
        method: str | None,
        supply: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        if (source, target) not in self._adapters:
            raise ConversionError((), f"no conversion from v{source} to v{target}")
        if not isinstance(message, Mapping):
            raise ConversionError((), "a JSON-RPC message is an object")
        out = {k: v for k, v in message.items() if k not in ("params", "result")}
        # The envelope (id, error ...) is carried as it is, so it must be JSON already; the
        # usual one (strings and integers) is, and needs no copy.
        if any(type(v) not in _SCALARS for v in out.values()):
            out = copy.deepcopy(out)
            try:
                json.dumps(out, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise ConversionError((), f"the message is not JSON: {exc}") from None
        if "method" in message:
            name = message["method"]
            if method is not None and method != name:
                raise ConversionError(
                    ("method",), f"the message is {name!r}, not {method!r}"
                )
            kind, params, _ = self._method(name, source)
            if ("id" in message) != (kind == "request"):
                raise ConversionError(
                    (),
                    f"{name} is a {kind}; the message {'has' if 'id' in message else 'lacks'} an id",
                )
            if "params" in message:
                out["params"] = self._convert(
                    params, message["params"], source, target, ("params",), supply
                )
            else:  # absent params must be allowed to be
                self._convert(params, {}, source, target, ("params",), supply)
            out["method"] = self._renamed.get(source, {}).get(name, name)
            return out
        if "result" in message or "error" in message:
            if method is None:
                raise ConversionError(
                    (), "a response converts by the method of its request: pass method="
                )
            _, _, result = self._method(method, source)
            if result is None:
                raise ConversionError(
                    (), f"{method} is a notification; it has no response"
                )
            if "result" in message and "error" in message:
                raise ConversionError(
                    (), "a response has a result or an error, not both"
                )
            if "result" in message:
                out["result"] = self._convert(
                    result, message["result"], source, target, ("result",), supply
                )
            return out
        raise ConversionError((), "not a JSON-RPC request, notification or response")

    def convert_message_json(
        self,
        data: str | bytes,
        *,
        source: int,
        target: int,
        method: str | None = None,
        supply: Mapping[str, Any] | None = None,
    ) -> str:
        """``convert_message`` from JSON text to JSON text (a line of the wire), read and
        written by pydantic-core rather than the standard library."""
        try:
            message = from_json(data, allow_inf_nan=False)  # (JSON has no NaN)
        except ValueError as exc:  # not JSON, or nested deeper than it reads
            raise ConversionError((), f"not JSON: {exc}") from None
        converted = self.convert_message(
            message, source=source, target=target, method=method, supply=supply
        )
        return to_json(converted).decode()

    def convert_model(
        self, type_name: str, value: BaseModel, model: Any, source: int, target: int
    ) -> Any:
        """The generated model ``value`` (of ``type_name``) as a ``model`` of the target."""
        data = self._convert(
            type_name,
            value.model_dump(mode="json", by_alias=True, exclude_unset=True),
            source,
            target,
        )
        adapter = self._targets.get(model)
        if adapter is None:
            adapter = self._targets[model] = TypeAdapter(model)
        try:
            return adapter.validate_python(data)
        except ValidationError as exc:
            raise _error(exc, data, (), target) from None
