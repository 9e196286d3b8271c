"""The model settings of the golden cases (``tests/golden/<case>``) beyond the defaults:
``generate/test_golden.py`` pins their bytes, ``config/test_sdk_settings.py`` builds and
imports the same package. Imports codegen: only modules that generate import this."""

from __future__ import annotations

from typing import Any

from acp_codegen.config.settings import ModelOptions, Settings
from acp_codegen.protocol.class_names import ClassNames

# Keyword arguments of generate beyond the style, per case.
SETTINGS: dict[str, dict[str, Any]] = {
    "sdk-style": {
        "conversions": False,
        "settings": Settings(
            ClassNames({"SessionInfo": "SessionSummary"}),
            ModelOptions(
                default_on_null="all",
                unknown_properties="drop",
                field_names={"_meta": "field_meta", "ArchiveSessionRequest.sessionId": "archived_session"},
                aliases={
                    "SessionInfo": "SessionSummary",
                    "ArchiveOrUnarchive": ["ArchiveSessionRequest", "UnarchiveSessionRequest"],
                    "SessionRequestFields": {"common": ["ArchiveSessionRequest", "UnarchiveSessionRequest"]},
                },
                root_models=("SessionUpdate",),
                base_class="sdk_base:SdkBaseModel",  # tests/sdk_base.py
                regenerate="make gen-all",
                string_formats={"date-time": "AwareDatetime"},
                mixins={
                    "UnarchiveSessionRequest": "sdk_base:UnarchiveMixin",
                    "SessionRequestFields": ["sdk_base:Checked"],
                    "SessionUpdate": "sdk_base:RootMixin",
                },
                enums={"Jsonrpc": {"field_2_0": "2.0"}},  # (the fragments have no closed enum: a class of its own)
            ),
        ),
    }
}
