"""The table of every method an SDK's wiring serves and calls (codegen/sdk_methods.py), with
the SDK's names and the unstable gate of the base (codegen/adopt/gates.py), over the base
the official Python SDK 0.12.1 is built on (schema-v1.19.0): issue 51.

The wiring of the SDK itself, from its sdist, is tests/adopt/test_sdk_every_method.py's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from acp_codegen.config.settings import DEFAULT_OPTIONS
from acp_codegen.config.table import Config, parse_config
from acp_codegen.errors import ConfigError
from acp_codegen.generate.pipeline import load_protocols
from acp_codegen.generate.sdk.gates import chosen_names, disagreements, stable_methods
from acp_codegen.generate.sdk.methods import SdkMethod, listed, method_table
from acp_codegen.protocol.sources import load_sources
from support import SCHEMA, SHARED_UPSTREAM, edit_json
from support.reference_data import needs

FEATURE = "unstable_session_archive"
BASE = SHARED_UPSTREAM / "schema-v1.19.0" / "v1"
V1_21 = SHARED_UPSTREAM / "schema-v1.21.0" / "v1"
HISTORY = SHARED_UPSTREAM / "history" / "v0.6.2"  # one schema with unstable methods in it: no stable listing
pytestmark = needs(BASE / "meta.json")
# What the SDK 0.12.1's routers and connections name themselves (meta key -> Python name).
SDK_NAMES = {
    "initialize": "initialize", "authenticate": "authenticate", "session_new": "new_session",
    "session_load": "load_session", "session_list": "list_sessions", "session_close": "close_session",
    "session_set_mode": "set_session_mode", "session_prompt": "prompt", "session_fork": "fork_session",
    "session_resume": "resume_session", "session_cancel": "cancel", "session_set_config_option": "set_config_option",
    "fs_write_text_file": "write_text_file", "fs_read_text_file": "read_text_file",
    "session_request_permission": "request_permission", "session_update": "session_update",
    "terminal_create": "create_terminal", "terminal_output": "terminal_output",
    "terminal_release": "release_terminal", "terminal_wait_for_exit": "wait_for_terminal_exit",
    "terminal_kill": "kill_terminal", "elicitation_create": "create_elicitation",
    "elicitation_complete": "complete_elicitation",
}  # fmt: skip
SDK_UNSTABLE = {"session_close", "session_fork", "session_resume", "elicitation_complete"}


def table(names: dict[str, str] | None = None) -> tuple[SdkMethod, ...]:
    base = BASE / "schema.unstable.json"
    protocol = load_protocols(SCHEMA, frozenset({FEATURE}), bases={1: base})[0][0]
    sources = load_sources(SCHEMA, None, {1: base}, validate=False, features=frozenset({FEATURE}))[0]
    stable = listed(json.loads((BASE / "meta.json").read_text(encoding="utf-8")))
    return method_table(protocol, sources.meta.data, {FEATURE}, DEFAULT_OPTIONS, SDK_NAMES, SDK_UNSTABLE, stable, names)


def test_every_method_of_the_base_and_the_feature_with_the_sdk_s_names_and_gates() -> None:
    rows = {(m.side, m.wire): (m.name, m.kind, m.unstable) for m in table()}
    every = json.loads((BASE / "meta.unstable.json").read_text(encoding="utf-8"))
    assert {w for s, w in rows if s == "agent"} == set(every["agentMethods"].values()) | {
        "session/archive",
        "session/unarchive",
    }
    assert {w for s, w in rows if s == "client"} == set(every["clientMethods"].values())
    assert (len([1 for s, _ in rows if s == "agent"]), len([1 for s, _ in rows if s == "client"])) == (30, 14)
    # The SDK's rule for the methods it lacks: from the params class, verb first.
    assert rows["agent", "session/delete"] == ("delete_session", "request", False)  # stable in the base
    assert rows["agent", "logout"] == ("logout", "request", False)
    assert rows["agent", "providers/list"] == ("list_providers", "request", True)  # unstable meta only
    assert rows["agent", "nes/accept"] == ("accept_nes", "notification", True)
    assert rows["agent", "document/didOpen"] == ("did_open_document", "notification", True)
    assert rows["agent", "mcp/message"] == rows["client", "mcp/message"] == ("message_mcp", "request", True)
    assert rows["client", "mcp/connect"] == ("connect_mcp", "request", True)
    assert rows["agent", "session/archive"][2] and rows["agent", "session/unarchive"][2]  # the feature's
    # The SDK's own names and its own gates stay, stable in the base or not.
    assert rows["client", "session/update"] == ("session_update", "notification", False)
    assert rows["agent", "session/close"] == ("close_session", "request", True)


def test_unions_and_results_that_are_no_class_are_said() -> None:
    by_wire = {(m.side, m.wire): m for m in table()}
    assert by_wire["agent", "session/set_config_option"].union
    assert by_wire["client", "elicitation/create"].union
    assert not by_wire["agent", "session/delete"].union
    assert not by_wire["agent", "mcp/message"].result_model  # any JSON value
    assert by_wire["agent", "session/delete"].result_model


def test_method_names_chosen_in_the_settings_name_the_methods_the_sdk_lacks() -> None:
    chosen = {"session/delete": "remove_session", "session/list": "listing"}
    rows = {(m.side, m.wire): m.name for m in table(chosen)}
    assert rows["agent", "session/delete"] == "remove_session"
    assert rows["agent", "session/list"] == "list_sessions"  # the SDK's own name wins...
    notes = disagreements(table(chosen), {("agent", "session_list")}, set(), None, chosen)
    assert "  session/list: the SDK names it list_sessions itself; method-names = 'listing' not applied" in notes


def test_what_the_sdk_gates_against_its_base_is_reported() -> None:
    rows = table()
    stable = listed(json.loads((BASE / "meta.json").read_text(encoding="utf-8")))
    routed = {("agent", k) for k in SDK_NAMES} | {("client", k) for k in SDK_NAMES}
    notes = disagreements(rows, routed, SDK_UNSTABLE, stable, {})
    assert notes == [
        "left as the SDK has it:",
        "  session/resume: stable in the base, routed as unstable by the SDK itself; left as it is",
        "  session/close: stable in the base, routed as unstable by the SDK itself; left as it is",
    ]


def config(at: Path, lines: str) -> Config:
    pyproject = at / "pyproject.toml"
    text = f"[tool.acp-codegen]\n{lines}"
    pyproject.write_text(text, encoding="utf-8")
    return parse_config(pyproject, text)


def sdk_layout(at: Path, release: Path, schema: str = "schema.unstable.json", meta: str = "meta.unstable.json") -> None:
    """A release's unstable pair where the SDK keeps it: schema/schema.json, schema/meta.json."""
    (at / "schema").mkdir(exist_ok=True)
    shutil.copyfile(release / schema, at / "schema" / "schema.json")
    shutil.copyfile(release / meta, at / "schema" / "meta.json")


def test_the_stable_meta_is_the_setting_s_else_upstream_s_sibling_else_the_release_s(tmp_path: Path) -> None:
    expected = listed(json.loads((BASE / "meta.json").read_text(encoding="utf-8")))
    # upstream's layout: meta.json beside schema.unstable.json
    upstream = config(tmp_path, f'base-v1 = "{BASE / "schema.unstable.json"}"\n')
    assert stable_methods(upstream, 1) == (expected, None)
    # the SDK's layout: the unstable pair alone, recognised as the release it is
    sdk_layout(tmp_path, BASE)
    table = config(tmp_path, 'base-v1 = "schema/schema.json"\n')
    stable, note = stable_methods(table, 1)
    assert stable == expected and note and "is upstream's schema-v1.19.0" in note
    # the setting wins
    shutil.copyfile(BASE / "meta.json", tmp_path / "schema" / "meta.stable.json")
    edit_json(tmp_path / "schema" / "meta.stable.json", lambda meta: meta["agentMethods"].pop("logout"))
    given = config(tmp_path, 'base-v1 = "schema/schema.json"\nstable-meta-v1 = "schema/meta.stable.json"\n')
    assert stable_methods(given, 1) == (expected - {("agent", "logout")}, None)
    missing = config(tmp_path, 'base-v1 = "schema/schema.json"\nstable-meta-v1 = "schema/nothing.json"\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml: \[tool.acp-codegen\].stable-meta-v1: cannot read"):
        stable_methods(missing, 1)
    # a stable base (nothing unstable in it): every method it lists is stable
    shutil.copyfile(BASE / "schema.json", tmp_path / "schema" / "schema.json")
    assert stable_methods(config(tmp_path, 'base-v1 = "schema/schema.json"\n'), 1) == (None, None)
    assert stable_methods(config(tmp_path, ""), 1) == (None, None)


@needs(V1_21 / "meta.json")
def test_a_release_is_recognised_by_its_schema_and_meta_as_json(tmp_path: Path) -> None:
    """schema-v1.21.0 has schema-v1.19.0's unstable meta and two stable methods more: the
    schema tells them apart. Laid out anew, the same JSON is the same release; edited, none."""
    sdk_layout(tmp_path, V1_21)
    table = config(tmp_path, 'base-v1 = "schema/schema.json"\n')
    expected = listed(json.loads((V1_21 / "meta.json").read_text(encoding="utf-8")))
    assert expected > listed(json.loads((BASE / "meta.json").read_text(encoding="utf-8")))
    stable, note = stable_methods(table, 1)
    assert stable == expected and note and "schema-v1.21.0" in note
    schema = tmp_path / "schema" / "schema.json"
    schema.write_text(json.dumps(json.loads(schema.read_text(encoding="utf-8")), indent=4), encoding="utf-8")
    assert stable_methods(table, 1)[0] == expected
    # edited (one description), or beside another meta: no release, every method added is gated
    edit_json(schema, lambda s: s["$defs"]["DeleteSessionRequest"].update(description="ours"))
    stable, note = stable_methods(table, 1)
    assert stable == frozenset() and note == (
        "gates: schema.json holds unstable methods and is no upstream release acp-codegen knows"
        " (set stable-meta-v1); every method wired anew is gated as unstable"
    )
    sdk_layout(tmp_path, V1_21)
    edit_json(tmp_path / "schema" / "meta.json", lambda meta: meta["agentMethods"].pop("logout"))
    assert stable_methods(table, 1)[0] == frozenset()


@needs(HISTORY / "schema.json")
def test_a_release_whose_stable_methods_are_not_known_is_named(tmp_path: Path) -> None:
    sdk_layout(tmp_path, HISTORY, "schema.json", "meta.json")
    stable, note = stable_methods(config(tmp_path, 'base-v1 = "schema/schema.json"\n'), 1)
    assert stable == frozenset() and note == (
        "gates: schema.json is upstream's v0.6.2, whose stable methods acp-codegen does not know"
        " (set stable-meta-v1); every method wired anew is gated as unstable"
    )


def test_a_chosen_method_name_must_be_an_identifier(tmp_path: Path) -> None:
    good = config(tmp_path, '[tool.acp-codegen.method-names]\n"session/delete" = "remove_session"\n')
    assert chosen_names(good) == {"session/delete": "remove_session"}
    bad = config(tmp_path, '[tool.acp-codegen.method-names]\n"session/delete" = "remove-session"\n')
    with pytest.raises(
        ConfigError, match=r"method-names: 'session/delete' = 'remove-session' is not a Python identifier"
    ):
        chosen_names(bad)
