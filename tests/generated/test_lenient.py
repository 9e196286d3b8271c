"""Upstream's lenient-deserialisation markers, as the generated models honour them.

``x-deserialize-default-on-error``: an invalid value of an optional field is dropped
instead of failing the whole message: the field reads as its default but stays unset,
so it is omitted on output (never an explicit ``null``, which may mean "clear").
``x-deserialize-skip-invalid-items``: invalid list items
are dropped. ``x-deserialize-default-on-null``: a null list or map reads as the empty one.
Fields without the markers stay strict. The annotation behind them (``_runtime.Lenient``)
is tested here too, so that ``nox -s lowest_pydantic`` runs it on the oldest pydantic.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator

from generated import _runtime
from generated.v1 import models as v1
from generated.v2 import models as v2


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


@pytest.mark.parametrize(
    ("models", "field", "bad", "expected"),
    [
        (v1, "loadSession", "yes please", False),
        (v1, "sessionCapabilities", 7, {}),
        (v1, "_meta", "not an object", None),
        (v2, "session", ["not", "capabilities"], None),
        (v2, "_meta", 12, None),
    ],
    ids=["v1-loadSession", "v1-sessionCapabilities", "v1-meta", "v2-session", "v2-meta"],
)
def test_an_invalid_marked_value_becomes_absent(models, field, bad, expected):
    for caps in (
        models.AgentCapabilities.model_validate({field: bad}),
        models.AgentCapabilities.model_validate_json(json.dumps({field: bad})),
    ):
        assert _dump(caps) == {}
        name = next(n for n, f in type(caps).model_fields.items() if field in (f.alias, n))
        assert caps.model_fields_set == set()
        assert _dump(caps.model_copy()) == {}
        value = getattr(caps, name)
        assert (_dump(value) if hasattr(value, "model_dump") else value) == expected


def test_an_invalid_title_update_does_not_clear_the_title():
    """`null` clears the title; a title that could not be read leaves it unchanged."""
    update = v1.SessionInfoUpdate.model_validate({"title": 5, "archived": True})
    assert _dump(update) == {"archived": True}
    assert "title" not in update.model_fields_set
    cleared = v1.SessionInfoUpdate.model_validate({"title": None})
    assert _dump(cleared) == {"title": None}


def test_lenient_fields_given_by_attribute_name_are_dropped_too():
    caps = v1.AgentCapabilities.model_validate({"load_session": "yes", "loadSession": True})
    assert caps.load_session is True


def test_other_errors_still_fail_beside_a_lenient_one():
    with pytest.raises(ValidationError) as info:
        v1.Implementation.model_validate({"name": 3, "version": "1.0", "title": 5})
    assert [e["loc"] for e in info.value.errors()] == [("name",)]


def test_a_defaulted_model_field_is_a_model_not_a_dict():
    caps = v1.AgentCapabilities.model_validate({"sessionCapabilities": ["wrong"]})
    assert isinstance(caps.session_capabilities, v1.SessionCapabilities)


def test_the_rest_of_the_message_survives_a_lenient_field():
    info = v1.Implementation.model_validate({"name": "zed", "version": "1.0", "title": {"nested": True}})
    assert (info.name, info.version, info.title) == ("zed", "1.0", None)
    assert _dump(info) == {"name": "zed", "version": "1.0"}


def test_a_required_field_is_not_made_lenient_by_the_marker_of_another():
    with pytest.raises(ValidationError):
        v1.Implementation.model_validate({"name": 3, "version": "1.0"})


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
def test_invalid_list_items_are_dropped_and_valid_ones_kept(models):
    listing = models.ListSessionsResponse.model_validate(
        {
            "sessions": [
                {"sessionId": "a", "cwd": "/a"},
                {"cwd": "/missing-id"},
                "not a session",
                {"sessionId": "b", "cwd": "/b", "archived": True},
            ]
        }
    )
    assert [s.session_id for s in listing.sessions] == ["a", "b"]
    assert listing.sessions[1].archived is True


def test_a_list_field_that_is_not_a_list_still_fails():
    with pytest.raises(ValidationError):
        v1.ListSessionsResponse.model_validate({"sessions": {"sessionId": "a"}})


def test_unmarked_fields_stay_strict():
    with pytest.raises(ValidationError):
        v1.SessionInfo.model_validate({"sessionId": "a", "cwd": 5})


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
def test_a_tagged_variant_keeps_the_lenient_fields_of_the_type_it_extends(models):
    """The session_info_update variant is generated flat (tag first); the markers of
    SessionInfoUpdate's fields must come with them."""
    notification = "SessionNotification" if models is v1 else "UpdateSessionNotification"
    update = {"sessionUpdate": "session_info_update", "title": 5, "archived": True}
    parsed = getattr(models, notification).model_validate({"sessionId": "s", "update": update})
    assert _dump(parsed)["update"] == {"sessionUpdate": "session_info_update", "archived": True}


def test_a_dropped_value_gets_its_own_default_each_time():
    # The default is validated (a model) and fresh per message, as pydantic's own defaults are.
    first, second = (v1.AgentCapabilities.model_validate({"sessionCapabilities": 7}) for _ in range(2))
    assert first.session_capabilities is not second.session_capabilities
    assert list(first.model_dump()) == list(v1.AgentCapabilities().model_dump())  # field order kept


@pytest.mark.parametrize(
    ("value", "expected"),
    [(["/x", 3, "/y"], ["/x", "/y"]), (5, None), (None, None), ([], [])],
    ids=["bad-item", "not-a-list", "null", "empty"],
)
def test_a_field_with_both_markers_drops_bad_items_then_the_whole_value(value, expected):
    # additionalDirectories: skip-invalid-items and default-on-error (and not nullable).
    info = v1.SessionInfo.model_validate({"sessionId": "a", "cwd": "/a", "additionalDirectories": value})
    assert info.additional_directories == expected
    assert ("additional_directories" in info.model_fields_set) is (expected is not None)
    assert _dump(info).get("additionalDirectories") == expected


# -- the annotation itself ---------------------------------------------------------------


def _runtime_calls(validator: SchemaValidator, value: object) -> list[str]:
    """The functions of the package's _runtime module that validating ``value`` calls."""
    calls: list[str] = []

    def profile(frame: Any, event: str, _: object) -> None:
        if event == "call" and frame.f_code.co_filename == _runtime.__file__:
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        validator.validate_python(value)
    except ValidationError:
        pass
    finally:
        sys.setprofile(None)
    return calls


class _Lenient(BaseModel):
    title: Annotated[StrictStr | None, _runtime.ABSENT_ON_ERROR] = None
    count: Annotated[StrictInt, _runtime.Lenient(absent_on_error=True, default=3)] = 3
    tags: Annotated[list[StrictStr] | None, _runtime.NOT_NULL, _runtime.SKIP_INVALID_ITEMS_OR_ABSENT] = None
    ids: Annotated[list[StrictInt], _runtime.SKIP_INVALID_ITEMS]


def test_lenient_fields_are_tried_in_pydantic_core_first() -> None:
    schema = _Lenient.__pydantic_core_schema__["schema"]["fields"]["title"]["schema"]["schema"]
    own = {"type": "nullable", "schema": {"type": "str", "strict": True}}
    assert schema["type"] == "lax-or-strict" and schema["strict_schema"] == own
    # The field's own type first; the recovery (a Python function) only when it fails.
    lenient = schema["lax_schema"]
    assert lenient["type"] == "union" and lenient["mode"] == "left_to_right"
    assert lenient["choices"][0] == own
    assert lenient["choices"][1]["type"] == "function-wrap"


class _Ack(BaseModel):
    model_config = ConfigDict(extra="allow")
    meta: Annotated[dict[str, Any] | None, Field(alias="_meta"), _runtime.ABSENT_ON_ERROR] = None


class _Named(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: StrictStr
    meta: Annotated[dict[str, Any] | None, Field(alias="_meta"), _runtime.ABSENT_ON_ERROR] = None


@pytest.mark.parametrize(
    ("value", "chosen"),
    [
        ({"_meta": []}, dict),  # valid only as the extension's value: kept whole
        ({"_meta": {"k": 1}}, _Ack),  # valid as the first member: as before
        ({"name": "n", "_meta": 5}, dict),
        ({"name": "n", "_meta": {}}, _Named),  # both exact: the one with more fields set
    ],
)
def test_in_a_union_a_member_the_value_is_valid_for_wins_over_a_recovered_one(value, chosen):
    adapter = TypeAdapter(_Ack | _Named | Any)
    read = adapter.validate_python(value)
    assert type(read) is chosen
    assert adapter.dump_python(read, mode="json", by_alias=True, exclude_unset=True) == value


def test_in_a_union_without_an_exact_member_recovery_still_reads_the_value() -> None:
    read = TypeAdapter(_Named | int).validate_python({"name": "n", "_meta": 5})
    assert isinstance(read, _Named) and read.meta is None and read.model_fields_set == {"name"}


def test_strict_validation_reads_without_the_markers() -> None:
    assert _Lenient.model_validate({"title": 5, "ids": [1]}).model_fields_set == {"ids"}
    with pytest.raises(ValidationError) as caught:
        _Lenient.model_validate({"title": 5, "ids": [1, "x"]}, strict=True)
    assert {e["loc"] for e in caught.value.errors()} == {("title",), ("ids", 1)}


def test_lenient_recovery() -> None:
    good = _Lenient.model_validate({"title": "t", "count": 5, "tags": ["a"], "ids": [1, 2]})
    assert good.model_dump(exclude_unset=True) == {"title": "t", "count": 5, "tags": ["a"], "ids": [1, 2]}
    bad = _Lenient.model_validate({"title": 5, "count": "5", "tags": ["a", 1, "b"], "ids": [1, "x", 3]})
    # Dropped values read as the default but stay unset; invalid items are dropped.
    assert (bad.title, bad.count, bad.tags, bad.ids) == (None, 3, ["a", "b"], [1, 3])
    assert bad.model_fields_set == {"tags", "ids"}
    assert bad.model_dump(exclude_unset=True) == {"tags": ["a", "b"], "ids": [1, 3]}
    # null where the type says not-null, or a value that is no list: the field is dropped.
    for tags in (None, "a"):
        dropped = _Lenient.model_validate({"tags": tags, "ids": []})
        assert dropped.tags is None and "tags" not in dropped.model_fields_set
    # A required skip-only field still fails when it is not a list at all.
    with pytest.raises(ValidationError) as caught:
        _Lenient.model_validate({"ids": "1"})
    assert {e["loc"][0] for e in caught.value.errors()} == {"ids"}


def test_lenient_default_is_the_fields_own_and_fresh() -> None:
    class WithObject(BaseModel):
        options: Annotated[dict[str, StrictInt], _runtime.Lenient(absent_on_error=True, default={"a": 1})] = {"a": 1}

    first, second = (WithObject.model_validate({"options": "x"}) for _ in range(2))
    assert first.options == {"a": 1} and first.model_fields_set == set()
    first.options["b"] = 2
    assert second.options == {"a": 1}  # a copy per instance, as pydantic copies mutable defaults


def test_null_reads_as_the_empty_value_of_a_list_or_map() -> None:
    class NullAsEmpty(BaseModel):
        servers: Annotated[list[StrictStr], _runtime.Lenient(null_reads_as=[])]
        env: Annotated[dict[str, StrictStr] | None, _runtime.NOT_NULL, _runtime.Lenient(null_reads_as={})] = None

    read = NullAsEmpty.model_validate({"servers": None, "env": None})
    assert (read.servers, read.env) == ([], {}) and read.model_fields_set == {"servers", "env"}
    read.servers.append("a")
    assert NullAsEmpty.model_validate({"servers": None}).servers == []  # a fresh value each time
    assert NullAsEmpty.model_validate({"servers": ["a"], "env": {"K": "v"}}).env == {"K": "v"}
    for bad in ({"servers": [1]}, {"servers": None, "env": {"K": 1}}, {"servers": "a"}):
        with pytest.raises(ValidationError):
            NullAsEmpty.model_validate(bad)  # only null is read leniently


def test_valid_values_never_reach_the_recovery() -> None:
    validator = _Lenient.__pydantic_validator__
    assert _runtime_calls(validator, {"title": "t", "count": 1, "tags": ["a", "b"], "ids": [1]}) == []
    assert "recover" in _runtime_calls(validator, {"tags": ["a", 1], "ids": [1]})
    assert "recover" in _runtime_calls(validator, {"title": 1, "ids": [1]})
