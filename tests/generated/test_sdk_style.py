"""The golden ``sdk-style`` package (an SDK's settings, ``tests/generate/test_golden.py``)
as its users meet it: the SDK's mixins applied by pydantic, formatted strings typed, an
Enum of its own. It
imports nothing of the generator, so ``nox -s lowest_pydantic`` runs it on the oldest
pydantic too. The generator side of these settings is in tests/config/test_sdk_settings.py."""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterator
from datetime import datetime
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError
from sdk_base import CHECKED, Checked, SdkBaseModel, UnarchiveMixin
from support import GOLDEN

PACKAGE = "sdk_style_golden"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, ModuleType]]:
    root = tmp_path_factory.mktemp("golden")
    shutil.copytree(GOLDEN / "sdk-style", root / PACKAGE)
    sys.path.insert(0, str(root))
    try:
        yield {v: importlib.import_module(f"{PACKAGE}.v{v}.models") for v in (1, 2)}
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


@pytest.mark.parametrize("version", [1, 2])
def test_a_plain_mixins_validator_and_config_apply(models: dict[int, ModuleType], version: int) -> None:
    request = models[version].UnarchiveSessionRequest
    assert issubclass(request, UnarchiveMixin) and issubclass(request, SdkBaseModel)
    # the mixin's field_validator, on reading and on constructing
    assert request.model_validate({"sessionId": "legacy:s"}).session_id == "s"
    assert request(session_id="legacy:t").session_id == "t"
    assert _dump(request.model_validate({"sessionId": "legacy:s"})) == {"sessionId": "s"}
    # its model_config, merged with the base class's and the generated one
    config = request.model_config
    assert config["str_strip_whitespace"] is True and config["use_attribute_docstrings"] is True
    assert (config["extra"], config["populate_by_name"]) == ("ignore", True)
    assert request.model_validate({"sessionId": "  s  "}).session_id == "s"
    with pytest.raises(ValidationError):
        request.model_validate({"sessionId": 5})  # the field's type still holds
    made = request(session_id="s")
    assert (made.sdk_label, made.sdk_method(), made.sdk_kind()) == (
        "unarchive UnarchiveSessionRequest",
        "mixin",
        "UnarchiveSessionRequest",
    )
    # only the class it was chosen for
    assert not issubclass(models[version].ArchiveSessionRequest, UnarchiveMixin)


def test_a_pydantic_mixin_of_a_common_class_reaches_its_classes(models: dict[int, ModuleType]) -> None:
    common = models[1].SessionRequestFields
    assert issubclass(common, Checked) and issubclass(models[1].ArchiveSessionRequest, Checked)
    CHECKED.clear()
    models[1].ArchiveSessionRequest.model_validate({"sessionId": "s"})
    common.model_validate({})
    assert CHECKED == ["ArchiveSessionRequest", "SessionRequestFields"]  # its model_validator ran for both


def test_a_root_models_mixin(models: dict[int, ModuleType]) -> None:
    update = models[1].SessionUpdate.model_validate({"sessionUpdate": "session_info_update", "title": "t"})
    assert update.sdk_label == "root" and type(update.root).__name__ == "SessionUpdateSessionInfoUpdate"


def test_date_time_strings_are_aware_datetimes(models: dict[int, ModuleType]) -> None:
    info = models[2].SessionInfo
    read = info.model_validate({"sessionId": "s", "cwd": "/w", "updatedAt": "2026-01-02T03:04:05Z"})
    assert isinstance(read.updated_at, datetime) and read.updated_at.tzinfo is not None
    assert _dump(read)["updatedAt"] == "2026-01-02T03:04:05Z"
    # a naive date-time is no AwareDatetime: upstream's marker leaves it out
    assert (
        "updated_at"
        not in info.model_validate({"sessionId": "s", "cwd": "/w", "updatedAt": "2026-01-02T03:04:05"}).model_fields_set
    )
    # v1 has no format there: a string as sent
    assert (
        models[1].SessionInfo.model_validate({"sessionId": "s", "cwd": "/w", "updatedAt": "yesterday"}).updated_at
        == "yesterday"
    )


@pytest.mark.parametrize("version", [1, 2])
def test_an_enum_of_its_own(models: dict[int, ModuleType], version: int) -> None:
    from enum import Enum

    jsonrpc = models[version].Jsonrpc
    assert issubclass(jsonrpc, Enum) and not issubclass(jsonrpc, str) and "Jsonrpc" in models[version].__all__
    assert [(m.name, m.value) for m in jsonrpc] == [("field_2_0", "2.0")] and jsonrpc("2.0") is jsonrpc.field_2_0
