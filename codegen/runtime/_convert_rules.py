"""The value rules and transforms of the generated ``convert`` module: paths, dates, URIs,
regular expressions, support markers, environment lists, tags, refusals, values the target
reads as its default, one version's union variants, a v1 diff as a v2 git patch, and the
target's shape (fields moved into nested objects, fills, supplied values). Nothing here
depends on the schema.
"""

from __future__ import annotations

import copy
import difflib
import ntpath
import posixpath
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Annotated, Any, Final, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Discriminator,
    Field,
    PlainSerializer,
    SerializationInfo,
    StringConstraints,
    ValidationInfo,
)
from pydantic_core import PydanticCustomError, PydanticOmit

# Value rule `absolute-path`: a POSIX root, a Windows drive root or a UNC path.
_ABSOLUTE_PATH: Final = r"^(?:/|[A-Za-z]:[\\/]|\\\\)"
_ABSOLUTE_PATH_REASON: Final = "a relative path cannot become a v2 AbsolutePath"


def _fail(field: str | None, reason: str) -> PydanticCustomError:
    return PydanticCustomError(
        "acp_conversion", "{reason}", {"reason": reason, "field": field}
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


def _resolved_path(value: str, info: ValidationInfo | None) -> str:
    """A relative path resolved against the directory the caller supplies (``cwd``: the
    session's working directory, which an agent naming a file relative to it means);
    refused without one."""
    cwd = _supply(info).get("cwd")
    if not value or not isinstance(cwd, str) or re.match(_ABSOLUTE_PATH, cwd) is None:
        raise _fail(None, _ABSOLUTE_PATH_REASON)
    if cwd.startswith("/"):
        return posixpath.normpath(posixpath.join(cwd, value))
    return ntpath.normpath(ntpath.join(cwd, value))


# (the pattern is the fast path, checked in pydantic-core)
_AbsolutePathIn: TypeAlias = Annotated[
    Annotated[str, StringConstraints(pattern=_ABSOLUTE_PATH)]
    | Annotated[str, AfterValidator(_resolved_path)],
    Field(union_mode="left_to_right"),
]
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


# Value rule `uri`: RFC 3986 requires a scheme; checked in pydantic-core.
_URI: Final = r"^[A-Za-z][A-Za-z0-9+.-]*:"
_URI_REASON: Final = "not a URI with a scheme, which v2 requires"


def _check_regex(value: str) -> str:
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError):
        raise _fail(None, "not a regular expression, which v2 requires") from None
    return value


def _marker_in(value: bool) -> dict[str, Any] | None:
    """A v1 boolean capability as a v2 support marker: an object, or null for false."""
    return {} if value else None


def _marker_out(value: dict[str, Any] | None) -> bool:
    return value is not None


def _env_list(value: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in value.items()]


def _env_map(value: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in value:
        name, text = item.get("name"), item.get("value")
        if not isinstance(name, str) or not isinstance(text, str):
            raise _fail(None, "an environment variable needs a string name and value")
        if name in out:
            raise _fail(None, f"`{name}` is set twice; v1 names each variable once")
        out[name] = text
    return out


def _non_empty(value: list[Any]) -> list[Any]:
    if not value:
        raise _fail(None, "v2 requires at least one item here")
    return value


def _unit_interval(value: float | None) -> float | None:
    if value is not None and not 0 <= value <= 1:
        raise _fail(None, "v2 bounds it to 0 through 1")
    return value


def _non_negative(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise _fail(None, "v2 requires it to be 0 or more")
    return value


def _positive(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise _fail(None, "v2 counts it from 1")
    return value


_NON_EMPTY: Final = AfterValidator(_non_empty)
_UNIT_INTERVAL: Final = AfterValidator(_unit_interval)
_NON_NEGATIVE: Final = AfterValidator(_non_negative)
_POSITIVE: Final = AfterValidator(_positive)


def _omit(value: Any) -> Any:
    raise PydanticOmit


# A field the target reads as its default where its value is invalid (x-deserialize-default-
# on-error): the rule's annotation first, else the value as the source types it, omitted (the
# field, or the item where the target skips invalid items). Omitted, not null: in an update,
# null clears a value and omitting it leaves it. The rule's branch is checked in pydantic-core
# alone; the other runs only where the rule refused the value.
_FIRST_VALID: Final = Field(union_mode="left_to_right")
_DEFAULT_OMITTED: Final = AfterValidator(_omit)


def _as_is(value: Any) -> Any:
    return value


# A value whose type the conversion changed is written as it now is.
_AS_IS: Final = PlainSerializer(_as_is, return_type=Any)


def _to(value: Any) -> AfterValidator:
    """A tag read in the source version, written as the target's (with ``_AS_IS``)."""
    return AfterValidator(lambda _: value)


_UriIn: TypeAlias = Annotated[str, StringConstraints(pattern=_URI)]
# Value rule `currency`: three capital letters (ISO 4217), as v2 requires.
_CURRENCY: Final = r"^[A-Z]{3}$"
_CURRENCY_REASON: Final = "not an ISO 4217 currency code, which v2 requires"
_CurrencyIn: TypeAlias = Annotated[str, StringConstraints(pattern=_CURRENCY)]
_RegexIn: TypeAlias = Annotated[str, AfterValidator(_check_regex)]
_MarkerIn: TypeAlias = Annotated[bool, AfterValidator(_marker_in), _AS_IS]
_MarkerOut: TypeAlias = Annotated[
    dict[str, Any] | None, AfterValidator(_marker_out), _AS_IS
]
_EnvListIn: TypeAlias = Annotated[dict[str, str], AfterValidator(_env_list), _AS_IS]
_EnvMapIn: TypeAlias = Annotated[list[dict[str, Any]], AfterValidator(_env_map), _AS_IS]


def _not_one_of(known: tuple[Any, ...]) -> AfterValidator:
    """A catch-all variant's tag: a known value belongs to its own variant (this error is not
    the conversion's reason, so the known variant's is reported)."""

    def check(value: Any) -> Any:
        if value in known:
            raise PydanticCustomError(
                "acp_known_value", "a variant of its own has this value"
            )
        return value

    return AfterValidator(check)


def _refuse(reason: str) -> Callable[[Any], Any]:
    """A type that cannot convert in this direction (declared with its reason)."""

    def refuse(value: Any) -> Any:
        raise _fail(None, reason)

    return refuse


def _variants(
    tag: str, tags: frozenset[str], refused: Mapping[str, str], target: int, name: str
) -> BeforeValidator:
    """A union's tag checked before its variants are tried: a tag the target has no form
    for is refused with its reason, not with every variant's mismatch."""

    def check(value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get(tag), str):
            found = value[tag]
            if found not in tags:
                why = refused.get(found) or f"it has no v{target} form"
                raise _fail(tag, f"{name} `{found}` cannot become v{target}: {why}")
        return value

    return BeforeValidator(check)


def _tagged(tag: str, classes: Mapping[Any, str]) -> Discriminator:
    """The variant of a union, by its tag (read from the input, or from the converter class
    when writing), so that one variant is tried rather than all. A tag that names none is
    refused at the tag."""

    def pick(value: Any) -> str | None:
        if isinstance(value, dict):
            found = value.get(tag)
            return found if isinstance(found, str) else None
        return classes.get(type(value))

    return Discriminator(
        pick,
        custom_error_type="acp_tag",
        custom_error_message="`{field}` is missing or names none of its variants",
        custom_error_context={"field": tag},
    )


def _git_patch(path: str, old: str | None, new: str) -> str:
    """One `diff --git` section in Git's patch format for a whole-file change, absolute paths."""
    head = [f"diff --git {path} {path}\n"]
    if old is None:
        head += ["new file mode 100644\n", "--- /dev/null\n", f"+++ {path}\n"]
    else:
        head += [f"--- {path}\n", f"+++ {path}\n"]
    before = (old or "").splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    hunks = list(difflib.unified_diff(before, after, n=3))[
        2:
    ]  # the ---/+++ lines are written above
    lines = []
    for line in hunks:
        if line.endswith("\n"):
            lines.append(line)
        else:  # the file's last line has no newline
            lines += [line + "\n", "\\ No newline at end of file\n"]
    return "".join(head + lines)


def _diff_to_git_patch(value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    """A v1 diff (`path`, `oldText`, `newText`) as v2's: one change (`add` without old
    text, else `modify`) and the whole-file patch in `git_patch` format; a relative path as
    `_resolved_path` takes it."""
    path, old, new = value.get("path"), value.get("oldText"), value.get("newText")
    if not isinstance(path, str):
        raise _fail("path", "a diff needs its path, a string")
    if re.match(_ABSOLUTE_PATH, path) is None:
        try:
            path = _resolved_path(path, info)
        except PydanticCustomError:
            raise _fail("path", _ABSOLUTE_PATH_REASON) from None
    if not isinstance(new, str):
        raise _fail("newText", "a diff needs its new text, a string")
    if old is not None and not isinstance(old, str):
        raise _fail("oldText", "old text is a string or null")
    for key in ("changes", "patch"):
        if key in value:
            raise _fail(
                key, f"unknown property `{key}` would become the v2 field of that name"
            )
    out = {k: v for k, v in value.items() if k not in ("path", "oldText", "newText")}
    out["changes"] = [{"operation": "add" if old is None else "modify", "path": path}]
    out["patch"] = {"format": "git_patch", "text": _git_patch(path, old, new)}
    return out


def _local_offset(
    year: str, month: str, day: str, hour: str, minute: str, second: str | None
) -> str:
    """This machine's UTC offset at a date and time of its own time zone."""
    try:
        when = datetime(int(year), int(month), int(day), int(hour), int(minute))
        when = when.replace(second=min(int(second or 0), 59)).astimezone()
    except (ValueError, OverflowError, OSError):
        raise _fail(
            None,
            "not a valid calendar date-time, so it cannot become an RFC 3339 date-time",
        ) from None
    offset = when.strftime("%z")
    return offset[:3] + ":" + offset[3:]


def _supply(info: ValidationInfo | SerializationInfo | None) -> Mapping[str, Any]:
    context = info.context if info is not None else None
    supply = context.get("supply") if isinstance(context, Mapping) else None
    return supply if isinstance(supply, Mapping) else {}


def _put(data: dict[str, Any], path: tuple[str, ...], value: Any, keep: bool) -> None:
    """Set ``value`` at ``path`` into nested objects (made where absent); ``keep``: only where unset."""
    for key in path[:-1]:
        inner = data.get(key)
        if not isinstance(inner, dict):
            inner = data[key] = {}
        data = inner
    if not (keep and path[-1] in data):
        data[path[-1]] = value


def _reshape(
    model: BaseModel,
    data: dict[str, Any],
    moves: tuple[tuple[str, tuple[str, ...]], ...] = (),
    fills: tuple[tuple[tuple[str, ...], str | None, Any], ...] = (),
    supplied: tuple[tuple[str, tuple[str, ...]], ...] = (),
) -> dict[str, Any]:
    """The target's shape from a dump: fields moved into nested objects, the values the
    caller supplied (kept by the validator on the model, by supply key), then fills."""
    for key, path in moves:
        if key in data:
            _put(data, path, data.pop(key), keep=False)
    given = (model.__pydantic_private__ or {}).get("_supplied", {})
    for key, path in supplied:
        if key in given:
            _put(data, path, given[key], keep=False)
    for path, when, value in fills:
        if when is None or data.get(when) is not None:
            _put(data, path, copy.deepcopy(value), keep=True)
    return data
