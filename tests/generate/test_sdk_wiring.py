"""SDK template sets and their wiring (codegen/sdk_methods.py, codegen/adopt/wire.py), over
``tests/fixtures/adopt/sdk_idiom``: a small SDK in the official Python SDK's conventions,
generated with the archive fragments alone, through ``acp-codegen generate`` and ``check``.

The official SDK itself, from its sdist, is wired by ``adopt`` in tests/adopt/test_sdk_rfd.py.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acp_codegen.adopt.discover import find_roles, setting
from acp_codegen.cli import main
from acp_codegen.config.settings import DEFAULT_OPTIONS
from acp_codegen.generate.pipeline import load_protocols
from acp_codegen.generate.sdk.methods import meta_listing, method_name, method_table, naming_rule
from acp_codegen.protocol.features import gated_off
from acp_codegen.protocol.ir import Method
from acp_codegen.protocol.sources import load_sources
from support import FIXTURES, SCHEMA, SHARED_UPSTREAM
from support.reference_data import needs

FEATURE = "unstable_session_archive"
SDK = FIXTURES / "adopt" / "sdk_idiom"
WIRED = ("meta.py", "interfaces.py", "routing.py", "connection.py")


def sdk_repository(at: Path, features: list[str], sdk: dict[str, str] | None = None) -> Path:
    shutil.copytree(SDK, at, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    src = at / "src"
    table = sdk or setting(find_roles(src / "relay" / "schema.py", src), {}, src / "relay" / "schema.py", at)
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    # The SDK's style: ruff at 120 columns, `_meta` as `field_meta`.
    (at / "pyproject.toml").write_text(
        f'[tool.acp-codegen]\nout = "src/relay/generated"\nfeatures = {json.dumps(features)}\n'
        'formatter = "ruff"\nline-length = 120\n\n[tool.acp-codegen.v1]\nfield-names = { _meta = "field_meta" }\n\n'
        f"[tool.acp-codegen.v1.sdk]\n{lines}",
        encoding="utf-8",
    )
    return at


def with_own_set(at: Path, templates: dict[str, str]) -> Path:
    """The SDK with a template set of its own, ``sdk-templates/`` (file name -> text)."""
    (at / "sdk-templates").mkdir(parents=True)
    for name, text in templates.items():
        (at / "sdk-templates" / name).write_text(text, encoding="utf-8")
    src = SDK / "src"
    found = {role: p.relative_to(SDK).as_posix() for role, p in find_roles(src / "relay" / "schema.py", src).items()}
    return sdk_repository(at, [FEATURE], {"templates": "sdk-templates", "models": "src/relay/schema.py", **found})


def texts(at: Path) -> dict[str, str]:
    return {name: (at / "src" / "relay" / name).read_text(encoding="utf-8") for name in WIRED}


def features_set(at: Path, features: list[str]) -> None:
    pyproject = at / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    start = text.index("features = ")
    end = text.index("\n", start)
    pyproject.write_text(text[:start] + f"features = {json.dumps(features)}" + text[end:], encoding="utf-8")


def test_the_roles_are_found_by_what_the_files_hold(tmp_path: Path) -> None:
    src = shutil.copytree(SDK, tmp_path / "sdk") / "src"
    found = find_roles(src / "relay" / "schema.py", src)
    assert {role: p.name for role, p in found.items()} == {
        "meta": "meta.py",
        "interface": "interfaces.py",
        "agent-router": "routing.py",
        "client-connection": "connection.py",
    }
    # A module that defines the tables but that nothing of the package routes with is no router.
    (src / "relay" / "routing.py").write_text("from .meta import AGENT_METHODS\n", encoding="utf-8")
    assert set(find_roles(src / "relay" / "schema.py", src)) == {"meta", "client-connection"}


def test_the_feature_wires_in_and_out_byte_for_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    at = sdk_repository(tmp_path / "sdk", [FEATURE])
    own = texts(at)
    monkeypatch.chdir(at)
    assert main(["generate"]) == 0
    report = capsys.readouterr().out
    wired = texts(at)
    assert "routing.py: build_agent_router routes session/archive to archive_session" in report
    assert "interfaces.py: Agent.list_sessions gains the keyword archived (unstable_session_archive)" in report

    assert wired["meta.py"] == own["meta.py"].replace(
        '{"session_list": "session/list"}',
        '{\n    "session_list": "session/list",\n    "session_archive": "session/archive",\n'
        '    "session_unarchive": "session/unarchive",\n}',
    )
    agent = ast.parse(wired["interfaces.py"]).body[-1]
    assert isinstance(agent, ast.ClassDef) and agent.name == "Agent"
    signatures = {
        f.name: ast.unparse(f.args) + " -> " + ast.unparse(f.returns or ast.Constant(None))
        for f in agent.body
        if isinstance(f, ast.AsyncFunctionDef)
    }
    assert signatures == {
        "list_sessions": "self, cwd: str | None=None, cursor: str | None=None, archived: SessionArchiveFilter"
        " | None=None, **kwargs: Any -> ListSessionsResponse",
        "archive_session": "self, session_id: str, **kwargs: Any -> ArchiveSessionResponse | None",
        "unarchive_session": "self, session_id: str, **kwargs: Any -> UnarchiveSessionResponse | None",
        "ext_method": "self, method: str, params: dict[str, Any] -> dict[str, Any]",
    }
    # The SDK's comments and layout stay; the routes follow its own, unstable as the feature is.
    assert "# The handlers' models, as the router validates them." in wired["interfaces.py"]
    assert "    # Listing is stable since protocol 1.\n" in wired["routing.py"]
    assert wired["routing.py"].count("unstable=True") == 2
    assert (
        "ListSessionsRequest(cursor=cursor, cwd=cwd, archived=archived, field_meta=kwargs or None)"
        in (wired["connection.py"])
    )

    # The wired SDK imports, routes the methods and sends them as the wire says.
    check = """
import asyncio, json
from relay.connection import ClientSideConnection
from relay.routing import build_agent_router
sent = []
class Conn:
    async def send(self, method, params):
        sent.append([method, params])
        return {"sessions": []} if method == "session/list" else {}
async def run():
    client = ClientSideConnection(Conn())
    await client.archive_session(session_id="s1")
    await client.unarchive_session("s1")
    await client.list_sessions(archived="only")
asyncio.run(run())
routes = build_agent_router(object()).routes
print(json.dumps([sent, {m: [r[2], r[3]] for m, r in routes.items()}]))
"""
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=at / "src", capture_output=True, text=True, check=True, env={"PATH": ""}
    )
    sent, routes = json.loads(done.stdout)
    assert sent == [
        ["session/archive", {"sessionId": "s1"}],
        ["session/unarchive", {"sessionId": "s1"}],
        ["session/list", {"archived": "only"}],
    ]
    assert routes == {
        "session/list": ["list_sessions", False],
        "session/archive": ["archive_session", True],
        "session/unarchive": ["unarchive_session", True],
    }

    # Again: nothing changes; check agrees.
    assert main(["generate"]) == 0
    assert texts(at) == wired
    assert main(["check"]) == 0

    # The feature off: the SDK's files are its own again, byte for byte; check saw it coming.
    features_set(at, [])
    assert main(["check"]) == 1
    assert "-    async def archive_session" in capsys.readouterr().out
    assert main(["generate"]) == 0
    assert texts(at) == own


@pytest.mark.parametrize("features", [[FEATURE], []], ids=["on", "off"])
def test_a_method_that_takes_its_params_class_gains_the_fields_it_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], features: list[str]
) -> None:
    """The SDK behind its models (a newer base added ``cwd`` to ``session/list``'s params and
    dropped ``legacy``): a def that says it takes ``ListSessionsRequest`` (``@param_model``)
    gains the one keyword and loses the other, and the connection sends what the model has,
    as the SDK's ``gen_signature.py`` kept signatures in step; a def that does not say so
    is left as it is. Again: nothing changes, check agrees."""
    at = sdk_repository(tmp_path / "sdk", features)
    src = at / "src" / "relay"
    legacy = "self, legacy: int | None = None, cursor"
    for name, old, new in [
        ("interfaces.py", "self, cwd: str | None = None, cursor", legacy),
        ("connection.py", "self, cwd: str | None = None, cursor", legacy),
        ("connection.py", "cursor=cursor, cwd=cwd,", "legacy=legacy, cursor=cursor,"),
    ]:
        text = (src / name).read_text(encoding="utf-8")
        assert old in text
        (src / name).write_text(text.replace(old, new), encoding="utf-8")
    undecorated = "class Other(Protocol):\n    async def list_sessions(self, cursor: str | None = None) -> None: ...\n"
    with open(src / "interfaces.py", "a", encoding="utf-8") as interfaces:
        interfaces.write(f"\n\n{undecorated}")
    monkeypatch.chdir(at)
    assert main(["generate"]) == 0
    report = capsys.readouterr().out
    for label in ("interfaces.py: Agent.list_sessions", "connection.py: ClientSideConnection.list_sessions"):
        assert f"{label} gains the keyword cwd (a field of ListSessionsRequest)" in report
        assert f"{label} loses the keyword legacy (no field of ListSessionsRequest any more)" in report
    wired = texts(at)
    archived = ", archived: SessionArchiveFilter | None=None" if features else ""
    for name, cls in (("interfaces.py", "Agent"), ("connection.py", "ClientSideConnection")):
        tree = ast.parse(wired[name])
        fn = next(
            f
            for c in tree.body
            if isinstance(c, ast.ClassDef) and c.name == cls
            for f in c.body
            if isinstance(f, ast.AsyncFunctionDef) and f.name == "list_sessions"
        )
        assert ast.unparse(fn.args) == f"self, cursor: str | None=None, cwd: str | None=None{archived}, **kwargs: Any"
    assert "ListSessionsRequest(cursor=cursor, cwd=cwd," in wired["connection.py"]
    assert "legacy" not in wired["connection.py"] + wired["interfaces.py"]
    assert wired["interfaces.py"].endswith(undecorated)
    assert main(["generate"]) == 0
    assert texts(at) == wired
    assert main(["check"]) == 0


def test_a_file_that_does_not_parse_is_reported_and_left(tmp_path: Path, monkeypatch, capsys) -> None:
    at = sdk_repository(tmp_path / "sdk", [FEATURE])
    broken = at / "src" / "relay" / "connection.py"
    broken.write_text(broken.read_text(encoding="utf-8") + "\ndef (\n", encoding="utf-8")
    before = broken.read_bytes()
    monkeypatch.chdir(at)
    assert main(["generate"]) == 1
    out = capsys.readouterr().out
    assert "not wired:\n  src/relay/connection.py: cannot parse it" in out
    assert broken.read_bytes() == before
    assert "archive_session" in texts(at)["routing.py"]  # the others are wired all the same


def test_a_template_set_of_the_repository_s_own(tmp_path: Path, monkeypatch) -> None:
    meta = (
        "{% for m in methods if m.enabled %}\n{{ m.key | ident }} = {{ m.wire | py }}  # {{ m.kind | ident }}"
        "{% if m.feature %}, {{ m.feature | ident }}{% endif +%}\n{% endfor %}\n"
    )
    at = with_own_set(tmp_path / "sdk", {"meta.py.jinja": meta})
    own = texts(at)
    monkeypatch.chdir(at)
    assert main(["generate"]) == 0
    # Only the roles the set has a template for are made; the others stay as they are.
    assert texts(at)["meta.py"] == (
        "session_list = 'session/list'  # request\n"
        "session_archive = 'session/archive'  # request, unstable_session_archive\n"
        "session_unarchive = 'session/unarchive'  # request, unstable_session_archive\n"
        "session_update = 'session/update'  # notification\n"
    ).replace("'", '"')
    assert {k: v for k, v in texts(at).items() if k != "meta.py"} == {k: v for k, v in own.items() if k != "meta.py"}


def test_method_names_follow_the_sdk_s_own_rule() -> None:
    protocol = load_protocols(SCHEMA, frozenset({FEATURE}))[0][0]
    archive = Method("session/archive", "session_archive", "agent", "request", "ArchiveSessionRequest", None)
    assert [method_name(rule, archive, archive.params) for rule in ("class", "wire", "key")] == [
        "archive_session",
        "archive_session",
        "session_archive",
    ]
    # An SDK that names its methods by their meta key gets the feature's named so too.
    assert naming_rule(protocol, {"session_list": "session_list"}) == "key"
    assert naming_rule(protocol, {"session_list": "list_sessions"}) == "class"
    assert naming_rule(protocol, {}) == "class"
    table = method_table(protocol, {}, {FEATURE}, DEFAULT_OPTIONS, {"session_list": "session_list"})
    assert [(m.key, m.name, m.unstable) for m in table if m.side == "agent"] == [
        ("session_archive", "session_archive", True),
        ("session_list", "session_list", False),
        ("session_unarchive", "session_unarchive", True),
    ]
    listing = next(m for m in table if m.key == "session_list")
    assert [(k.name, k.annotation, k.default, k.feature) for k in listing.keywords] == [
        ("cwd", "str | None", "None", None),
        ("cursor", "str | None", "None", None),
        ("archived", "SessionArchiveFilter | None", "None", FEATURE),
    ]


def test_a_router_template_that_leaves_a_method_out_is_reported(tmp_path: Path, monkeypatch, capsys) -> None:
    # The router's function, routing the methods without a feature only.
    router = (
        "def {{ targets.function | ident }}(agent):\n{% for m in methods if m.side == 'agent' and not m.feature %}\n"
        "    router.route_request(AGENT_METHODS[{{ m.key | py }}], {{ m.params | ident }}, agent, {{ m.name | py }})\n"
        "{% endfor %}\n"
    )
    at = with_own_set(tmp_path / "sdk", {"agent_router.py.jinja": router})
    before = (at / "src" / "relay" / "routing.py").read_bytes()
    monkeypatch.chdir(at)
    assert main(["generate"]) == 1
    out = capsys.readouterr().out
    assert "src/relay/routing.py: build_agent_router does not route session/archive, session/unarchive" in out
    assert (at / "src" / "relay" / "routing.py").read_bytes() == before


@needs(SHARED_UPSTREAM / "history" / "v0.9.1")
def test_a_base_older_than_the_feature_lists_none_of_its_methods() -> None:
    """Over upstream v0.9.1 (before the types the RFD extends) no version with the feature
    can be built; the methods it marks are still known to be the feature's, so that the meta
    module lists the base's own methods only."""
    base = SHARED_UPSTREAM / "history" / "v0.9.1" / "schema.json"
    protocol = load_protocols(SCHEMA, frozenset(), bases={1: base})[0][0]
    sources = load_sources(SCHEMA, None, {1: base}, validate=False, features=frozenset())[0]
    off = gated_off((s.data for s in sources.schemas), ()).methods
    assert off == {("session/archive", "agent"), ("session/unarchive", "agent")}
    listed = meta_listing(protocol, sources.meta.data, off)
    assert [key for side, key, _ in listed if side == "agent"] == [
        "authenticate", "initialize", "session_cancel", "session_list", "session_load", "session_new",
        "session_prompt", "session_set_mode", "session_set_model",
    ]  # fmt: skip


# -- the agent connection's hand-over to the version bridge (base-v2) -----------------------

AGENT_CONNECTION = '''\
from __future__ import annotations

import asyncio
from typing import Any

from ..connection import Connection
from .router import build_agent_router


class AgentSideConnection:
    """The agent's side."""

    def __init__(self, to_agent: Any, input_stream: Any, output_stream: Any = None, **kwargs: Any) -> None:
        agent = to_agent(self) if callable(to_agent) else to_agent
        handler = build_agent_router(agent)
        if output_stream is None:
            self._conn = Connection(handler, input_stream, **kwargs)
        else:
            if not isinstance(input_stream, asyncio.StreamWriter):
                raise TypeError("streams")
            # The byte streams.
            self._conn = Connection(handler, input_stream, output_stream, **kwargs)

    async def listen(self) -> None:
        await self._conn.main_loop()
'''
HOOKED = """\
            # acp-codegen: a client of protocol 2 is served through the version bridge (base-v2).
            from .._generated.bridge import bridged_streams

            input_stream, output_stream = bridged_streams(input_stream, output_stream)
            # The byte streams.
            self._conn = Connection(handler, input_stream, output_stream, **kwargs)
"""


def test_the_agent_connection_hands_its_streams_to_the_bridge_and_back(tmp_path: Path) -> None:
    """Where the package serves protocol 2, the class hands the two streams it builds its
    connection on to the host, right before (the transport branch, one stream, is left
    alone); the import is local, the text as the SDK's ruff lays it out; again: nothing
    changes; without the bridge: the SDK's file byte for byte."""
    from acp_codegen.errors import AdoptError
    from acp_codegen.generate.sdk.bridge import bridge_hook
    from acp_codegen.generate.sdk.edits import Edit

    path = tmp_path / "connection.py"
    hooked = Edit(path, AGENT_CONNECTION)
    bridge_hook(hooked, "AgentSideConnection", ".._generated.bridge")
    text = hooked.module.code
    assert text == AGENT_CONNECTION.replace(
        "            # The byte streams.\n"
        "            self._conn = Connection(handler, input_stream, output_stream, **kwargs)\n",
        HOOKED,
    )
    assert hooked.changes == [
        "AgentSideConnection serves protocol 2 through the version bridge (input_stream, output_stream)"
    ]
    path.write_text(text, encoding="utf-8")
    for fix in (["format"], ["check", "--fix", "--select", "I,E,W,F"]):
        subprocess.run([sys.executable, "-m", "ruff", *fix, "--line-length", "120", str(path)], check=True)
    assert path.read_text(encoding="utf-8") == text
    again = Edit(path, text)
    bridge_hook(again, "AgentSideConnection", ".._generated.bridge")
    assert again.module.code == text and again.changes == []
    off = Edit(path, text)
    bridge_hook(off, "AgentSideConnection", None)
    assert off.module.code == AGENT_CONNECTION
    assert off.changes == ["AgentSideConnection no longer serves protocol 2 through the version bridge"]
    unhooked = Edit(path, AGENT_CONNECTION)
    bridge_hook(unhooked, "AgentSideConnection", None)
    assert unhooked.module.code == AGENT_CONNECTION and unhooked.changes == []
    # A connection built on no two of its parameters: said, not guessed.
    single = Edit(path, AGENT_CONNECTION.replace("input_stream, output_stream, **kwargs)", "input_stream, **kwargs)"))
    with pytest.raises(AdoptError, match=r"AgentSideConnection\.__init__ passes no two of its parameters"):
        bridge_hook(single, "AgentSideConnection", ".._generated.bridge")
