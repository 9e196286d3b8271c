"""Behaviour of the generated models: the RFD's examples and its null/omission rules."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError
from support import FIXTURES
from support.reference_data import reference_dir, require

from generated import FEATURES, PROTOCOL_VERSIONS
from generated.v1 import methods as v1_methods
from generated.v1 import models as v1
from generated.v2 import methods as v2_methods
from generated.v2 import models as v2

FIXTURE = json.loads((FIXTURES / "rfd_examples.json").read_text())
RFD = reference_dir() / "rfd" / "session-archive.md"
VERSIONS = {1: (v1, v1_methods), 2: (v2, v2_methods)}


def wire(model: BaseModel) -> str:
    """The documented way to emit wire JSON."""
    return json.dumps(model.model_dump(mode="json", by_alias=True, exclude_unset=True))


def model_for(version: int, method: str, message: dict[str, Any]) -> tuple[type[BaseModel], dict[str, Any]]:
    models, methods = VERSIONS[version]
    if method == "initialize":  # not a method of the fragments; its result type is
        result = message["result"] if version == 1 else FIXTURE["v2_initialize_result"]
        return models.InitializeResponse, result
    spec = {m.name: m for m in methods.METHODS}[method]
    if "params" in message:
        return spec.params, message["params"]
    assert spec.result is not None
    return spec.result, message["result"]


def test_package_covers_both_versions_with_the_feature() -> None:
    assert PROTOCOL_VERSIONS == (1, 2)
    assert FEATURES == frozenset({"unstable_session_archive"})


def test_fixture_lists_exactly_the_rfd_examples() -> None:
    require(RFD)
    blocks = [json.loads(b) for b in re.findall(r"```json[^\n]*\n(.*?)```", RFD.read_text(), re.S)]
    assert [e["message"] for e in FIXTURE["examples"]] == blocks


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("example", FIXTURE["examples"], ids=lambda e: f"{e['method']}#{e['message'].get('id', 'n')}")
def test_rfd_example_parses_and_reemits_byte_for_byte(version: int, example: dict[str, Any]) -> None:
    model_type, payload = model_for(version, example["method"], example["message"])
    parsed = model_type.model_validate(payload)
    assert wire(parsed) == json.dumps(payload)


def test_rfd_examples_land_in_the_expected_types() -> None:
    listing = v1.ListSessionsResponse.model_validate(FIXTURE["examples"][6]["message"]["result"])
    assert [s.archived for s in listing.sessions] == [True, False]
    init = v1.InitializeResponse.model_validate(FIXTURE["examples"][3]["message"]["result"])
    assert init.agent_capabilities is not None
    caps = init.agent_capabilities.session_capabilities
    assert caps is not None and isinstance(caps.archive, v1.SessionArchiveCapabilities)
    v2_init = v2.InitializeResponse.model_validate(FIXTURE["v2_initialize_result"])
    assert v2_init.capabilities is not None and v2_init.capabilities.session is not None
    assert isinstance(v2_init.capabilities.session.archive, v2.SessionArchiveCapabilities)
    note = v1.SessionNotification.model_validate(FIXTURE["examples"][7]["message"]["params"])
    assert isinstance(note.update, v1.SessionUpdateSessionInfoUpdate) and note.update.archived is True


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize("name", ["ArchiveSessionRequest", "UnarchiveSessionRequest"])
@pytest.mark.parametrize("params", [{}, {"sessionId": None}, {"_meta": {}}, {"sessionId": 7}], ids=repr)
def test_session_id_is_required_and_not_null(models: Any, name: str, params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as info:
        getattr(models, name).model_validate(params)
    assert info.value.errors()[0]["loc"][0] == "sessionId"


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize(
    "name",
    [
        "ArchiveSessionRequest",
        "UnarchiveSessionRequest",
        "ArchiveSessionResponse",
        "UnarchiveSessionResponse",
        "SessionArchiveCapabilities",
    ],
)
def test_meta_null_is_equivalent_to_omitted(models: Any, name: str) -> None:
    base = {"sessionId": "s"} if name.endswith("Request") else {}
    with_null = getattr(models, name).model_validate({**base, "_meta": None})
    omitted = getattr(models, name).model_validate(base)
    assert with_null.meta is None and omitted.meta is None
    assert with_null == getattr(models, name).model_validate({**base, "_meta": None})
    assert wire(omitted) == json.dumps(base)
    meta = getattr(models, name).model_validate({**base, "_meta": {"x": [1, {"y": None}]}})
    assert meta.meta == {"x": [1, {"y": None}]}


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize("value", ["exclude", "include", "only", "archived_recently", None])
def test_archived_filter_accepts_its_values_and_keeps_unknown_ones(models: Any, value: str | None) -> None:
    request = models.ListSessionsRequest.model_validate({"archived": value})
    assert request.archived == value
    assert wire(request) == json.dumps({"archived": value})


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize("value", [1, True, {"only": True}, ["only"]])
def test_archived_filter_must_be_a_string(models: Any, value: Any) -> None:
    with pytest.raises(ValidationError):
        models.ListSessionsRequest.model_validate({"archived": value})


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
def test_session_info_update_distinguishes_cleared_title_from_untouched_archive_state(models: Any) -> None:
    update = models.SessionInfoUpdate.model_validate({"title": None, "archived": None})
    # title: null clears the title, so it must survive to the wire ...
    assert "title" in update.model_fields_set
    # ... while archived: null is the same as omitted: nothing changes either way.
    untouched = models.SessionInfoUpdate.model_validate({"title": None})
    assert update.archived is None and untouched.archived is None
    assert wire(update) == '{"title": null, "archived": null}'
    assert wire(models.SessionInfoUpdate.model_validate({})) == "{}"
    assert models.SessionInfoUpdate.model_validate({"archived": True}).archived is True


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
def test_unknown_properties_survive_a_round_trip(models: Any) -> None:
    payload = {"sessionId": "s", "vendorThing": {"a": 1}, "cwd": "/w", "archived": False, "_meta": {"k": "v"}}
    info = models.SessionInfo.model_validate(payload)
    assert json.loads(wire(info)) == payload
    # Known fields keep the schema's order; unknown ones follow them.
    assert list(json.loads(wire(info))) == ["sessionId", "cwd", "archived", "_meta", "vendorThing"]


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
def test_models_accept_python_names_and_emit_wire_names(models: Any) -> None:
    info = models.SessionInfo(session_id="s", cwd="/w", updated_at=None, archived=True)
    assert json.loads(wire(info)) == {"sessionId": "s", "cwd": "/w", "updatedAt": None, "archived": True}
    assert models.SessionInfo.model_validate({"session_id": "s", "cwd": "/w"}).session_id == "s"


@pytest.mark.parametrize("version", [1, 2])
def test_feature_items_carry_the_unstable_notice(version: int) -> None:
    models = VERSIONS[version][0]
    assert (models.ArchiveSessionRequest.__doc__ or "").strip().startswith("**UNSTABLE**")
    field = models.SessionInfo.model_fields["archived"]
    assert (field.description or "").startswith("**UNSTABLE** (feature `unstable_session_archive`)")
    assert "UNSTABLE" not in (models.SessionInfo.__doc__ or "")


@pytest.mark.parametrize("models", [v1, v2])
def test_a_tag_defaults_to_its_constant_and_is_always_written(models: Any) -> None:
    update = models.SessionUpdateSessionInfoUpdate(title="t")  # no session_update=...
    assert update.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "sessionUpdate": "session_info_update",
        "title": "t",
    }
    field = models.SessionUpdateSessionInfoUpdate.model_fields["session_update"]
    assert (field.default, field.alias) == ("session_info_update", "sessionUpdate")
    # Construction may still name it, by either name; another constant is refused.
    assert models.SessionUpdateSessionInfoUpdate(sessionUpdate="session_info_update").model_fields_set == {
        "session_update"
    }
    with pytest.raises(ValidationError):
        models.SessionUpdateSessionInfoUpdate(session_update="other")


@pytest.mark.parametrize("models", [v1, v2])
@pytest.mark.parametrize("data", [{"title": "t"}, {"sessionUpdate": "no_such_update", "title": "t"}])
def test_reading_still_requires_the_tag(models: Any, data: dict[str, Any]) -> None:
    cls = models.SessionUpdateSessionInfoUpdate
    # Reading never calls the constructor that fills the tag in (it would cost on every message).
    assert cls.__pydantic_custom_init__ is False
    with pytest.raises(ValidationError):
        cls.model_validate_json(json.dumps(data))
    with pytest.raises(ValidationError):
        TypeAdapter(models.SessionUpdate).validate_python(data)
