"""An SDK's own base model, as the ``sdk-style`` golden case's ``base-class`` names it
(``sdk_base:SdkBaseModel``): configured as the official Python SDK configures its own."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SdkBaseModel(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    def sdk_kind(self) -> str:
        """What an SDK's base class adds for its users: here, the class's name."""
        return type(self).__name__
