"""The generated package the agent is built on, under the one name this process knows it by.

From a checkout (``python -m examples.archive_agent``) that is the checkout's ``generated``;
from the installed tool (``python -m acp_codegen.examples.archive_agent``), the same files as
``acp_codegen.reference``. The agent's name decides which, so that a process never imports
the package twice under two names (two sets of classes that ``isinstance`` tells apart).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING or __name__.partition(".")[0] != "acp_codegen":
    from generated._router import BaseRouter, Route
    from generated._runtime import (
        InternalError,
        InvalidParamsError,
        InvalidRequestError,
        JsonRpcError,
        ParseError,
        ResourceNotFoundError,
    )
    from generated.v1 import dispatch as dispatch_v1
    from generated.v1 import models as models_v1
    from generated.v2 import dispatch as dispatch_v2
    from generated.v2 import models as models_v2
else:  # acp_codegen.examples.archive_agent: the installed tool's copy, acp_codegen.reference
    from ...reference._router import BaseRouter, Route
    from ...reference._runtime import (
        InternalError,
        InvalidParamsError,
        InvalidRequestError,
        JsonRpcError,
        ParseError,
        ResourceNotFoundError,
    )
    from ...reference.v1 import dispatch as dispatch_v1
    from ...reference.v1 import models as models_v1
    from ...reference.v2 import dispatch as dispatch_v2
    from ...reference.v2 import models as models_v2

__all__ = [
    "BaseRouter",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JsonRpcError",
    "ParseError",
    "ResourceNotFoundError",
    "Route",
    "dispatch_v1",
    "dispatch_v2",
    "models_v1",
    "models_v2",
]
