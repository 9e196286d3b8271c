"""JSON types on the wire, and the pydantic range: what the generated package alone
decides (no generator import here, so these run on the lowest supported pydantic too,
``nox -s lowest_pydantic``). The property test over every type is in test_wire.py."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from support import LOWEST_PYDANTIC, ROOT

from generated.v1 import models as v1
from generated.v2 import models as v2


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


# -- the reported cases ----------------------------------------------------------------


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize("value", [1, 0, 1.0, "yes", "off", "true", "on", "", [], {}])
def test_a_boolean_is_not_read_from_another_json_type(models, value):
    """``SessionInfo.archived`` is lenient (``x-deserialize-default-on-error``, as upstream
    2026-11 marks it): a value that is not a boolean is dropped, as if it had not been sent,
    never coerced into ``true`` or ``false``."""
    data = {"sessionId": "s", "cwd": "/w", "archived": value}
    for info in (models.SessionInfo.model_validate(data), models.SessionInfo.model_validate_json(json.dumps(data))):
        assert "archived" not in info.model_fields_set
        assert _dump(info) == {"sessionId": "s", "cwd": "/w"}


@pytest.mark.parametrize("value", [1, "on", "true", 0.0])
def test_an_update_never_invents_an_archive_state(value):
    """SessionInfoUpdate.archived is lenient upstream-style: an unreadable value is
    dropped (unchanged), never turned into true or false."""
    try:
        update = v1.SessionInfoUpdate.model_validate({"archived": value})
    except ValidationError:
        return
    assert "archived" not in _dump(update)


@pytest.mark.parametrize("value", ["1", 1.5, True, None])
def test_protocol_version_is_an_integer_on_the_wire(value):
    with pytest.raises(ValidationError):
        v1.InitializeResponse.model_validate({"protocolVersion": value})
    assert _dump(v1.InitializeResponse.model_validate({"protocolVersion": 1}))["protocolVersion"] == 1


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
def test_strings_enums_and_literals_still_parse_from_json(models):
    request = models.ListSessionsRequest.model_validate_json('{"archived": "only", "cwd": "/w"}')
    assert _dump(request) == {"archived": "only", "cwd": "/w"}
    request = models.ListSessionsRequest.model_validate({"archived": "only", "cwd": "/w"})
    assert _dump(request) == {"archived": "only", "cwd": "/w"}


# -- the pydantic range ------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.9.2", "1.10.17", "3.0.0"])
def test_an_unsupported_pydantic_fails_at_import_with_one_line(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    import pydantic

    shutil.copytree(ROOT / "generated", tmp_path / "vendored_guard", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(pydantic, "VERSION", version)
    with pytest.raises(ImportError) as error:
        importlib.import_module("vendored_guard.v1.models")
    message = str(error.value)
    assert message == (
        f"vendored_guard needs pydantic>=2.10,<3, found pydantic {version}: pip install 'pydantic>=2.10,<3'"
    )
    for name in [m for m in sys.modules if m.startswith("vendored_guard")]:
        del sys.modules[name]


def test_the_stated_minimum_is_the_one_ci_tests() -> None:
    import generated

    major, minor, _ = LOWEST_PYDANTIC.split(".")
    assert (int(major), int(minor)) == generated.PYDANTIC_MINIMUM
