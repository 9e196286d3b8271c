"""JSON-RPC 2.0 machinery shared by every version's ``dispatch.Router``.

A version's ``dispatch`` module supplies the route table (generated from its method
metadata) and the handler; this module turns one incoming message into one response:
envelope checks, params validation into the models, the runtime feature gate, the
handler call, and errors mapped to JSON-RPC codes without leaking tracebacks.
"""

from __future__ import annotations

import functools
import json
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Literal, NamedTuple, Union, cast

from pydantic import (
    BaseModel,
    Field,
    Strict,
    TypeAdapter,
    ValidationError,
    create_model,
)

from ._runtime import (
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    JsonRpcError,
    MethodNotFoundError,
    ParseError,
    wire_path,
)

logger = logging.getLogger(__name__)

JSONRPC_VERSION = "2.0"


# A path from the params object: wire property names; ``None`` steps into every list item.
FieldPath = tuple[str | None, ...]


class GatedField(NamedTuple):
    """A params property (at any depth) that exists only with ``feature`` enabled."""

    path: FieldPath
    feature: str


class EnumField(NamedTuple):
    """A params property typed by an enum the router checks: an open enum's models keep
    unknown strings (so proxies can forward them), and a ``Literal`` keeps values whose
    feature may be off; an agent accepts only the values it knows and has enabled."""

    path: FieldPath
    values: tuple[tuple[Any, str | None], ...]  # (value, the feature that adds it)


class Route(NamedTuple):
    """One routed method: wire name, handler attribute, models and gate markers."""

    name: str
    key: str
    kind: Literal["request", "notification"]
    # A model class, or (over a full upstream schema) a union alias of model classes.
    params: Any
    result: Any | None
    feature: str | None
    gated_fields: tuple[GatedField, ...] = ()
    enum_fields: tuple[EnumField, ...] = ()


# A request id as the fast path accepts it: exactly a JSON integer, string or null (no
# coercion, so ``1.0`` or ``true`` keep taking the general path, which words their answer).
_FAST_ID = Annotated[int, Strict()] | Annotated[str, Strict()] | None


class _Bound(NamedTuple):
    route: Route
    call: Callable[[Any], Awaitable[Any]]
    refused: tuple[GatedField, ...]  # gated on a feature this router has off
    enums: tuple[tuple[FieldPath, frozenset[Any]], ...]  # path, values accepted here
    params: TypeAdapter[Any]
    result: TypeAdapter[Any] | None


# How results are written on the wire: camelCase names, and no key that was never set.
_WIRE: dict[str, Any] = {"by_alias": True, "exclude_unset": True}


class _Outcome(NamedTuple):
    id: Any
    result: Any  # a validated result (see ``result_adapter``), or None
    error: JsonRpcError | None
    result_adapter: TypeAdapter[Any] | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Strict JSON: Python's json also reads NaN and Infinity, which no peer may send (and
# which could not be echoed back as JSON). One decoder, built once: this is the hot path.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


# What ids nearly always are; checked first.
_PLAIN_IDS = frozenset({int, str, type(None)})


def _maybe_constant(text: str | bytes) -> bool:
    """Whether ``text`` may hold NaN or Infinity (or merely mentions them in a string)."""
    if isinstance(text, str):
        return "NaN" in text or "Infinity" in text
    return b"NaN" in text or b"Infinity" in text


def _valid_id(value: Any) -> bool:
    # JSON-RPC 2.0: a string, a number or null (bool is a Python int, but not a JSON number;
    # NaN and the infinities, which a Python caller can pass, are no JSON numbers either).
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or (
        isinstance(value, (str, int)) and not isinstance(value, bool)
    )


def params_error_data(exc: ValidationError, params: Any) -> dict[str, Any]:
    """``data`` of a ``-32602``: one entry per offending wire path, messages joined."""
    by_path: dict[tuple[int | str, ...], list[str]] = {}
    for err in exc.errors(
        include_url=False, include_input=False, include_context=False
    ):
        path = wire_path(params, tuple(err["loc"]), err["type"] == "missing")
        messages = by_path.setdefault(path, [])
        if err["msg"] not in messages:
            messages.append(err["msg"])
    return {
        "errors": [
            {"path": list(path), "message": "; ".join(msgs)}
            for path, msgs in by_path.items()
        ]
    }


def _field_error(path: list[int | str], message: str) -> InvalidParamsError:
    return InvalidParamsError(data={"errors": [{"path": path, "message": message}]})


_ATTRIBUTES: dict[type, dict[str, str]] = {}


def _attribute(value: Any, wire: str) -> Any:
    """The value of wire property ``wire`` of a model (``None`` when absent or not a model)."""
    cls = type(value)
    names = _ATTRIBUTES.get(cls)
    if names is None:
        fields = cls.model_fields if isinstance(value, BaseModel) else {}
        names = _ATTRIBUTES[cls] = {
            (f.alias or name): name for name, f in fields.items()
        }
    name = names.get(wire)
    return None if name is None else getattr(value, name)


def _present(
    value: Any, path: FieldPath, at: list[int | str]
) -> list[tuple[list[int | str], Any]]:
    """Every non-null value found at ``path`` under ``value``, with its wire path."""
    if value is None:
        return []
    if not path:
        return [(at, value)]
    step, rest = path[0], path[1:]
    if step is None:
        if not isinstance(value, list):
            return []
        return [
            found
            for i, item in enumerate(value)
            for found in _present(item, rest, [*at, i])
        ]
    return _present(_attribute(value, step), rest, [*at, step])


# Per method: the params adapter and the result adapter (None: no result type).
_Adapters = dict[str, tuple[TypeAdapter[Any], TypeAdapter[Any] | None]]


@functools.lru_cache(maxsize=32)
def _compiled(
    routes: tuple[tuple[str, Route], ...],
) -> tuple[_Adapters, TypeAdapter[Any] | None]:
    """The bound methods' adapters, and one pydantic-core pass from JSON text to a
    well-formed request of any of them: the envelope (``jsonrpc``, ``id``, ``method``) and
    the params model together, as a union discriminated by ``method``. It accepts only
    what the general path would also accept, into the same params model; anything it
    rejects takes the general path. Built once a process (tens of milliseconds, and a
    server makes a router per connection): adapters are immutable, routers share them.
    """
    adapters = {
        name: (
            TypeAdapter(r.params),
            None if r.result is None else TypeAdapter(r.result),
        )
        for name, r in routes
    }
    # The names are known only at run time, hence the untyped spellings.
    literal, union, annotated = (cast(Any, t) for t in (Literal, Union, Annotated))
    envelopes = [
        create_model(
            f"_Request_{route.key}",
            jsonrpc=(literal[JSONRPC_VERSION], ...),
            id=(_FAST_ID, ...),
            method=(literal[name], ...),
            params=(route.params, ...),
        )
        for name, route in routes
    ]
    if len(envelopes) < 2:
        return adapters, TypeAdapter(envelopes[0]) if envelopes else None
    return adapters, TypeAdapter(
        annotated[union[tuple(envelopes)], Field(discriminator="method")]
    )


def _accepted(
    values: tuple[tuple[Any, str | None], ...], enabled: frozenset[str]
) -> frozenset[Any]:
    return frozenset(
        value for value, feature in values if feature is None or feature in enabled
    )


class BaseRouter:
    """Routes JSON-RPC messages to handler methods; see the version's ``dispatch.Router``."""

    def __init__(
        self, handler: object, routes: Mapping[str, Route], enabled: frozenset[str]
    ) -> None:
        self.enabled_features = enabled
        # Methods gated on a feature that is off are not bound at all: they answer
        # exactly like a method this side never had.
        on = tuple(
            (name, route)
            for name, route in routes.items()
            if route.feature is None or route.feature in enabled
        )
        adapters, self._requests = _compiled(on)
        self._bound: dict[str, _Bound] = {
            name: _Bound(
                route,
                getattr(handler, route.key),
                tuple(f for f in route.gated_fields if f.feature not in enabled),
                tuple(
                    (f.path, _accepted(f.values, enabled)) for f in route.enum_fields
                ),
                *adapters[name],
            )
            for name, route in on
        }

    @property
    def methods(self) -> frozenset[str]:
        """Wire names this router answers (after the feature gate)."""
        return frozenset(self._bound)

    async def handle_message(self, message: Any) -> dict[str, Any] | None:
        """One decoded JSON-RPC message in, the response object out (``None`` for a notification).

        Only requests and notifications belong here: a transport that also receives
        responses to its own requests must route those elsewhere first (here they
        would be answered ``-32600``)."""
        outcome = await self._process(message)
        if outcome is None:
            return None
        if outcome.error is not None:
            return {
                "jsonrpc": JSONRPC_VERSION,
                "id": outcome.id,
                "error": outcome.error.to_error(),
            }
        # A notification-kind method sent with an id still gets its (null) answer.
        try:
            result = self._dump(
                outcome,
                lambda adapter, value: adapter.dump_python(value, **_WIRE, mode="json"),
            )
        except InternalError as exc:
            return {
                "jsonrpc": JSONRPC_VERSION,
                "id": outcome.id,
                "error": exc.to_error(),
            }
        return {"jsonrpc": JSONRPC_VERSION, "id": outcome.id, "result": result}

    async def handle_json(self, text: str | bytes) -> str | None:
        """One JSON text in, the response text out (``None`` for a notification).
        Text that is not JSON answers ``-32700``."""
        # The hot path (benchmark R1): a well-formed request is parsed and validated in one
        # pydantic-core pass. pydantic-core reads NaN and Infinity, which strict JSON does
        # not, so text that may hold them goes the general way, as does anything the pass
        # rejects: the general path alone words every error.
        if self._requests is not None and not _maybe_constant(text):
            try:
                request = self._requests.validate_json(text)
            except Exception:  # whatever went wrong here, the general path answers it
                pass
            else:
                # What ``_run`` does for a request, inlined (no outcome tuple, no extra await).
                bound = self._bound[request.method]
                try:
                    result = self._result(
                        bound, await bound.call(self._check(bound, request.params))
                    )
                except Exception as exc:
                    failed = self._failed(bound, request.id, True, exc)
                    assert failed is not None  # a request always has an answer
                    return self._json(*failed)
                return self._json(request.id, result, None, bound.result)
        try:
            message = _DECODER.decode(
                text.decode() if isinstance(text, bytes) else text
            )
        # JSONDecodeError and UnicodeDecodeError are ValueErrors.
        except (ValueError, RecursionError):
            outcome: _Outcome | None = _Outcome(None, None, ParseError())
        else:
            outcome = await self._process(message)
        if outcome is None:
            return None
        return self._json(*outcome)

    @staticmethod
    def _json(
        id_: Any,
        result: Any,
        error: JsonRpcError | None,
        adapter: TypeAdapter[Any] | None,
    ) -> str:
        """The response text of an outcome (its fields, in order)."""
        # Integer ids are the common case; json.dumps for the rest (str escaping, floats).
        id_text = str(id_) if type(id_) is int else json.dumps(id_)
        if error is None:
            if adapter is None:  # a notification-kind method sent with an id
                return '{"jsonrpc":"2.0","id":' + id_text + ',"result":null}'
            try:
                # As ``_dump`` does, inlined: this is the hot path.
                data = adapter.dump_json(result, by_alias=True, exclude_unset=True)
            except Exception:
                logger.exception("result could not be serialised")
                error = InternalError()
            else:
                return (
                    '{"jsonrpc":"2.0","id":'
                    + id_text
                    + ',"result":'
                    + data.decode()
                    + "}"
                )
        return (
            '{"jsonrpc":"2.0","id":'
            + id_text
            + ',"error":'
            + json.dumps(error.to_error())
            + "}"
        )

    @staticmethod
    def _dump(outcome: _Outcome, dump: Callable[[TypeAdapter[Any], Any], Any]) -> Any:
        """Serialise a result; one that cannot be (too deep, say) is the handler's fault: -32603."""
        if outcome.result_adapter is None:
            return None
        try:
            return dump(outcome.result_adapter, outcome.result)
        except Exception:
            logger.exception("result could not be serialised")
            raise InternalError() from None

    async def _process(self, message: Any) -> _Outcome | None:
        if not isinstance(message, dict):
            return _Outcome(
                None,
                None,
                InvalidRequestError(data={"reason": "a message must be a JSON object"}),
            )
        is_request = "id" in message
        id_ = message.get("id")
        if type(id_) not in _PLAIN_IDS and not _valid_id(id_):
            return _Outcome(
                None,
                None,
                InvalidRequestError(
                    data={"reason": "id must be a string, number or null"}
                ),
            )
        method = message.get("method")
        if message.get("jsonrpc") != JSONRPC_VERSION:
            return _Outcome(
                id_, None, InvalidRequestError(data={"reason": 'jsonrpc must be "2.0"'})
            )
        if not isinstance(method, str):
            return _Outcome(
                id_,
                None,
                InvalidRequestError(data={"reason": "method must be a string"}),
            )
        params = message.get("params")
        if params is None:
            params = {}
        elif not isinstance(params, (dict, list)):
            return _Outcome(
                id_,
                None,
                InvalidRequestError(data={"reason": "params must be an object"}),
            )
        bound = self._bound.get(method)
        if bound is None:
            return (
                _Outcome(id_, None, MethodNotFoundError(data={"method": method}))
                if is_request
                else None
            )
        return await self._run(bound, id_, is_request, params)

    async def _run(
        self, bound: _Bound, id_: Any, is_request: bool, params: Any
    ) -> _Outcome | None:
        """Params validation and checks, the handler call and its result."""
        try:
            # Sync steps around one await (``handle_json`` inlines this for its fast path).
            result = self._result(bound, await bound.call(self._params(bound, params)))
        except Exception as exc:
            return self._failed(bound, id_, is_request, exc)
        return _Outcome(id_, result, None, bound.result) if is_request else None

    @staticmethod
    def _failed(
        bound: _Bound, id_: Any, is_request: bool, exc: Exception
    ) -> _Outcome | None:
        """The outcome of a call that raised ``exc``; called inside the ``except`` block."""
        method = bound.route.name
        if isinstance(exc, JsonRpcError):
            error: JsonRpcError = exc
        else:
            # The peer gets a bare -32603; the traceback stays in this process's log.
            logger.exception("handler for %s failed", method)
            error = InternalError()
        if not is_request:
            logger.warning("notification %s failed: %s", method, error)
            return None
        return _Outcome(id_, None, error)

    @classmethod
    def _params(cls, bound: _Bound, params: dict[str, Any] | list[Any]) -> Any:
        """Validate params into the route's model and apply the feature gate and enum checks."""
        if isinstance(params, list):
            raise InvalidParamsError(
                data={"errors": [{"path": [], "message": "params must be an object"}]}
            )
        try:
            model = bound.params.validate_python(params)
        except ValidationError as exc:
            raise InvalidParamsError(data=params_error_data(exc, params)) from None
        return cls._check(bound, model)

    @staticmethod
    def _check(bound: _Bound, model: Any) -> Any:
        """The feature gate and enum checks on validated params."""
        for gated in bound.refused:
            for at, _ in _present(model, gated.path, []):
                raise _field_error(at, f"not supported: needs feature {gated.feature}")
        for path, accepted in bound.enums:
            for at, value in _present(model, path, []):
                if value not in accepted:
                    allowed = ", ".join(sorted(repr(v) for v in accepted))
                    raise _field_error(
                        at, f"unsupported value {value!r}; expected one of {allowed}"
                    )
        return model

    @staticmethod
    def _result(bound: _Bound, result: Any) -> Any:
        route = bound.route
        if bound.result is None:
            return None
        if isinstance(route.result, type) and isinstance(result, route.result):
            return result
        try:
            return bound.result.validate_python(result)
        except ValidationError as exc:
            # The handler broke its contract, not the peer: log it here, answer -32603.
            logger.error(
                "handler for %s returned an invalid result: %s", route.name, exc
            )
            raise InternalError() from None
