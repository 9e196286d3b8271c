"""The fixed part of the generated ``convert`` module: errors and where they point, the
checks a converter declares, the base of every converter model and the entry points (the
value rules are ``_convert_rules``'s); the module itself holds only the converters derived
from the schema and their tables. Nothing here depends on the schema.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
)
from pydantic_core import ErrorDetails, from_json, to_json

from ._convert_rules import (
    _ABSOLUTE_PATH,
    _ABSOLUTE_PATH_REASON,
    _CURRENCY,
    _CURRENCY_REASON,
    _URI,
    _URI_REASON,
    _fail,
    _supply,
)


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


def _keep_omitted(model: BaseModel, attrs: tuple[str, ...]) -> None:
    """The attributes a value rule's default omitted (``_DEFAULT_OMITTED``) made all the same,
    unset (a union's serializer counts a model's attributes)."""
    values = model.__dict__
    if len(values) < len(type(model).model_fields):
        for attr in attrs:
            values.setdefault(attr, None)


# Default of every optional field. Never written out (conversions dump with
# exclude_unset), so it needs no type of its own.
_ABSENT: Any = None


class _Converter(BaseModel):
    """Reads a source-version value (wire names) and writes it in the target version."""

    model_config = ConfigDict(extra="allow", strict=True)


Loc = tuple[int | str, ...]


def _walk(
    data: Any, loc: Loc, missing: bool, i: int = 0
) -> tuple[int, Loc, tuple[int, ...]]:
    """A pydantic error location walked through the value as sent: (how many of its parts
    are keys or indexes there, those parts (the wire path), the places of the parts that are
    not: the tags of the union members the error went through). A member's tag can be a key
    too (a text block's tag `text`): the reading that follows more of the location into the
    value wins. With ``missing``, the last part is the key the value lacks."""
    if i == len(loc):
        return 0, (), ()
    part = loc[i]
    options = []
    if isinstance(data, Mapping) and part in data:
        n, path, members = _walk(data[part], loc, missing, i + 1)
        options.append((n + 1, (part, *path), members))
    elif isinstance(data, list) and type(part) is int and 0 <= part < len(data):
        n, path, members = _walk(data[part], loc, missing, i + 1)
        options.append((n + 1, (part, *path), members))
    elif missing and i == len(loc) - 1 and isinstance(data, Mapping):
        options.append((1, (part,), ()))
    if not options or (isinstance(part, str) and isinstance(data, Mapping)):
        n, path, members = _walk(data, loc, missing, i + 1)
        options.append((n, path, (i, *members)))
    return max(
        options, key=lambda option: option[0]
    )  # (the first: a key, where as good)


# Errors of a value whose shape is right and which the conversion refuses; the rest say that
# the value is not of that shape (of that union member) at all.
_REFUSALS: Final = frozenset({"acp_conversion", "string_pattern_mismatch"})
Located = tuple[
    tuple[int, ...], ErrorDetails
]  # (the places of its members' tags, the error)


def _fit(errors: list[Located]) -> tuple[int, int, int, int]:
    """How badly a union member fits a value, by its errors: keys the value lacks, values
    not of the member's shape, all of them, those without a conversion's own reason (less
    is better; the last prefers, of two members a value fails alike, the one that says why,
    as a date-time's own check does after its pattern)."""
    missing = sum(e["type"] == "missing" for _, e in errors)
    shape = sum(e["type"] not in _REFUSALS for _, e in errors)
    unexplained = sum(e["type"] != "acp_conversion" for _, e in errors)
    return missing, shape, len(errors), unexplained


def _best_member(errors: list[Located]) -> list[Located]:
    """The errors of the union members the value fits best, at every union the errors went
    through (a union that fails reports every member's errors); the first where as good.
    """
    out = [(members, e) for members, e in errors if not members]
    unions: dict[Loc, dict[Any, list[Located]]] = {}
    for members, e in errors:
        if members:  # a union: the location up to its member's tag
            loc = tuple(e["loc"])
            by_member = unions.setdefault(loc[: members[0]], {})
            by_member.setdefault(loc[members[0]], []).append((members[1:], e))
    for by_member in unions.values():
        out += _best_member(min(by_member.values(), key=_fit))
    return out


def _error(
    exc: ValidationError, value: Any, prefix: tuple[str | int, ...], version: int
) -> ConversionError:
    """The refusal of the value that decided it: within a union, the member the value fits
    best (the one its tag names, where it has one); a conversion's own reason before a
    value that is not valid in its version."""
    errors = exc.errors(include_url=False)
    located = [
        (_walk(value, tuple(e["loc"]), e["type"] == "missing")[2], e) for e in errors
    ]
    best = [e for _, e in _best_member(located)] or errors
    chosen = next((e for e in best if e["type"] == "acp_conversion"), best[0])
    path = _walk(value, tuple(chosen["loc"]), chosen["type"] == "missing")[1]
    ctx = chosen.get("ctx") or {}
    if ctx.get("field") is not None:  # (a dotted field lives in nested objects)
        path += tuple(str(ctx["field"]).split("."))
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
        other_kinds: Methods | None = None,
    ) -> None:
        self._adapters = adapters
        self._methods = methods
        self._renamed = renamed or {}  # version -> method -> its other version's name
        # version -> method of that version only (or of a kind of it only) -> why
        self._refused = refused or {}
        # version -> method -> its second kind (a request and a notification at once)
        self._other_kinds = other_kinds or {}
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
            # (pydantic-core's own: TypeAdapter's wrappers cost a tenth of a small message)
            return adapter.serializer.to_python(
                adapter.validator.validate_python(value, context=context),
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

    def _method(self, name: Any, source: int, kind: str) -> tuple[str, str, str | None]:
        """The method's ``kind`` (request, notification) in ``source``: (kind, params type,
        result type); refused where the method, or that kind of it, does not convert."""
        spec = (
            self._methods.get(source, {}).get(name) if isinstance(name, str) else None
        )
        if spec is not None and spec[0] == kind:
            return spec  # (the usual case, on every message: one lookup)
        tables = (self._methods, self._other_kinds) if isinstance(name, str) else ()
        found = [
            spec
            for table in tables
            if (spec := table.get(source, {}).get(name)) is not None
        ]
        spec = next((s for s in found if s[0] == kind), None)
        if spec is not None:
            return spec
        why = self._refused.get(source, {}).get(name) if isinstance(name, str) else None
        if found and why:  # it converts in its other kind
            raise ConversionError(
                ("method",), f"{name} as a {kind} exists in v{source} only: {why}"
            )
        if found:
            raise ConversionError(
                (),
                f"{name} is a {found[0][0]}; the message {'has' if kind == 'request' else 'lacks'} an id",
            )
        raise ConversionError(
            ("method",),
            (
                f"method {name!r} exists in v{source} only: {why}"
                if why
                else f"method {name!r} is not covered by the v{source} schema; it cannot be converted"
            ),
        )

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
        if type(message) is not dict and not isinstance(
            message, Mapping
        ):  # (dict: no ABC check)
            raise ConversionError((), "a JSON-RPC message is an object")
        out = {k: v for k, v in message.items() if k not in ("params", "result")}
        # The envelope (id, error ...) is carried as it is, so it must be JSON already; the
        # usual one (strings and integers) is, and needs no copy.
        if not _SCALARS.issuperset(map(type, out.values())):
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
            kind = "request" if "id" in message else "notification"
            _, params, _ = self._method(name, source, kind)
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
            try:
                _, _, result = self._method(method, source, "request")
            except ConversionError as exc:
                if (
                    exc.path
                ):  # not a method of the version, or its request is of it only
                    raise
                result = None
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
