"""Upstream's lenient-deserialisation markers, as the generated models honour them.

``x-deserialize-default-on-error``: an invalid value of an optional field is dropped
instead of failing the whole message: the field reads as its default but stays unset,
so it is omitted on output (never an explicit ``null``, which may mean "clear").
``x-deserialize-skip-invalid-items``: invalid list items
are dropped. Fields without the markers stay strict.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

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
