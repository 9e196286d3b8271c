"""The polyfill's store: shared by processes running at once, kept across restarts, and
keyed so that two agents' sessions never mix."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.polyfill.store import Store, agent_key, default_path
from support import ROOT

COMMAND = ["some-agent", "--flag"]

WRITER = """
import sys
from pathlib import Path
from acp_codegen.polyfill.store import Store
store = Store(Path(sys.argv[1]), ["some-agent", "--flag"], "/work/project")
name = sys.argv[2]
for i in range(150):
    store.set_archived(f"{name}-{i}", i % 2 == 0, "/work/project")
    store.states([f"{name}-{i}", f"other-{i}"])  # reads between the writes, as the relay's thread does
print(store.cursor_key.hex())
"""


def test_two_processes_write_at_once_and_each_sees_the_other(tmp_path: Path) -> None:
    path = tmp_path / "state" / "polyfill.sqlite3"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for name in ("first", "second")
    ]
    outputs = [w.communicate(timeout=120) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], outputs
    keys = {out.decode().strip() for out, _ in outputs}
    assert len(keys) == 1  # one signing key for every process: their cursors are each other's
    store = Store(path, COMMAND, "/work/project")
    states = store.states(f"{name}-{i}" for name in ("first", "second") for i in range(150))
    assert len(states) == 300
    assert all(states[f"{name}-{i}"] == (i % 2 == 0, False) for name in ("first", "second") for i in range(150))
    assert store.cursor_key.hex() in keys


def test_a_store_opened_while_another_process_switches_the_file_to_wal_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two processes creating the file together: SQLite answers the loser "locked" at once,
    # without its busy timeout (seen on CI, about once in a thousand openings).
    connect = sqlite3.connect
    refusals: list[str] = []

    class Racing(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if "journal_mode" in sql and len(refusals) < 3:
                refusals.append(sql)
                raise sqlite3.OperationalError("database is locked")
            return super().execute(sql, *args)

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: connect(*a, **k, factory=Racing))
    store = Store(tmp_path / "polyfill.sqlite3", COMMAND, "/work/project")
    store.set_archived("kept", True, None)
    assert len(refusals) == 3
    assert store.state("kept") == (True, False)


def test_state_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "polyfill.sqlite3"
    store = Store(path, COMMAND, "/work/project")
    store.set_archived("kept", True, "/work/project")
    store.set_archived("undone", True, None)
    store.set_archived("undone", False, None)
    store.set_deleted("gone")
    key = store.cursor_key
    store.close()
    again = Store(path, COMMAND, "/work/project")
    assert again.states(["kept", "undone", "gone", "never"]) == {
        "kept": (True, False),
        "undone": (False, False),
        "gone": (False, True),
    }
    assert again.state("never") == (False, False)
    assert again.cwd("kept") == "/work/project"
    assert again.cursor_key == key


def test_two_agents_sessions_never_mix(tmp_path: Path) -> None:
    path = tmp_path / "polyfill.sqlite3"
    one = Store(path, ["agent-one"], "/work/project")
    other = Store(path, ["agent-two"], "/work/project")
    elsewhere = Store(path, ["agent-one"], "/work/elsewhere")
    one.set_archived("sess_1", True, None)
    assert other.state("sess_1") == (False, False)
    assert elsewhere.state("sess_1") == (False, False)
    other.set_deleted("sess_1")
    assert one.state("sess_1") == (True, False)


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs sh on PATH")
def test_a_program_found_on_path_is_one_agent_with_its_full_path() -> None:
    assert agent_key(["sh", "-c", "x"], "/w") == agent_key([shutil.which("sh") or "", "-c", "x"], "/w")
    assert agent_key(["sh", "-c", "x"], "/w")[0] != agent_key(["sh", "-c", "y"], "/w")[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG layout is the Linux default")
def test_the_default_location_follows_xdg_state_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_path() == tmp_path / "acp-codegen" / "polyfill.sqlite3"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")  # the spec: relative paths are ignored
    assert default_path() == Path.home() / ".local" / "state" / "acp-codegen" / "polyfill.sqlite3"
