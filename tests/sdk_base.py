"""An SDK's own model code, as the ``sdk-style`` golden case names it: its base model
(``base-class = "sdk_base:SdkBaseModel"``), configured as the official Python SDK
configures its own, and per-class members (``mixins``). Here, at the top of tests/, it
is importable from every test folder (``tests/generated`` runs on the oldest pydantic)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, field_validator, model_validator
from typing_extensions import Self


class SdkBaseModel(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    def sdk_kind(self) -> str:
        """What an SDK's base class adds for its users: here, the class's name."""
        return type(self).__name__


class UnarchiveMixin:
    """A plain class of one model's members, as an SDK keeps them: a validator, config, a
    property and a method (mixins: ``UnarchiveSessionRequest``)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(str_strip_whitespace=True)

    @field_validator("session_id", mode="before")
    @classmethod
    def _legacy_id(cls, value: Any) -> Any:
        """An older client's spelling, ``legacy:<id>``, read as the id."""
        return value.removeprefix("legacy:") if isinstance(value, str) else value

    @property
    def sdk_label(self) -> str:
        return f"unarchive {type(self).__name__}"

    def sdk_method(self) -> str:
        return "mixin"


CHECKED: list[str] = []  # the classes Checked's validator ran for, in order


class Checked(BaseModel):
    """A pydantic model of members (mixins: the ``{common}`` alias class): a model validator."""

    @model_validator(mode="after")
    def _record(self) -> Self:
        CHECKED.append(type(self).__name__)
        return self


class RootMixin:
    """Members of a RootModel class (mixins: ``SessionUpdate``, a root model)."""

    @property
    def sdk_label(self) -> str:
        return "root"


class LegacyProtocolVersion:
    """The official SDK's leniency of ``InitializeRequest``, as a mixin: a date string (an
    older client's protocol version) reads as version 1."""

    @field_validator("protocol_version", mode="before")
    @classmethod
    def _legacy(cls, value: Any) -> Any:
        return 1 if isinstance(value, str) else value
