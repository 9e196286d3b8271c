"""The polyfill's own session/list: the archived filter validated as the generated
router does, cursors bound to their filters and signed, and paging over an agent whose
pages shrink when filtered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_codegen.polyfill.archive import Refused, validated
from acp_codegen.polyfill.listing import (
    BadCursor,
    Created,
    Lister,
    Listings,
    Position,
    digest,
    read_cursor,
    write_cursor,
)
from acp_codegen.polyfill.store import Store

KEY = b"k" * 32


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("value", ["all", "ONLY", True, 1, {}, []])
def test_other_filter_values_are_invalid_params(version: int, value: Any) -> None:
    with pytest.raises(Refused) as refused:
        validated(version, "session/list", {"cwd": "/w", "archived": value})
    assert refused.value.code == -32602
    assert refused.value.data["errors"][0]["path"] == ["archived"]


@pytest.mark.parametrize("version", [1, 2])
def test_the_filter_values_and_the_archive_params(version: int) -> None:
    for value in (None, "exclude", "include", "only"):
        assert validated(version, "session/list", {"archived": value}).archived == value
    assert validated(version, "session/archive", {"sessionId": "s"}).session_id == "s"
    for method, params in (("session/archive", {}), ("session/unarchive", {"sessionId": 1}), ("session/list", [])):
        with pytest.raises(Refused) as refused:
            validated(version, method, params)
        assert refused.value.code == -32602


def test_a_cursor_is_bound_to_its_filters_and_signed() -> None:
    at = Position("agent", "agent-cursor-7", given=digest("sess_9") + digest("sess_4"), token="listing-1")
    cursor = write_cursor(KEY, at, "exclude", "/w")
    assert read_cursor(KEY, cursor, "exclude", "/w") == at
    for view, cwd in (("only", "/w"), ("include", "/w"), ("exclude", "/other"), ("exclude", None)):
        with pytest.raises(BadCursor, match="other filters"):
            read_cursor(KEY, cursor, view, cwd)
    body, _, signature = cursor.partition(".")
    for forged in (f"{body}x.{signature}", f"{body}.{signature[:-1]}0", "nonsense", "", f"{body}.{signature}"):
        if forged == cursor:
            with pytest.raises(BadCursor):
                read_cursor(b"another key".ljust(32), forged, "exclude", "/w")
            continue
        with pytest.raises(BadCursor, match="not a cursor"):
            read_cursor(KEY, forged, "exclude", "/w")


class Agent:
    """An agent's session/list: ``count`` sessions, ``page`` a page, its cursor an offset."""

    def __init__(self, count: int, page: int) -> None:
        self.ids = [f"sess_{i:03d}" for i in range(count)]
        self.page = page
        self.asked = 0

    def ask(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked += 1
        start = int(params.get("cursor", 0))
        sessions = [{"sessionId": s, "cwd": "/w", "title": s} for s in self.ids[start : start + self.page]]
        more = start + self.page < len(self.ids)
        return {"sessions": sessions, **({"nextCursor": str(start + self.page)} if more else {})}


def _all(lister: Lister, view: str) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        result = lister.page({"cwd": "/w"}, view, "/w", cursor)
        pages.append([s["sessionId"] for s in result["sessions"]])
        assert all(s["archived"] is (s["sessionId"].endswith(("0", "5"))) for s in result["sessions"])
        cursor = result.get("nextCursor")
        if cursor is None:
            return pages


def test_pages_fill_past_the_agents_filtered_pages_without_gaps_or_repeats(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3", ["agent"], "/w")
    agent = Agent(23, 4)
    archived = [s for s in agent.ids if s.endswith(("0", "5"))]
    for sid in archived:
        store.set_archived(sid, True, "/w")
    store.set_deleted("sess_007")
    created = {"sess_new": Created(0, "/w"), "sess_001": Created(1, "/w"), "sess_far": Created(2, "/elsewhere")}
    lister = Lister(store, agent.ask, created, set(), Listings(), page_size=3)
    only = _all(lister, "only")
    assert [s for page in only for s in page] == archived
    assert all(len(page) == 3 for page in only[:-1])
    agent.asked = 0
    kept = _all(lister, "exclude")
    flat = [s for page in kept for s in page]
    # The agent's unarchived sessions in its order (the deleted one never), then the one
    # created here that the agent does not list (sess_001 it lists; sess_far is elsewhere).
    assert flat == [s for s in agent.ids if s not in archived and s != "sess_007"] + ["sess_new"]
    assert all(len(page) == 3 for page in kept[:-1])
    assert agent.asked >= 6  # the agent's 6 pages, some asked again to go on inside them
    assert len(_all(lister, "include")[0]) == 3


class Shuffling(Agent):
    """Gives each page in another order at every call (as an agent sorting sessions of
    equal times unstably would)."""

    def ask(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super().ask(params)
        turn = self.asked % len(result["sessions"] or [1])
        result["sessions"] = result["sessions"][turn:] + result["sessions"][:turn]
        return result


def _flat(lister: Lister, view: str, fresh: bool = False) -> list[str]:
    """Every session id given while following nextCursor; ``fresh``: each page asked of a
    process that remembers nothing of the listing (the cursor alone)."""
    given, cursor = [], None
    for _ in range(100):
        if fresh:
            lister.listings = Listings()
        result = lister.page({"cwd": "/w"}, view, "/w", cursor)
        given += [s["sessionId"] for s in result["sessions"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            return given
    raise AssertionError("nextCursor never ended")


@pytest.mark.parametrize("fresh", [False, True])
def test_an_agent_that_reorders_its_page_between_calls_loses_and_repeats_nothing(tmp_path: Path, fresh: bool) -> None:
    store = Store(tmp_path / "s.sqlite3", ["agent"], "/w")
    agent = Shuffling(40, 10)
    for sid in agent.ids[::3]:
        store.set_archived(sid, True, "/w")
    lister = Lister(store, agent.ask, {}, set(), Listings(), page_size=3)
    for view, expected in (("exclude", set(agent.ids) - set(agent.ids[::3])), ("only", set(agent.ids[::3]))):
        given = _flat(lister, view, fresh)
        assert sorted(given) == sorted(expected), view  # each once: no gap, no repeat


def test_a_session_moved_to_a_later_agent_page_is_not_given_twice(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3", ["agent"], "/w")
    agent = Agent(12, 4)
    lister = Lister(store, agent.ask, {}, set(), Listings(), page_size=3)
    first = lister.page({"cwd": "/w"}, "exclude", "/w", None)
    assert [s["sessionId"] for s in first["sessions"]] == agent.ids[:3]
    # Updated since (its agent orders by update time, oldest first): it moves to page 3.
    agent.ids.remove("sess_001")
    agent.ids.insert(9, "sess_001")
    given = [s["sessionId"] for s in first["sessions"]]
    cursor = first.get("nextCursor")
    while cursor is not None:
        result = lister.page({"cwd": "/w"}, "exclude", "/w", cursor)
        given += [s["sessionId"] for s in result["sessions"]]
        cursor = result.get("nextCursor")
    assert sorted(given) == sorted(agent.ids)


def test_a_session_created_here_that_the_agent_stopped_listing_comes_at_the_end(tmp_path: Path) -> None:
    # opencode lists its 100 most recently updated sessions and those open in its process:
    # one created here, listed once, then closed by an archive, falls out of every page.
    store = Store(tmp_path / "s.sqlite3", ["agent"], "/w")
    agent = Agent(10, 4)
    created = {sid: Created(n, "/w") for n, sid in enumerate(agent.ids)}
    listed: set[str] = set()
    lister = Lister(store, agent.ask, created, listed, Listings(), page_size=3)
    assert sorted(_flat(lister, "include")) == agent.ids
    assert listed == set(agent.ids)
    for sid in ("sess_002", "sess_007"):
        store.set_archived(sid, True, "/w")
        agent.ids.remove(sid)
    assert _flat(lister, "only") == ["sess_002", "sess_007"]
    assert _flat(lister, "exclude") == agent.ids
    assert sorted(_flat(lister, "include")) == sorted(created)


def test_a_session_created_here_that_leaves_the_rest_of_an_agent_page_is_not_lost(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3", ["agent"], "/w")
    agent = Agent(6, 6)
    created = {sid: Created(n, "/w") for n, sid in enumerate(agent.ids)}
    lister = Lister(store, agent.ask, created, set(), Listings(), page_size=3)
    first = lister.page({"cwd": "/w"}, "exclude", "/w", None)
    assert [s["sessionId"] for s in first["sessions"]] == agent.ids[:3]
    agent.ids.remove("sess_004")  # on the page the agent gave, past the polyfill's page
    rest = lister.page({"cwd": "/w"}, "exclude", "/w", first["nextCursor"])
    assert [s["sessionId"] for s in rest["sessions"]] == ["sess_003", "sess_005", "sess_004"]
    assert "nextCursor" not in rest


def test_the_docs_name_every_option_of_the_command() -> None:
    import argparse

    from acp_codegen.cli import _parser
    from support import ROOT

    [sub] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    options = {s for a in sub.choices["polyfill"]._actions for s in a.option_strings} - {"-h", "--help"}
    assert options == {"--store"}
    for page in ("docs/polyfill.md", "docs/cli.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert all(f"`{o}" in text or f"[{o}" in text for o in options), page
