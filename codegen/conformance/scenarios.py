"""The scenarios, one per requirement of the session-archive RFD, in run order.

Each names the RFD section it checks. ``needs_archive`` scenarios are skipped when the
agent does not advertise the ``archive`` capability where its protocol version puts it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..runtime._runtime import INVALID_PARAMS, RESOURCE_NOT_FOUND
from .context import OMIT, Context, _obj, idle_stop_reason
from .driver import Failure, Received, Skip, in_order, shown

SIGN_OF_LIFE_S = 1.0  # the longest active-archive waits for a v1 turn to show it runs


@dataclass(frozen=True)
class Scenario:
    name: str
    section: str  # of the RFD
    summary: str
    run: Callable[[Context], None]
    needs_archive: bool = True


def _initialize(ctx: Context) -> None:
    # The runner has read the version the agent answered (another one: the version's
    # scenarios are skipped before this runs) and checked the result against that version's
    # InitializeResponse; the check below is only a guard.
    agreed = ctx.init.get("protocolVersion")
    if agreed != ctx.version:
        raise Skip(f"the agent does not speak protocol {ctx.version} (it answered protocolVersion {shown(agreed)})")


def _capability(ctx: Context) -> None:
    right = (
        ("agentCapabilities", "sessionCapabilities", "archive")
        if ctx.version == 1
        else ("capabilities", "session", "archive")
    )
    value: Any = ctx.init
    for key in right:
        value = value.get(key) if isinstance(value, dict) else None
    elsewhere = [p for p in _keys_named(ctx.init, "archive") if p != right]
    where = "/" + "/".join(right)
    if elsewhere:
        wrong = ", ".join("/" + "/".join(p) for p in elsewhere)
        raise Failure(f"archive advertised at {wrong}; protocol {ctx.version} puts it at {where} only")
    if value is None:
        raise Skip(f"the agent does not advertise archive ({where} absent)")
    if not isinstance(value, dict):
        raise Failure(f"{where} must be an object ({{}} means supported), got {shown(value)}")
    if ctx.version == 1 and not ctx.caps.list:
        raise Failure(
            "v1 agents that advertise sessionCapabilities.archive must also advertise sessionCapabilities.list"
        )


def _keys_named(value: Any, name: str, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths of every object key ``name`` (outside ``_meta``, which is free-form)."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "_meta":
                continue
            if key == name:
                found.append((*path, key))
            found += _keys_named(item, name, (*path, key))
    return found


def _archive_unarchive(ctx: Context) -> None:
    ctx.need("list")
    sid = ctx.new_session()
    ctx.archive(sid, "session/archive")
    ctx.archive(sid, "archiving an archived session again")
    ctx.expect_listed(sid, "only", True, "after session/archive")
    ctx.expect_unlisted(sid, "exclude", "after session/archive")
    ctx.unarchive(sid, "session/unarchive")
    ctx.unarchive(sid, "unarchiving an unarchived session again")
    ctx.expect_listed(sid, "exclude", False, "after session/unarchive")
    ctx.expect_unlisted(sid, "only", "after session/unarchive")


def _unknown_id(ctx: Context) -> None:
    sid = f"sess_conformance_unknown_{uuid.uuid4().hex}"
    ctx.fails("session/archive", {"sessionId": sid}, RESOURCE_NOT_FOUND, "session/archive of an unknown id")
    ctx.fails("session/unarchive", {"sessionId": sid}, RESOURCE_NOT_FOUND, "session/unarchive of an unknown id")


def _deleted_id(ctx: Context) -> None:
    ctx.need("delete")
    sid = ctx.new_session()
    ctx.ok("session/delete", {"sessionId": sid})
    ctx.fails("session/archive", {"sessionId": sid}, RESOURCE_NOT_FOUND, "session/archive of a deleted session")
    ctx.fails("session/unarchive", {"sessionId": sid}, RESOURCE_NOT_FOUND, "session/unarchive of a deleted session")


def _filter_values(ctx: Context) -> None:
    ctx.need("list")
    kept, archived = ctx.new_session(), ctx.new_session()
    ctx.archive(archived)
    expected = {kept: False, archived: True}
    for value, ids in (
        (OMIT, {kept}),
        (None, {kept}),
        ("exclude", {kept}),
        ("include", {kept, archived}),
        ("only", {archived}),
    ):
        listed = ctx.listing(value)
        label = "omitted" if value is OMIT else shown(value)
        if set(listed) != ids:
            raise Failure(f"archived={label} listed {sorted(listed)}, expected {sorted(ids)}", ctx.last_list)
        for sid, info in listed.items():
            if info.get("archived") is not expected[sid]:
                raise Failure(
                    f"archived={label}: every listed session needs archived: {str(expected[sid]).lower()}",
                    ("< " + shown(info),),
                )


def _filter_invalid(ctx: Context) -> None:
    ctx.need("list")
    for round_ in ("with no session in cwd", "with a session in cwd"):
        bad: tuple[object, ...] = ("all", "ONLY", True, 1, {})
        for value in bad:
            ctx.fails("session/list", ctx.list_params(value), INVALID_PARAMS, f"archived={shown(value)} {round_}")
        if round_.startswith("with no"):
            ctx.new_session()


def _pagination(ctx: Context) -> None:
    ctx.need("list")
    ids, archived = ctx.paged_sessions()
    for view in ("exclude", "only", "include"):
        in_view = {s for s in ids if view == "include" or (s in archived) == (view == "only")}
        changed: set[str] = set()
        seen: list[str] = []
        cursor: str | None = None
        for _ in range(len(ids) + 2):
            sessions, cursor, reply = ctx.page(view, cursor)
            for info in sessions:
                listed = str(info.get("sessionId"))
                if listed in seen:
                    raise Failure(f"archived={view}: {listed} listed twice while following nextCursor", reply.exchange)
                if listed not in in_view and listed not in changed:
                    raise Failure(f"archived={view}: {listed} does not match the filter", reply.exchange)
                seen.append(listed)
            if cursor is None:
                break
            # Change a session already listed: the rest of the sequence must not shift.
            flip = next((s for s in seen if s not in changed), None)
            if flip is not None:
                changed.add(flip)
                if flip in archived:
                    ctx.unarchive(flip)
                    archived.discard(flip)
                else:
                    ctx.archive(flip)
                    archived.add(flip)
        missing = sorted(in_view - changed - set(seen))
        if missing:
            raise Failure(f"archived={view}: {missing} never listed while following nextCursor (a gap)", ctx.last_list)


def _cursor_filters(ctx: Context) -> None:
    ctx.need("list")
    _, archived = ctx.paged_sessions()
    _, cursor, reply = ctx.page("exclude")
    if cursor is None:
        raise Failure(
            "session/list (archived=exclude) gave no nextCursor, though it did for the same sessions", reply.exchange
        )
    elsewhere = ctx.cwd.rstrip("/") + "-other"
    for params, what in (
        (ctx.list_params("only", cursor=cursor), "archived=only"),
        (ctx.list_params("exclude", cwd=elsewhere, cursor=cursor), "another cwd"),
    ):
        reply = ctx.agent.call("session/list", params)
        if reply.error is not None:
            if reply.error.get("code") != INVALID_PARAMS:
                raise Failure(f"cursor reused with {what}: expected a fresh listing or error -32602", reply.exchange)
            continue
        for info in reply.result.get("sessions", []):
            if not isinstance(info, dict):
                continue
            wrong_state = what == "archived=only" and info.get("sessionId") not in archived
            if wrong_state or info.get("cwd") != params["cwd"]:
                raise Failure(
                    f"cursor reused with {what}: the page kept the old filters ({info.get('sessionId')})",
                    reply.exchange,
                )


def _restoration(ctx: Context) -> None:
    ctx.need("list")
    reopen = ctx.need_reopen()
    sid = ctx.new_session()
    ctx.run_turn(sid, "conformance check: say hello")
    ctx.archive(sid)
    ctx.unarchive(sid)
    # session/unarchive never loads or resumes: the session archive closed stays closed.
    request_id, _mark = ctx.prompt(sid, "conformance check: a prompt after unarchive")
    reply = ctx.agent.wait_reply(request_id, ctx.options.turn_timeout)
    if reply.error is None:
        raise Failure(
            "session/prompt right after session/unarchive was accepted: unarchive must not resume the session",
            reply.exchange,
        )
    ctx.expect_listed(sid, "exclude", False, "after session/unarchive")
    resumed = ctx.reopen(reopen, sid)
    if resumed.error is not None:
        raise Failure(f"{reopen} of the unarchived session failed", resumed.exchange)
    ctx.run_turn(sid, "conformance check: say hello again")


def _history(ctx: Context) -> None:
    ctx.need("load")
    sid = ctx.new_session()
    marker = f"conformance history {uuid.uuid4().hex[:12]}"
    ctx.run_turn(sid, marker)
    ctx.archive(sid)
    ctx.unarchive(sid)
    mark = len(ctx.agent.notifications)
    loaded = ctx.reopen("session/load", sid)
    if loaded.error is not None:
        raise Failure("session/load of the unarchived session failed", loaded.exchange)
    replayed = ctx.updates(sid, mark)
    texts = [
        str(u.get("content", {}).get("text", ""))
        for u in replayed
        if u.get("sessionUpdate") == "user_message_chunk" and isinstance(u.get("content"), dict)
    ]
    if not any(marker in text for text in texts):
        raise Failure(f"session/load after archive and unarchive did not replay the prompt {marker!r}", loaded.exchange)


def _active_archive(ctx: Context) -> None:
    ctx.need("list")
    evidence: tuple[str, ...] = ()
    for text in ctx.options.long_prompts:
        sid, evidence = _archive_during_turn(ctx, text)
        if not evidence:
            after = ctx.agent.call(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "still open?"}]}
            )
            if after.error is None:
                raise Failure(
                    "session/prompt after session/archive was accepted: archive must close the session", after.exchange
                )
            ctx.expect_listed(sid, "only", True, "after archiving an active session")
            return
    raise Skip(
        f"the turn ended before the agent answered session/archive, with each of the {len(ctx.options.long_prompts)}"
        " long prompts: give a --long-prompt that keeps the agent busy longer",
        evidence,
    )


def _archive_during_turn(ctx: Context, text: str) -> tuple[str, tuple[str, ...]]:
    """Archive a session during a turn: (session id, the transcript if the turn ended on its own
    before the agent answered session/archive, else nothing). Which came first is read from the
    order the agent wrote its messages in, never from how long anything took."""
    sid = ctx.new_session()
    prompt_id, mark = ctx.prompt(sid, text)
    prompt = ctx.agent.wait_reply(prompt_id, ctx.options.turn_timeout) if ctx.version == 2 else None
    if prompt is not None and prompt.error is not None:  # v2 acknowledges a prompt at once
        raise Failure("session/prompt failed", prompt.exchange)
    if prompt is None:
        # v1 has no acknowledgement: archive once the turn shows it runs (an update about the
        # session), or after a moment of silence. This only decides whether the attempt can
        # prove anything (an agent may take the archive before the prompt), never the verdict.
        ctx.agent.wait_for(lambda m: _obj(m.get("params")).get("sessionId") == sid, SIGN_OF_LIFE_S, since=mark)
    archived = ctx.agent.call("session/archive", {"sessionId": sid})
    if ctx.version == 1:
        prompt = ctx.agent.wait_reply(prompt_id, ctx.options.turn_timeout)
        end: Received = prompt.received
        stop = _obj(prompt.result).get("stopReason")
    else:
        end = ctx.wait_idle(sid, mark, ctx.options.turn_timeout)
        stop = idle_stop_reason(end)
    assert prompt is not None
    shown_kinds = ("session_info_update", "state_update")
    notes = [
        n
        for n in ctx.agent.notifications[mark:]
        if _obj(n.message.get("params")).get("sessionId") == sid
        and _obj(_obj(n.message.get("params")).get("update")).get("sessionUpdate") in shown_kinds
    ]
    transcript = in_order(
        [(prompt.sent_after, prompt.sent), (archived.sent_after, archived.sent)],
        [*notes, archived.received, prompt.received],
    )
    if ctx.version == 1 and prompt.error is not None:
        return sid, transcript  # the turn never ran (an agent may take the archive first): nothing proven
    if stop != "cancelled" and end.seq < archived.received.seq:
        # The turn may have been over when session/archive came in, even where its end was
        # written after the archived: true update (an agent may finish a turn while it
        # announces the archive): nothing was left to cancel, and nothing is proven.
        return sid, transcript
    info = next((n for n in notes if _obj(n.message["params"].get("update")).get("archived") is True), None)
    if archived.error is not None:
        raise Failure("session/archive of a session with a running turn failed", transcript)
    if info is None or info.seq > archived.received.seq:
        raise Failure("no session_info_update archived: true before the session/archive result", transcript)
    if stop != "cancelled":
        raise Failure(
            f"archiving must cancel the running turn: it ended after the session/archive result, with stopReason"
            f" {shown(stop)}",
            transcript,
        )
    return sid, ()


def _load_archived(ctx: Context) -> None:
    ctx.need("list")
    methods = [m for m, has in (("session/resume", ctx.caps.resume), ("session/load", ctx.caps.load)) if has]
    if not methods:
        raise Skip("the agent advertises neither session/resume nor session/load")
    sid = ctx.new_session()
    ctx.archive(sid)
    for method in methods:
        ctx.reopen(method, sid)  # the agent may refuse; either way the state must not change
        ctx.expect_listed(sid, "only", True, f"after {method} of an archived session")
    if ctx.caps.close:
        ctx.agent.call("session/close", {"sessionId": sid})
        ctx.expect_listed(sid, "only", True, "after session/close of an archived session")


def _delete_archived(ctx: Context) -> None:
    ctx.need("delete")
    ctx.need("list")
    sid = ctx.new_session()
    ctx.archive(sid)
    ctx.ok("session/delete", {"sessionId": sid}, "session/delete of an archived session")
    for value in ("exclude", "include", "only"):
        ctx.expect_unlisted(sid, value, "after session/delete")
    ctx.fails("session/unarchive", {"sessionId": sid}, RESOURCE_NOT_FOUND, "session/unarchive of a deleted session")


def _persistence(ctx: Context) -> None:
    ctx.need("list")
    archived, kept = ctx.new_session(), ctx.new_session()
    ctx.archive(archived)
    ctx.restart()
    ctx.expect_listed(archived, "only", True, "after restarting the agent")
    ctx.expect_listed(kept, "exclude", False, "after restarting the agent")
    ctx.expect_unlisted(archived, "exclude", "after restarting the agent")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "initialize", "Implementation details and plan", "the agent agrees to the protocol version", _initialize, False
    ),
    Scenario(
        "capability", "Capabilities", "archive advertised where the version puts it; v1 with list", _capability, False
    ),
    Scenario(
        "archive-unarchive",
        "Methods; Semantics: Idempotency, Consistency",
        "both succeed twice; listings follow",
        _archive_unarchive,
    ),
    Scenario("unknown-id", "Semantics: Unknown sessions", "unknown ids get -32002", _unknown_id),
    Scenario("deleted-id", "Semantics: Unknown sessions", "deleted ids get -32002", _deleted_id),
    Scenario(
        "filter-values",
        "Listing and state",
        "omitted, null, exclude, include, only; archived on every session",
        _filter_values,
    ),
    Scenario(
        "filter-invalid",
        "Listing and state",
        "other archived values get -32602, even with nothing to list",
        _filter_invalid,
    ),
    Scenario(
        "pagination",
        "Listing and state",
        "filters before pagination: no duplicates, no gaps while archiving",
        _pagination,
    ),
    Scenario(
        "cursor-filters",
        "Listing and state",
        "a cursor reused with other filters starts over or gets -32602",
        _cursor_filters,
    ),
    Scenario(
        "restoration",
        "Semantics: Preservation; Archiving closes active sessions",
        "id kept; unarchive does not resume",
        _restoration,
    ),
    Scenario(
        "history", "Semantics: Preservation", "history replayed by session/load after archive and unarchive", _history
    ),
    Scenario(
        "active-archive",
        "Semantics: Archiving closes active sessions",
        "turn cancelled; archived: true update first",
        _active_archive,
    ),
    Scenario(
        "load-archived",
        "Semantics: Loading archived sessions",
        "resume, load and close leave the state alone",
        _load_archived,
    ),
    Scenario(
        "delete-archived",
        "Semantics: Deletion",
        "a deleted archived session is gone from every filter",
        _delete_archived,
    ),
    Scenario("persistence", "Semantics: Preservation", "archive state survives an agent restart", _persistence),
)

BY_NAME = {s.name: s for s in SCENARIOS}
