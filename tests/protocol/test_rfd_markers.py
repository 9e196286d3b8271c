"""The RFD's fields read as leniently as their siblings in the base (issue 51): where every
other optional property of a type the fragments extend carries upstream's
``x-deserialize-default-on-error`` in the base, the feature's property carries it too, so
that one bad value is dropped as a sibling's would be instead of rejecting the message."""

from __future__ import annotations

import json

import pytest
from support import SCHEMA, SHARED_UPSTREAM
from support.reference_data import require

from generated.v1 import models

MARK = "x-deserialize-default-on-error"
BASES = {"v1": SHARED_UPSTREAM / "schema-v1.19.0" / "v1", "v2": SHARED_UPSTREAM / "v2"}


def featured_properties(version: str) -> list[tuple[str, str, dict[str, object]]]:
    defs = json.loads((SCHEMA / version / "schema.json").read_text(encoding="utf-8"))["$defs"]
    return [
        (name, prop, spec)
        for name, d in defs.items()
        for prop, spec in d.get("properties", {}).items()
        if spec.get("x-feature")
    ]


@pytest.mark.parametrize("version", sorted(BASES))
def test_a_feature_s_property_is_as_lenient_as_its_siblings_in_the_base(version: str) -> None:
    base = json.loads(require(BASES[version] / "schema.unstable.json").read_text(encoding="utf-8"))["$defs"]
    checked = []
    for name, prop, spec in featured_properties(version):
        siblings = {
            p: s for p, s in base.get(name, {}).get("properties", {}).items() if p not in base[name].get("required", [])
        }
        if siblings and all(s.get(MARK) for s in siblings.values()):
            checked.append(f"{name}.{prop}")
            assert spec.get(MARK) is True, f"{version} {name}.{prop}: its siblings in the base carry {MARK}"
    assert "SessionInfoUpdate.archived" in checked and "SessionCapabilities.archive" in checked


def test_a_bad_archive_state_in_a_session_info_update_is_dropped_as_a_bad_title_is() -> None:
    update = models.SessionInfoUpdate.model_validate({"title": "kept", "archived": "yes"})
    assert (update.title, update.archived) == ("kept", None)
    assert models.SessionInfoUpdate.model_validate({"title": 3, "archived": True}).archived is True
