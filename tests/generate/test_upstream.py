"""Generation against the full upstream ACP schemas, with the archive fragments overlaid.

Every test here needs the reference data's ``upstream/`` (the ``upstream`` fixture skips without it).
The full renders of all four schemas with and without the feature, byte-for-byte
determinism across processes, and mypy on the output are slow; they run with
the ``slow`` marker, deselected by a bare ``pytest`` (``pytest -m slow tests/generate/test_upstream.py``).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.config.settings import Settings
from acp_codegen.errors import SchemaError
from acp_codegen.generate.pipeline import generate, load_protocols
from acp_codegen.protocol.class_names import ClassNames
from pydantic import BaseModel, TypeAdapter, ValidationError
from support import ROOT, SHARED_UPSTREAM, UPSTREAM_RELEASES, UPSTREAM_SHOWN

FEATURE = "unstable_session_archive"
SCHEMAS = ("schema.json", "schema.unstable.json")
ARCHIVE_METHODS = {"session/archive", "session/unarchive"}
# A class name ending in digits is numbering unless the schema itself spells it so.
NUMBERED = re.compile(r"^\w*?[A-Za-z_](\d+)$")
NEWEST_PYTHON = "3.13"  # the newest Python the project is tested on (noxfile: mypy_newest)
RUFF_RULES = ["--select", "E,F,W,I,B,UP", "--ignore", "E501", "--target-version", "py310"]


def _bases(upstream: Path, schema: str) -> dict[int, Path]:
    return {1: upstream / "v1" / schema, 2: upstream / "v2" / schema}


def _class_names(source: str) -> list[str]:
    return re.findall(r"^class (\w+)", source, re.M) + re.findall(r"^(\w+)(?:: TypeAlias)? = ", source, re.M)


def _numbered(source: str, schema_names: set[str]) -> list[str]:
    return [n for n in _class_names(source) if NUMBERED.match(n) and n not in schema_names]


def _schema_names(upstream: Path, schema: str, version: int) -> set[str]:
    base = json.loads((upstream / f"v{version}" / schema).read_text(encoding="utf-8"))["$defs"]
    fragment = json.loads((ROOT / "schema" / f"v{version}" / "schema.json").read_text(encoding="utf-8"))["$defs"]
    return set(base) | set(fragment)


# -- without rendering: all four schemas, with and without the feature -------------------


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("enabled", [True, False], ids=["with-feature", "without-feature"])
def test_every_upstream_schema_overlays_with_and_without_the_feature(upstream: Path, schema: str, enabled: bool):
    features = frozenset({FEATURE}) if enabled else frozenset()
    protocols, sources = load_protocols(ROOT / "schema", features, ROOT, _bases(upstream, schema))
    for protocol in protocols:
        names = {m.name for m in protocol.methods}
        assert {"initialize", "session/new", "session/prompt", "session/update", "session/list"} <= names
        assert (ARCHIVE_METHODS <= names) is enabled
        assert not (ARCHIVE_METHODS & names) or enabled
        assert (protocol.types["SessionCapabilities"].field("archive") is not None) is enabled
        assert protocol.method("$/cancel_request", "protocol") is not None  # upstream's protocol-level method
        # upstream's mcp/message (x-side "both") is listed for each peer, when the base has it
        if "MessageMcpRequest" in protocol.types:
            assert protocol.method("mcp/message", "agent") and protocol.method("mcp/message", "client")
    assert all(s.schemas[0].name == f"{UPSTREAM_SHOWN}/v{i}/{schema}" for i, s in enumerate(sources, 1))


def test_the_naming_stage_is_deterministic_across_hash_seeds(upstream: Path):
    script = (
        "import json, sys; from pathlib import Path; from acp_codegen.generate.pipeline import load_protocols;"
        f"ps, _ = load_protocols(Path('schema'), frozenset({{{FEATURE!r}}}), Path('.'),"
        f" {{2: Path({str(upstream / 'v2' / SCHEMAS[1])!r})}});"
        "print(json.dumps([[p.schema, sorted(p.derived_names)] for p in ps], sort_keys=False))"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "4242")
    ]
    assert runs[0] == runs[1]
    assert len(runs[0]) > 100_000


# -- rendered: upstream unstable with the feature, as one importable package --------------


@pytest.fixture(scope="module")
def upstream_package(
    upstream_render: Callable[[str, str, bool], Any], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, str, dict[str, str]]:
    result = upstream_render("", SCHEMAS[1], True)
    out = tmp_path_factory.mktemp("upstream")
    name = "acp_upstream_generated"
    for rel, text in result.files.items():
        path = out / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return out, name, result.files


def _import(package: tuple[Path, str, dict[str, str]], module: str) -> ModuleType:
    out, name, _ = package
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return importlib.import_module(f"{name}.{module}")


@pytest.mark.parametrize("version", [1, 2])
def test_upstream_models_have_no_numbered_class_names(upstream, upstream_package, version):
    source = upstream_package[2][f"v{version}/models.py"]
    assert len(_class_names(source)) > 250
    assert _numbered(source, _schema_names(upstream, SCHEMAS[1], version)) == []


def test_upstream_output_passes_ruff(upstream_package):
    out, name, _ = upstream_package
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", *RUFF_RULES, str(out / name)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_upstream_output_passes_black_check(upstream_package):
    """black laid out each module in pieces, cut at hundreds of places here (the models
    of both versions, convert.py): joined, they are black's layout of the whole."""
    out, name, files = upstream_package
    assert "# Formatter: black, line length 88" in files["v1/models.py"]
    done = subprocess.run(
        [sys.executable, "-m", "black", "--check", "--target-version", "py310", "--line-length=88", str(out / name)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def _roundtrip(target: Any, message: dict[str, Any]) -> Any:
    adapter: TypeAdapter[Any] = TypeAdapter(target)
    parsed = adapter.validate_python(message)
    assert adapter.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True) == message
    return parsed


TEXT = {"type": "text", "text": "Summarise the diff"}
LINK = {"type": "resource_link", "uri": "file:///repo/src/main.rs", "name": "main.rs"}

# (version, method, "params" | "result", message, class the message must parse into)
MESSAGES: list[tuple[int, str, str, dict[str, Any], str]] = [
    (
        1,
        "initialize",
        "params",
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": True},
            "clientInfo": {"name": "zed", "version": "0.200.0"},
        },
        "InitializeRequest",
    ),
    (
        1,
        "initialize",
        "result",
        {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True},
                "sessionCapabilities": {"list": {}, "archive": {}},
            },
            "authMethods": [],
            "agentInfo": {"name": "example-agent", "version": "1.2.3"},
        },
        "InitializeResponse",
    ),
    (
        1,
        "session/new",
        "params",
        {"cwd": "/repo", "mcpServers": [{"name": "fs", "command": "/usr/bin/mcp-fs", "args": ["--ro"], "env": []}]},
        "NewSessionRequest",
    ),
    (1, "session/new", "result", {"sessionId": "sess_1"}, "NewSessionResponse"),
    (1, "session/prompt", "params", {"sessionId": "sess_1", "prompt": [TEXT, LINK]}, "PromptRequest"),
    (1, "session/prompt", "result", {"stopReason": "end_turn"}, "PromptResponse"),
    (1, "session/list", "params", {"cwd": "/repo", "archived": "include"}, "ListSessionsRequest"),
    (
        1,
        "session/list",
        "result",
        {
            "sessions": [{"sessionId": "sess_1", "cwd": "/repo", "title": "Fix CI", "archived": True}],
            "nextCursor": "c2",
        },
        "ListSessionsResponse",
    ),
    (
        2,
        "initialize",
        "params",
        {"protocolVersion": 2, "info": {"name": "zed", "version": "0.200.0"}, "capabilities": {}},
        "InitializeRequest",
    ),
    (
        2,
        "initialize",
        "result",
        {
            "protocolVersion": 2,
            "info": {"name": "example-agent", "version": "1.2.3"},
            "capabilities": {"session": {"list": {}, "archive": {}}},
        },
        "InitializeResponse",
    ),
    (
        2,
        "session/new",
        "params",
        {"cwd": "/repo", "mcpServers": [{"type": "stdio", "name": "fs", "command": "mcp-fs"}]},
        "NewSessionRequest",
    ),
    (2, "session/new", "result", {"sessionId": "sess_1"}, "NewSessionResponse"),
    (2, "session/prompt", "params", {"sessionId": "sess_1", "prompt": [TEXT, LINK]}, "PromptRequest"),
    (2, "session/prompt", "result", {}, "PromptResponse"),
    (2, "session/list", "params", {"archived": "only"}, "ListSessionsRequest"),
    (
        2,
        "session/list",
        "result",
        {"sessions": [{"sessionId": "sess_1", "cwd": "/repo", "archived": True}], "nextCursor": "c2"},
        "ListSessionsResponse",
    ),
]

# (version, update, class of the update)
UPDATES: list[tuple[int, dict[str, Any], str]] = [
    (1, {"sessionUpdate": "agent_message_chunk", "content": TEXT}, "SessionUpdateAgentMessageChunk"),
    (1, {"sessionUpdate": "user_message_chunk", "content": LINK}, "SessionUpdateUserMessageChunk"),
    (
        1,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call_1",
            "title": "Read main.rs",
            "kind": "read",
            "status": "pending",
        },
        "SessionUpdateToolCall",
    ),
    (
        1,
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed"},
        "SessionUpdateToolCallUpdate",
    ),
    (
        1,
        {"sessionUpdate": "plan", "entries": [{"content": "Run tests", "priority": "high", "status": "in_progress"}]},
        "SessionUpdatePlan",
    ),
    (
        1,
        {"sessionUpdate": "session_info_update", "title": "Fix CI", "archived": True},
        "SessionUpdateSessionInfoUpdate",
    ),
    (2, {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": TEXT}, "SessionUpdateAgentMessageChunk"),
    (2, {"sessionUpdate": "state_update", "state": "running"}, "SessionUpdateStateUpdateRunning"),
    (2, {"sessionUpdate": "state_update", "state": "idle"}, "SessionUpdateStateUpdateIdle"),
    (2, {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "title": "Edit"}, "SessionUpdateToolCallUpdate"),
    (2, {"sessionUpdate": "session_info_update", "archived": False}, "SessionUpdateSessionInfoUpdate"),
    (2, {"sessionUpdate": "some_future_update", "payload": 1}, "SessionUpdateOther"),
]


@pytest.mark.parametrize(
    ("version", "method", "role", "message", "expected"),
    MESSAGES,
    ids=[f"v{v}-{m}-{r}" for v, m, r, _, _ in MESSAGES],
)
def test_main_method_messages_round_trip(upstream_package, version, method, role, message, expected):
    methods = _import(upstream_package, f"v{version}.methods")
    spec = next(m for m in methods.METHODS if m.name == method)
    parsed = _roundtrip(getattr(spec, role), message)
    assert type(parsed).__name__ == expected


@pytest.mark.parametrize(
    ("version", "update", "expected"),
    UPDATES,
    ids=[f"v{v}-{u['sessionUpdate']}" for v, u, _ in UPDATES],
)
def test_session_update_variants_round_trip(upstream_package, version, update, expected):
    models = _import(upstream_package, f"v{version}.models")
    params_type = models.SessionNotification if version == 1 else models.UpdateSessionNotification
    message = {"sessionId": "sess_1", "update": update}
    parsed = _roundtrip(params_type, message)
    assert isinstance(parsed, BaseModel)
    assert type(parsed.update).__name__ == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", [1, 2])
def test_upstream_lenient_markers_apply(upstream_package, version):
    models = _import(upstream_package, f"v{version}.models")
    # default-on-error: an invalid optional value becomes the default, the message survives
    info = models.SessionInfo.model_validate({"sessionId": "s", "cwd": "/r", "title": 42, "updatedAt": []})
    assert info.title is None and info.updated_at is None
    # skip-invalid-items: the broken session is dropped, the others kept
    listing = models.ListSessionsResponse.model_validate(
        {"sessions": [{"sessionId": "a", "cwd": "/a"}, {"cwd": 3}, {"sessionId": "b", "cwd": "/b"}]}
    )
    assert [s.session_id for s in listing.sessions] == ["a", "b"]


@pytest.mark.parametrize("version", [1, 2])
def test_a_catch_all_variant_takes_no_known_tag(upstream_package, version):
    """Upstream keeps `other` variants apart from the known ones with `not`: a message with
    a known tag is read as that variant or refused, never taken as `other`. Elicitation
    content is a map that may be null, its values typed."""
    models = _import(upstream_package, f"v{version}.models")
    responses: TypeAdapter[Any] = TypeAdapter(models.CreateElicitationResponse)
    for accepted, variant in (
        ({"action": "accept", "content": {"name": "Ana", "age": 3, "tags": ["x"]}}, "Accept"),
        ({"action": "accept", "content": None}, "Accept"),
        ({"action": "decline"}, "Decline"),
        ({"action": "_vendor_snooze", "until": 5}, "Other"),
    ):
        parsed = responses.validate_python(accepted)
        assert type(parsed).__name__ == f"CreateElicitationResponse{variant}"
        assert responses.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True) == accepted
    for refused in ({"action": "accept", "content": {"name": None}}, {"action": "accept", "content": {"a": {}}}):
        with pytest.raises(ValidationError, match="another variant's tag"):
            responses.validate_python(refused)
    with pytest.raises(ValidationError):
        models.CreateElicitationResponseOther.model_validate({"action": "cancel"})


# -- slow: every schema rendered, mypy, cross-process bytes ----------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("python", ["3.10", NEWEST_PYTHON])
def test_upstream_output_passes_mypy_strict(upstream_package, python):
    """For the oldest supported Python and the newest: from 3.12 on, typing's own
    TypeAliasType is what type checkers see in the models."""
    out, name, _ = upstream_package
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", python, name],
        cwd=out,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.slow
# The older snapshot is the ecosystem session's (nox -s ecosystem); README's command renders the newest.
@pytest.mark.parametrize(
    "release", [pytest.param("", marks=pytest.mark.ecosystem), "2026-11"], ids=["2026-08", "2026-11"]
)
@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("enabled", [True, False], ids=["with-feature", "without-feature"])
def test_every_upstream_schema_renders_without_numbered_names(
    upstream: Path, upstream_render: Callable[[str, str, bool], Any], release: str, schema: str, enabled: bool
):
    result = upstream_render(release, schema, enabled)
    for version in (1, 2):
        source = result.files[f"v{version}/models.py"]
        assert _numbered(source, _schema_names(upstream / release, schema, version)) == []
        compile(source, f"v{version}/models.py", "exec")


@pytest.mark.slow
def test_cli_output_is_byte_identical_across_processes(upstream: Path, upstream_package, tmp_path: Path):
    out = tmp_path / "gen"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_codegen",
            "generate",
            "--out",
            str(out),
            "--base-v1",
            str(upstream / "v1" / SCHEMAS[1]),
            "--base-v2",
            str(upstream / "v2" / SCHEMAS[1]),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "977"},
        check=True,
        capture_output=True,
    )
    for rel, text in upstream_package[2].items():
        assert (out / rel).read_text(encoding="utf-8") == text, rel


# -- every release: 2026-08 and 2026-11, and an older-style base derived here --------------

RELEASE_2026_11 = "2026-11"
ARCHIVE_TYPES = {
    "ArchiveSessionRequest",
    "ArchiveSessionResponse",
    "UnarchiveSessionRequest",
    "UnarchiveSessionResponse",
    "SessionArchiveCapabilities",
    "SessionArchiveFilter",
}


def _release(upstream: Path, release: str, schema: str) -> dict[int, Path]:
    return _bases(upstream / release if release else upstream, schema)


def _older_base(upstream: Path, tmp: Path, undeclared: bool = False) -> dict[int, Path]:
    """2026-08's stable schemas with the context the fragments copy as older releases had it:
    v1 sessions without additional directories and no close/resume capabilities; the v2
    draft still calling the agent's identity ``agentInfo`` and its cursor a plain string.
    ``undeclared``: v2 sessions carry a field v1 lacks, a difference conversions.json does
    not declare (older v2 drafts differ a lot)."""
    out = {}
    for version in (1, 2):
        data = json.loads((upstream / f"v{version}" / "schema.json").read_text(encoding="utf-8"))
        defs = data["$defs"]
        defs["SessionInfo"]["properties"].pop("additionalDirectories", None)
        if version == 1:
            for cap in ("close", "resume"):
                defs["SessionCapabilities"]["properties"].pop(cap, None)
        else:
            init = defs["InitializeResponse"]
            init["properties"] = {("agentInfo" if k == "info" else k): v for k, v in init["properties"].items()}
            init["required"] = [("agentInfo" if r == "info" else r) for r in init.get("required", [])]
            defs["ListSessionsRequest"]["properties"]["cursor"] = {"type": ["string", "null"]}
            if undeclared:
                defs["SessionInfo"]["properties"]["status"] = {"type": "string"}
        path = tmp / f"older{'-undeclared' if undeclared else ''}" / f"v{version}" / "schema.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(data), encoding="utf-8")
        out[version] = path
    return out


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("enabled", [True, False], ids=["with-feature", "without-feature"])
def test_the_newest_release_overlays_and_gates_what_it_already_has(upstream: Path, schema: str, enabled: bool):
    features = frozenset({FEATURE}) if enabled else frozenset()
    protocols, _ = load_protocols(ROOT / "schema", features, ROOT, _release(upstream, RELEASE_2026_11, schema))
    for protocol in protocols:
        names = {m.name for m in protocol.methods}
        assert (ARCHIVE_METHODS <= names) is enabled and (not ARCHIVE_METHODS & names or enabled)
        assert (ARCHIVE_TYPES <= set(protocol.types)) is enabled and (
            not ARCHIVE_TYPES & set(protocol.types) or enabled
        )
        for owner, prop in (("SessionInfo", "archived"), ("ListSessionsRequest", "archived")):
            assert (protocol.types[owner].field(prop) is not None) is enabled
        assert (protocol.types["SessionCapabilities"].field("archive") is not None) is enabled
        # Archive items the release already has take the fragments' feature, and the RFD
        # revision's SessionInfoUpdate.archived (2026-11 lacks it) is laid over it.
        assert all(m.feature == FEATURE for m in protocol.methods if m.name in ARCHIVE_METHODS)
        assert (protocol.types["SessionInfoUpdate"].field("archived") is not None) is enabled
        if enabled:
            assert protocol.types["SessionInfo"].field("archived").lenient  # x-deserialize-default-on-error
        assert protocol.types["NewSessionRequest"].field("mcpServers").null_as_default  # x-...-default-on-null
        # Upstream's proxy side is carried through: listed with its side, routed by nobody.
        if schema == SCHEMAS[1]:
            assert {(m.name, m.side) for m in protocol.methods if m.side == "proxy"} == {
                ("proxy/initialize", "proxy"),
                ("proxy/successor", "proxy"),
            }


def test_an_older_release_generates_with_notes_for_the_context_it_has_otherwise(upstream: Path, tmp_path: Path):
    protocols, sources = load_protocols(ROOT / "schema", frozenset({FEATURE}), ROOT, _older_base(upstream, tmp_path))
    notes = [str(n) for s in sources for n in s.notes]
    assert any(
        "/$defs/SessionInfo/properties/additionalDirectories: property 'additionalDirectories'" in n for n in notes
    )
    assert any(
        "v2/schema.json: /$defs/InitializeResponse/properties/info: property 'info' is not in the base" in n
        for n in notes
    )
    assert any(
        "/$defs/ListSessionsRequest/properties/cursor: is SessionListCursor | null, but the base says" in n
        for n in notes
    )
    v1, v2 = protocols
    assert v1.types["SessionInfo"].field("additionalDirectories") is None  # the base's definition wins
    assert v2.types["InitializeResponse"].field("agentInfo") is not None
    assert v2.types["ListSessionsRequest"].field("cursor").type.describe() == "string | null"
    assert all(p.types["SessionInfo"].field("archived") is not None for p in protocols)


@pytest.mark.slow
@pytest.mark.parametrize("release", ["", "schema-v1.19.0", "schema-v1.21.0", RELEASE_2026_11])
def test_readme_one_base_quickstart_works_over_every_published_v1(upstream: Path, tmp_path: Path, release: str, capsys):
    # README's line, as written, over each published v1 schema: v1 alone, and it says why.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "acp-codegen generate --base-v1 schema/v1/schema.unstable.json" in readme
    base = upstream / release / "v1" / "schema.unstable.json"
    out = tmp_path / "src" / "my_sdk" / "generated"
    args = ["generate", "--base-v1", str(base), "--feature", "unstable_session_archive", "--out", str(out)]
    assert main(args) == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    assert "versions: 1 (v2 not generated: only base-v1 is set;" in said
    assert (out / "v1" / "models.py").is_file() and not (out / "v2").exists() and not (out / "convert.py").exists()
    assert main(["check", *args[1:]]) == 0


def test_an_undeclared_difference_in_the_archive_surface_stops_conversions(upstream: Path, tmp_path: Path, capsys):
    bases = _older_base(upstream, tmp_path, undeclared=True)
    args = ["generate", "--out", str(tmp_path / "out"), "--base-v1", str(bases[1]), "--base-v2", str(bases[2])]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "/$defs/SessionInfo/properties/status: SessionInfo.status exists only in v2" in err
    assert '(declare a rename, or v2-only with "v1": null)' in err
    assert "--no-conversions on the command line, conversions = false in [tool.acp-codegen]" in err
    assert not (tmp_path / "out").exists()
    assert main([*args, "--no-conversions"]) == 0
    assert not (tmp_path / "out" / "convert.py").exists() and (tmp_path / "out" / "v2" / "models.py").is_file()


@pytest.mark.ecosystem  # (the older snapshot against the newest: test_diff_cli runs the diff in README's command)
@pytest.mark.parametrize("version", [1, 2])
def test_diff_between_the_two_snapshots_runs(upstream: Path, version: int, capsys):
    old, new = (upstream / f"v{version}" / SCHEMAS[1]), (upstream / RELEASE_2026_11 / f"v{version}" / SCHEMAS[1])
    assert main(["diff", str(old), str(new), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report


# One package per base, generated once, imported and type-checked together.
RELEASE_PACKAGES = {
    "acp_r2026_08_stable": ("", SCHEMAS[0], True),
    "acp_r2026_08_unstable": ("", SCHEMAS[1], True),
    "acp_r2026_11_stable": (RELEASE_2026_11, SCHEMAS[0], True),
    "acp_r2026_11_unstable": (RELEASE_2026_11, SCHEMAS[1], True),
    "acp_r2026_11_no_features": (RELEASE_2026_11, SCHEMAS[1], False),
    "acp_older": ("older", "", True),
}


@pytest.fixture(scope="module")
def release_packages(
    upstream_render: Callable[[str, str, bool], Any], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, dict[str, str]]]:
    upstream = SHARED_UPSTREAM
    out = tmp_path_factory.mktemp("releases")
    packages = {}
    for name, (release, schema, enabled) in RELEASE_PACKAGES.items():
        if release == "older":
            result = generate(ROOT / "schema", frozenset({FEATURE}), ROOT, _older_base(upstream, out))
        else:  # the renders other tests here make too
            result = upstream_render(release, schema, enabled)
        for rel, text in result.files.items():
            path = out / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        packages[name] = result.files
    return out, packages


def _run(cwd: Path, script: str) -> list[str]:
    """The lines a fresh interpreter prints running ``script`` in ``cwd`` (it must succeed)."""
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


@pytest.mark.slow
def test_every_release_generates_with_conversions_and_imports_fresh(release_packages):
    out, packages = release_packages
    for name, files in packages.items():
        assert "convert.py" in files, name
    modules = [
        f"{n}.{rel[:-3].replace('/', '.')}".removesuffix(".__init__") for n, fs in packages.items() for rel in fs
    ]
    script = f"import importlib\nfor m in {sorted(modules)!r}:\n    importlib.import_module(m)\nprint('ok')"
    assert _run(out, script) == ["ok"]


@pytest.mark.slow
def test_no_archive_item_anywhere_without_the_feature_over_the_newest_release(release_packages):
    _, packages = release_packages
    for rel, text in packages["acp_r2026_11_no_features"].items():
        for word in ("session/archive", "session/unarchive", "ArchiveSession", "SessionArchive", "archived"):
            assert word not in text, (rel, word)


@pytest.mark.slow
def test_conversions_over_the_newest_release_convert_the_archive_surface(release_packages):
    script = (
        "import json\nfrom acp_r2026_11_unstable import convert\n"
        "m = {'jsonrpc': '2.0', 'id': 1, 'method': 'session/list', 'params': {'cwd': '/r', 'archived': 'only'}}\n"
        "print(json.dumps(convert.convert_message(m, source=1, target=2)['params']))\n"
        "print(json.dumps(convert.convert('SessionInfo', {'sessionId': 's', 'cwd': '/r', 'archived': True,"
        " 'updatedAt': '20261028T0930+0100'}, source=1, target=2)))\n"
        "print(json.dumps(convert.convert('SessionCapabilities', {'archive': {}}, source=2, target=1)))\n"
    )
    assert [json.loads(line) for line in _run(release_packages[0], script)] == [
        {"cwd": "/r", "archived": "only"},
        {"sessionId": "s", "cwd": "/r", "archived": True, "updatedAt": "2026-10-28T09:30:00+01:00"},
        # v2's session capabilities imply the baseline methods, which v1 names (upstream's declarations)
        {"archive": {}, "list": {}, "resume": {}, "close": {}},
    ]


@pytest.mark.slow
def test_the_newest_release_reads_null_as_the_empty_list_or_map(release_packages):
    # 2026-11's x-deserialize-default-on-null: null reads as the type's empty value, in
    # both versions; anything else that is not a list or map still fails.
    script = (
        "import json\nfrom pydantic import ValidationError\n"
        "from acp_r2026_11_unstable.v1 import models as v1\nfrom acp_r2026_11_unstable.v2 import models as v2\n"
        "wire = dict(mode='json', by_alias=True, exclude_unset=True)\n"
        "for m in (v1, v2):\n"
        "    new = m.NewSessionRequest.model_validate({'cwd': '/r', 'mcpServers': None})\n"
        "    print(json.dumps(new.model_dump(**wire)))\n"
        "print(json.dumps(v1.CreateTerminalRequest.model_validate("
        "{'sessionId': 's', 'command': 'ls', 'args': None, 'env': None}).model_dump(**wire)))\n"
        "try:\n    v1.NewSessionRequest.model_validate({'cwd': '/r', 'mcpServers': 'none'})\n"
        "except ValidationError:\n    print('refused')\n"
    )
    assert _run(release_packages[0], script) == [
        '{"cwd": "/r", "mcpServers": []}',
        '{"cwd": "/r", "mcpServers": []}',
        '{"sessionId": "s", "command": "ls", "args": [], "env": []}',
        "refused",
    ]


@pytest.mark.slow
@pytest.mark.ecosystem  # (mypy over every release; mypy_newest and the tests above type-check the newest)
def test_every_release_output_passes_mypy_strict(release_packages):
    out, packages = release_packages
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.10", *sorted(packages)],
        cwd=out,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:]


# -- derived names: the same variant, the same name, in every release ----------------------


def test_a_variant_has_one_name_in_every_release_and_version_that_has_it(upstream: Path):
    names: dict[tuple[str, str], set[str]] = {}  # (owner, label) -> derived names
    where: dict[tuple[str, str], set[str]] = {}
    for release, folder in UPSTREAM_RELEASES.items():
        for schema in SCHEMAS:
            bases = {v: p for v, p in _bases(folder, schema).items() if p.is_file()}
            protocols, _ = load_protocols(ROOT / "schema", frozenset({FEATURE}), ROOT, bases)
            for p in protocols:
                for name, derived in p.derived_names.items():
                    key = (derived.origin.split(": /$defs/", 1)[1].split("/", 1)[0], derived.label)
                    names.setdefault(key, set()).add(name)
                    where.setdefault(key, set()).add(release)
    assert {k: v for k, v in names.items() if len(v) > 1} == {}
    # It compared something: variants every release has, schema-v1.19.0's among them.
    assert {("ContentBlock", "Text"), ("SessionUpdate", "UserMessageChunk"), ("McpServer", "Http")} <= {
        k for k, w in where.items() if w == set(UPSTREAM_RELEASES)
    }
    assert names[("ContentBlock", "Text")] == {"ContentBlockText"}


def test_a_class_names_key_spelled_the_old_way_is_pointed_to_the_new_name(upstream: Path):
    old = {  # bare (labels of one variant each), suffixed, and a label two unions' variants share
        "Text": "ContentBlockText",
        "Boolean": "ElicitationPropertySchemaBoolean",
        "Cancelled": "RequestPermissionOutcomeCancelled",
        "Http": "McpServerHttpTagged",
        "AuthMethodTerminalVariant": "AuthMethodTerminalTagged",
        "Other": None,
    }
    with pytest.raises(SchemaError) as error:
        load_protocols(
            ROOT / "schema",
            frozenset({FEATURE}),
            ROOT,
            _release(upstream, RELEASE_2026_11, SCHEMAS[1]),
            Settings(ClassNames(dict.fromkeys(old, "Chosen"), "pyproject.toml")),
        )
    for key, new in old.items():
        hint = f"; did you mean {new!r}?" if new else ""
        assert f"class-names/{key}: no generated class is named {key!r}{hint}\n" in f"{error.value}\n"
