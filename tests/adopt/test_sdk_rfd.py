"""Issue 42's "Must hold": the official Python SDK (``agent-client-protocol`` 0.12.1, from
its sdist), adopted with ``acp-codegen adopt`` from the built wheel and nothing else (its
``[tool.acp-codegen]`` of ``base-v1``, ``out`` and ``features``, as test_sdk_dropin.py writes
it), gains the session-archive RFD end to end, in its own idiom:

* ``sdk_agent/agent.py``, an agent on the adopted SDK's public API (``Agent``,
  ``run_agent(..., use_unstable_protocol=True)``, ``acp.schema``, ``RequestError``), passes
  ``acp-codegen conformance --protocol 1``: every scenario, the two that need
  ``session/delete`` too, which adopt wires as every other method of the base (issue 51;
  0.10.1's base has no ``session/delete``: its agent does not advertise it, and the kit
  skips those two, saying so);
* ``sdk_agent/client.py``, a client on the SDK's ``spawn_agent_process`` and
  ``ClientSideConnection``, archives, lists under each filter value, unarchives and gets
  -32002 for an unknown id, against the reference agent and the TypeScript SDK's agent;
* the SDK's own suite gives what it gives with its own module, with the feature on and
  off; off, the SDK's hand-written files hold nothing of the RFD; a second adopt
  changes no byte; ``--dry-run`` shows the wiring as a diff and writes nothing; after adopt,
  ``acp-codegen generate`` with the feature switched off takes the wiring out, and on puts it back;
* without ``use_unstable_protocol`` the SDK answers the RFD's methods -32601 and warns, as
  for its other unstable methods, and serves ``session/delete``, stable in its base (which
  acp-codegen recognises as upstream's ``schema-v1.19.0``: no stable meta to copy, issue 58);
* the SDK's v2 module: ``adopt --version 2`` adds the RFD's methods to its meta module with
  the feature on, and leaves it byte for byte alone with it off;
* the SDK's own regeneration command (``scripts/gen_all.py``, which ``make gen-all`` runs;
  offline, ``--no-download``) runs acp-codegen after adopt: it changes no byte (nor does the
  target's ruff over the tree), check is clean, the wired files stay free of the RFD with the
  feature off; (ecosystem) the suite and the kit hold after it, and the same command moves
  the SDK to ``schema-v1.21.0``: it imports, its suite passes, the RFD's methods are routed;
  a property the newer release adds to a request type reaches the methods that take it, as
  the SDK's ``gen_signature.py`` kept them (acp-codegen's wiring does it now).

The agent and the client run on an older release too, 0.10.1 over upstream v0.12.2 (what its
module was generated from), adopted the same way: they follow the SDK's conventions, not
one release's files. One adopted SDK per release and feature value for the whole module
(0.12.1's are copies of one download).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.conformance.scenarios import SCENARIOS
from support import ROOT, SHARED_UPSTREAM, run_kit
from support.reference_data import require
from support.sdk import sdk_env
from test_sdk_dropin import (
    ENV,
    PEER_V2,
    V1_BASE,
    V2_BASE,
    adopt,
    needs,
    repository,
    run,
    same_results,
    steady_suite,
    the_sdk_sdist,
    tree,
)

pytestmark = pytest.mark.slow

HERE = ROOT / "tests" / "agents" / "sdk_agent"
AGENT = HERE / "agent.py"
CLIENT = HERE / "client.py"
LONG_PROMPT = "/delay 30 a long turn"  # the agent's way to keep a turn running
# The SDK's hand-written modules the wiring changes.
WIRED = (
    "src/acp/meta.py", "src/acp/interfaces.py", "src/acp/agent/router.py", "src/acp/client/connection.py",
    "src/acp/client/router.py", "src/acp/agent/connection.py",
)  # fmt: skip
V1 = needs(V1_BASE / "schema.unstable.json", V1_BASE / "meta.unstable.json")
OLDER_PIN = "agent-client-protocol==0.10.1"
OLDER_BASE = SHARED_UPSTREAM / "history" / "v0.12.2"  # its acp/schema.py: "Schema ref: refs/tags/v0.12.2"
UNSTABLE_WARNING = (
    "UserWarning: The method {} is part of the unstable protocol, please enable `use_unstable_protocol` flag to use it."
)


def sdk_copy(sdist: Path, at: Path, *, feature: bool) -> Path:
    """A fresh copy of the sdist with README's ``[tool.acp-codegen]`` (its three lines: the
    base is a release, whose stable methods acp-codegen knows), committed."""
    shutil.copytree(sdist, at)
    return repository(
        at, version=1, out="src/acp/_generated", schema=V1_BASE / "schema.unstable.json",
        meta=V1_BASE / "meta.unstable.json", feature=feature,
    )  # fmt: skip


@pytest.fixture(scope="module")
def sdk_on(venv: Path, sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The SDK adopted with the feature on (adopt run twice: the second changes no byte),
    and adopt's report."""
    at = sdk_copy(sdist, tmp_path_factory.mktemp("rfd-on") / "sdk", feature=True)
    return at, adopt(venv, at, "src/acp/schema.py", twice=True)


@pytest.fixture(scope="module")
def sdk_off(venv: Path, sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    at = sdk_copy(sdist, tmp_path_factory.mktemp("rfd-off") / "sdk", feature=False)
    return at, adopt(venv, at, "src/acp/schema.py")


@pytest.fixture(scope="module")
def sdk_own(venv: Path, sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """The SDK with its own module (the table written, the feature on, not adopted) and
    its own suite's counts there."""
    at = sdk_copy(sdist, tmp_path_factory.mktemp("rfd-own") / "sdk", feature=True)
    return at, steady_suite(venv, at)


@pytest.fixture(scope="module")
def sdk_older(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An older release, adopted with the feature over the upstream tag its module was
    generated from: the agent and the client hold to the SDK's conventions, not to one
    release's files."""
    require(OLDER_BASE / "schema.json")
    at = the_sdk_sdist(tmp_path_factory.mktemp("rfd-older") / "sdk", venv, OLDER_PIN)
    repository(
        at, version=1, out="src/acp/_generated", schema=OLDER_BASE / "schema.json", meta=OLDER_BASE / "meta.json"
    )
    report = adopt(venv, at, "src/acp/schema.py")
    assert re.search(r"^wired: 6 modules of the SDK .*; routes session/archive, session/unarchive$", report, re.M)
    return at


# The older release is the ecosystem session's (nox -s ecosystem): README's command runs 0.12.1.
@pytest.fixture(params=["0.12.1", pytest.param(OLDER_PIN.split("==")[1], marks=pytest.mark.ecosystem)])
def adopted(request: pytest.FixtureRequest) -> Path:
    """The SDK copy adopted with the feature, of each release."""
    if request.param == "0.12.1":
        sdk: Path = request.getfixturevalue("sdk_on")[0]
        return sdk
    older: Path = request.getfixturevalue("sdk_older")
    return older


def assert_free_of_the_rfd(sdk: Path) -> None:
    """The wired files route, declare and send nothing of the RFD, and still the base's
    methods the SDK lacked (session/delete)."""
    for path in WIRED:
        text = (sdk / path).read_text(encoding="utf-8")
        assert "archive" not in text.lower(), path
    assert 'AGENT_METHODS["session_delete"]' in (sdk / "src/acp/agent/router.py").read_text(encoding="utf-8")


def changed(at: Path) -> list[str]:
    """``git status`` of the SDK copy: what adopt changed or added."""
    status = run("git", "status", "--porcelain", "--untracked-files=normal", cwd=at)
    return sorted(line for line in status.splitlines() if "__pycache__" not in line)


@V1
def test_the_table_tested_is_readme_s_quickstart_less_its_v2_base(sdist: Path, tmp_path: Path) -> None:
    """The settings these tests adopt with are those README's quickstart writes, as written,
    but its ``base-v2`` (test_sdk_v2.py adopts with that too): the SDK's v1 alone."""
    at = sdk_copy(sdist, tmp_path / "sdk", feature=True)
    tested = readme_table_of(at)
    assert tested == {k: v for k, v in readme_table().items() if k != "base-v2"}
    assert (at / tested["base-v1"]).is_file() and "stable-meta-v1" not in tested


def readme_table() -> dict[str, Any]:
    """The ``[tool.acp-codegen]`` README's quickstart appends to the SDK's pyproject.toml."""
    import tomllib

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"cat >> pyproject.toml <<'END'\n(.*?)\nEND\n", readme, re.S)
    assert block, "README.md has no quickstart table"
    table: dict[str, Any] = tomllib.loads(block[1])["tool"]["acp-codegen"]
    return table


def readme_table_of(sdk: Path) -> dict[str, Any]:
    import tomllib

    table: dict[str, Any] = tomllib.loads((sdk / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["acp-codegen"]
    return table


# -- the agent on the SDK and the kit ------------------------------------------------


@V1
def test_an_agent_on_the_adopted_sdk_passes_the_kit(venv: Path, adopted: Path, tmp_path: Path) -> None:
    sdk = adopted
    agent = (venv / "python", AGENT, "--store", tmp_path / "sessions.json")
    code, results, out = run_kit(
        "--protocol", "1", "--long-prompt", LONG_PROMPT, "--", *map(str, agent),
        tool=(venv / "acp-codegen",), env=sdk_env(sdk),
    )  # fmt: skip
    print(out.splitlines()[-1])
    assert code == 0, out
    # session/delete: where the base has it, the SDK's Agent declares it (adopt wires it) and the agent serves it
    deletes = (
        "session/delete" in json.loads((sdk / "schema/meta.json").read_text(encoding="utf-8"))["agentMethods"].values()
    )
    assert ("async def delete_session" in (sdk / "src/acp/interfaces.py").read_text(encoding="utf-8")) == deletes
    assert results == kit_expected(deletes), out
    if deletes:  # (0.12.1: its base has session/delete, which adopt wires)
        assert f"{len(SCENARIOS)} passed, 0 failed, 0 skipped" in out
    else:
        assert out.count("the agent does not advertise session/delete") == 2, out
        assert f"{len(SCENARIOS) - 2} passed, 0 failed, 2 skipped" in out


def kit_expected(deletes: bool = True) -> dict[tuple[int, str], str]:
    """Every scenario passes; where the SDK's base has no session/delete (0.10.1's), the
    agent does not advertise it, and the kit skips the two that need it, as
    docs/conformance.md says."""
    expected = {(1, s.name): "PASS" for s in SCENARIOS}
    if not deletes:
        expected[(1, "deleted-id")] = expected[(1, "delete-archived")] = "SKIP"
    return expected


def jsonrpc(
    command: list[str | Path], env: dict[str, str], calls: list[tuple[str, dict[str, object]]]
) -> tuple[list[dict[str, Any]], str]:
    """Start the agent, send each call once the previous one is answered; the responses
    (notifications skipped) and the agent's stderr after end of input."""
    agent = subprocess.Popen(
        [str(c) for c in command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )  # fmt: skip
    assert agent.stdin and agent.stdout and agent.stderr
    responses = []
    try:
        for request_id, (method, params) in enumerate(calls, 1):
            agent.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
            agent.stdin.write("\n")
            agent.stdin.flush()
            while "id" not in (message := json.loads(agent.stdout.readline())):
                pass
            assert message["id"] == request_id, message
            responses.append(message)
        agent.stdin.close()
        assert agent.wait(timeout=30) == 0
    finally:
        agent.kill()
    return responses, agent.stderr.read()


@V1
def test_unstable_methods_need_the_unstable_protocol_and_delete_is_served_without(
    venv: Path, sdk_on: tuple[Path, str], tmp_path: Path
) -> None:
    sdk, _ = sdk_on
    agent = [venv / "python", AGENT, "--store", tmp_path / "sessions.json"]
    opened = [("initialize", {"protocolVersion": 1}), ("session/new", {"cwd": str(tmp_path), "mcpServers": []})]
    # Without use_unstable_protocol: -32601 and the SDK's warning, for the RFD's methods as
    # for session/fork, which the SDK itself counts as unstable; session/delete, stable in
    # the base, is served (the agent's own "unknown session").
    unstable = ["session/archive", "session/unarchive", "session/fork"]
    calls = [*opened, *((method, {"sessionId": "sess_x", "cwd": str(tmp_path)}) for method in unstable)]
    calls.append(("session/delete", {"sessionId": "sess_x"}))
    responses, stderr = jsonrpc([*agent, "--no-unstable-protocol"], sdk_env(sdk), calls)
    assert [r["error"] for r in responses[2:-1]] == [
        {"code": -32601, "message": "Method not found", "data": {"method": method}} for method in unstable
    ]
    assert responses[-1]["error"]["code"] == -32002
    assert [line for line in stderr.splitlines() if "UserWarning" in line] == [
        line for method in unstable for line in stderr.splitlines() if UNSTABLE_WARNING.format(method) in line
    ]
    for method in unstable:
        assert stderr.count(UNSTABLE_WARNING.format(method)) == 1, stderr

    # With it: the RFD's methods are routed, and session/delete, which the agent advertises.
    responses, stderr = jsonrpc(
        agent,
        sdk_env(sdk),
        [*opened, ("session/delete", {"sessionId": "sess_x"}), ("session/archive", {"sessionId": "sess_x"})],
    )
    assert [r["error"]["code"] for r in responses[2:]] == [-32002, -32002]  # routed: "unknown session"
    assert "UserWarning" not in stderr
    assert responses[0]["result"]["agentCapabilities"]["sessionCapabilities"]["delete"] == {}


# -- a client on the SDK -------------------------------------------------------------


@V1
# The TypeScript SDK's agent (npm) is the ecosystem session's.
@pytest.mark.parametrize("agent", ["reference", pytest.param("typescript", marks=pytest.mark.ecosystem)])
def test_a_client_on_the_adopted_sdk_uses_the_rfd(
    agent: str, venv: Path, adopted: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    sdk = adopted
    if agent == "reference":  # (docs/agent.md: run from the checkout, which holds generated/)
        command = [sys.executable, "-m", "examples.archive_agent", "--db", tmp_path / "a.sqlite3"]
    else:
        ts_agent = request.getfixturevalue("ts_sdk") / "agent.mjs"
        command = ["node", ts_agent, "--store", tmp_path / "store.json"]
    command += ["--page-size", "2"]  # two a page: the listings of three follow nextCursor
    work = tmp_path / "work"
    work.mkdir()
    out = run(
        venv / "python", CLIENT, "--cwd", work, "--agent-cwd", ROOT, "--", *command, cwd=tmp_path, env=sdk_env(sdk)
    )
    seen = json.loads(out)
    assert seen["initialize"]["protocolVersion"] == 1
    assert seen["initialize"]["agentCapabilities"]["sessionCapabilities"]["archive"] == {}
    first, *others = sessions = seen["sessions"]
    assert len(set(sessions)) == 3
    assert seen["archive"] == seen["unarchive"] == [{}, {}]  # repeated: still a success
    listed = {name: sorted(found["ids"]) for name, found in seen["archived"].items()}
    assert listed == {
        "omitted": sorted(others),
        "exclude": sorted(others),
        "include": sorted(sessions),
        "only": [first],
    }
    assert seen["archived"]["include"]["archived"] == {first: True, **{s: False for s in others}}
    assert seen["archived"]["include"]["pages"] == 2
    listed = {name: sorted(found["ids"]) for name, found in seen["unarchived"].items()}
    assert listed == {"omitted": sorted(sessions), "exclude": sorted(sessions), "include": sorted(sessions), "only": []}
    assert seen["unarchived"]["exclude"]["archived"] == {s: False for s in sessions}
    assert seen["errors"] == {"archiveUnknown": -32002, "unarchiveUnknown": -32002, "invalidFilter": -32602}
    # The session was open on this connection: one session_info_update archived: true,
    # read by the SDK's typed session/update handler (archiving it again finds it closed).
    assert seen["infos"] == [[first, True]]


# -- the SDK's own suite, the feature on and off; idempotence; --dry-run ----------------


@V1
def test_with_the_feature_on_the_sdk_suite_is_unchanged_and_only_the_wired_files_change(
    venv: Path, sdk_on: tuple[Path, str], sdk_own: tuple[Path, dict[str, int]]
) -> None:
    sdk, report = sdk_on
    _, own = sdk_own
    assert re.search(r"^wired: 6 modules of the SDK .*; routes session/archive, session/unarchive$", report, re.M)
    # 0.12.1 has no v2 module and no base-v2: the output is v1's alone, and the report says so.
    assert re.search(r"^versions: 1 \(v2 not generated: ", report, re.M), report
    assert sorted(p.name for p in (sdk / "src/acp/_generated").glob("v*")) == ["v1"]
    wired = (f" M {path}" for path in WIRED)
    assert changed(sdk) == sorted(
        [" M pyproject.toml", " M scripts/gen_all.py", " M src/acp/schema.py", *wired, "?? src/acp/_generated/",
         "?? src/acp/_schema_ext.py"]
    )  # fmt: skip
    on = steady_suite(venv, sdk)
    print(f"the SDK's suite: {own} with its own module, {on} adopted with the feature on")
    assert sum(own.values()) == 201 and own.get("skipped") == 2, own  # (199 passed, 2 skipped unloaded)
    same_results(own, on)


@V1
@pytest.mark.ecosystem  # (adopt with the feature off; README's command switches it off after adopt, by generate)
def test_with_the_feature_off_the_sdk_files_are_its_own(sdk_off: tuple[Path, str]) -> None:
    sdk, report = sdk_off
    assert re.search(r"^wired: 6 modules of the SDK \([^)]*\)$", report, re.M), report
    # The files gain the base's methods the SDK lacked, and nothing of the RFD (meta.py, which
    # lists every method of the base already, is the sdist's).
    assert "session/delete -> delete_session (agent)" in report
    wired = (f" M {path}" for path in WIRED if path != "src/acp/meta.py")
    assert changed(sdk) == sorted(
        [" M pyproject.toml", " M scripts/gen_all.py", " M src/acp/schema.py", *wired,
         "?? src/acp/_generated/", "?? src/acp/_schema_ext.py"]
    )  # fmt: skip
    # No part of the RFD anywhere in the package: "archive" only in the generated files'
    # headers, which name the fragments they were generated with.
    mentions = {
        line.strip()
        for path in (sdk / "src" / "acp").rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if "archive" in line.lower()
    }
    assert mentions and all(re.fullmatch(r"#   builtin:session-archive/v[12]/(schema|meta)\.json", m) for m in mentions)


@V1
@pytest.mark.ecosystem  # (the SDK's suite once more: README's command runs it with the feature on)
def test_with_the_feature_off_the_sdk_suite_is_unchanged(
    venv: Path, sdk_off: tuple[Path, str], sdk_own: tuple[Path, dict[str, int]]
) -> None:
    sdk, _ = sdk_off
    _, own = sdk_own
    off = steady_suite(venv, sdk)
    print(f"the SDK's suite: {own} with its own module, {off} adopted with the feature off")
    same_results(own, off)


@V1
def test_dry_run_shows_the_wiring_as_a_diff_and_writes_nothing(
    venv: Path, sdk_on: tuple[Path, str], sdk_own: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    own, _ = sdk_own
    before = tree(own)
    report = run(venv / "acp-codegen", "adopt", "src/acp/schema.py", "--dry-run", cwd=own)
    assert tree(own) == before
    diff = report[report.index("--- a/src/acp/") :]
    assert re.findall(r"^\+\+\+ b/(\S+)$", diff, re.M) == [*WIRED, "scripts/gen_all.py"]
    # The diff is the wiring adopt writes: applied to the sdist, the four files are the
    # adopted SDK's, byte for byte.
    applied = tmp_path / "applied"
    shutil.copytree(own, applied)
    (tmp_path / "wiring.diff").write_text(diff, encoding="utf-8")
    run("git", "apply", tmp_path / "wiring.diff", cwd=applied)
    sdk, _ = sdk_on
    for path in (*WIRED, "scripts/gen_all.py"):
        assert (applied / path).read_bytes() == (sdk / path).read_bytes(), path


@V1
@pytest.mark.parametrize(
    "command",
    [["generate"], pytest.param(["adopt", "src/acp/schema.py"], marks=pytest.mark.ecosystem)],
    ids=["generate", "adopt"],
)
def test_the_feature_switched_off_and_on_again(
    venv: Path, sdk_on: tuple[Path, str], tmp_path: Path, command: list[str]
) -> None:
    """After adopt, the SDK regenerates with ``acp-codegen generate`` (its ``nox -s generate``),
    or runs adopt again: the feature switched off takes the RFD's wiring out (the base's
    methods stay wired), and switched on puts back what adopt wrote."""
    adopted, _ = sdk_on
    sdk = tmp_path / "sdk"
    shutil.copytree(adopted, sdk, ignore=shutil.ignore_patterns("__pycache__"))
    pyproject = sdk / "pyproject.toml"
    on = pyproject.read_text(encoding="utf-8")
    assert on.count('features = ["unstable_session_archive"]') == 1
    pyproject.write_text(on.replace('features = ["unstable_session_archive"]', "features = []"), encoding="utf-8")
    report = run(venv / "acp-codegen", *command, cwd=sdk)
    assert "build_agent_router no longer routes session/archive" in report
    assert_free_of_the_rfd(sdk)
    check = (
        "import acp.meta, acp.schema; print(hasattr(acp.schema, 'ArchiveSessionRequest'), len(acp.meta.AGENT_METHODS))"
    )
    shipped = len(json.loads((V1_BASE / "meta.unstable.json").read_text(encoding="utf-8"))["agentMethods"])
    assert run(venv / "python", "-c", check, cwd=sdk / "src").split() == ["False", str(shipped)]
    pyproject.write_text(on, encoding="utf-8")
    run(venv / "acp-codegen", *command, cwd=sdk)
    for path in (*WIRED, "src/acp/schema.py"):
        assert (sdk / path).read_bytes() == (adopted / path).read_bytes(), path


# -- the SDK's v2 module -------------------------------------------------------------


@needs(PEER_V2, V2_BASE / "schema.unstable.json")
@pytest.mark.ecosystem  # (the peer SDK's unreleased v2 module, as test_sdk_dropin's test of it)
@pytest.mark.parametrize("feature", [True, False], ids=["on", "off"])
def test_the_v2_meta_module_gains_the_rfd_methods_with_the_feature_only(
    feature: bool, venv: Path, tmp_path: Path
) -> None:
    sdk = tmp_path / "sdk-v2"
    shutil.copytree(PEER_V2 / "acp", sdk / "src" / "acp")
    (sdk / "pyproject.toml").write_text('[project]\nname = "sdk-v2"\nversion = "0"\n', encoding="utf-8")
    repository(
        sdk, version=2, out="src/acp/_generated", schema=V2_BASE / "schema.unstable.json",
        meta=V2_BASE / "meta.unstable.json", feature=feature,
    )  # fmt: skip
    report = adopt(venv, sdk, "src/acp/experimental/v2/schema.py", "--version", "2")
    meta = "src/acp/experimental/v2/meta.py"
    diff = run("git", "diff", "--unified=0", "HEAD", "--", meta, cwd=sdk)
    lines = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    if not feature:
        assert diff == ""
        return
    assert f"{meta}: regenerated by the template set" in report
    assert lines == ['+    "session_archive": "session/archive",', '+    "session_unarchive": "session/unarchive",']
    check = (
        "from acp.experimental.v2.meta import AGENT_METHODS as A, CLIENT_METHODS as C;"
        " print(A['session_archive'], A['session_unarchive'], 'session_archive' in C)"
    )
    assert run(venv / "python", "-c", check, cwd=sdk / "src").split() == [
        "session/archive",
        "session/unarchive",
        "False",
    ]


# -- the SDK's own regeneration command (scripts/gen_all.py, `make gen-all`) -------------

V1_21 = SHARED_UPSTREAM / "schema-v1.21.0" / "v1"
# The sdist ships scripts/gen_all.py but not the Makefile whose `gen-all` target runs it.
GEN_ALL = "python scripts/gen_all.py"


def gen_all(venv: Path, sdk: Path, *args: str, version: str | None = None) -> str:
    """The SDK's regeneration command offline (``--no-download``), in its development
    environment (``uv run`` puts it first), as ``ACP_SCHEMA_VERSION=<ref> make gen-all`` runs it."""
    env = {**ENV, "PATH": f"{venv}:{ENV.get('PATH', '')}", "RUFF_NO_CACHE": "true"}
    if version:
        env["ACP_SCHEMA_VERSION"] = version
    return run(venv / "python", "scripts/gen_all.py", "--no-download", *args, cwd=sdk, env=env)


def copied(adopted: Path, at: Path) -> Path:
    shutil.copytree(adopted, at, ignore=shutil.ignore_patterns("__pycache__"))
    run("git", "add", "--all", cwd=at)
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "adopted", cwd=at)
    return at


@V1
def test_the_sdk_s_regeneration_command_keeps_it_adopted(venv: Path, sdk_on: tuple[Path, str], tmp_path: Path) -> None:
    adopted, report = sdk_on
    assert f"regeneration: `{GEN_ALL}` runs acp-codegen" in report
    assert (
        "  scripts/gen_all.py: gen_schema.generate_schema(), gen_meta.generate_meta(),"
        ' gen_signature.gen_signature(ROOT / "src" / "acp") -> acp-codegen generate'
    ) in report
    pyproject = (adopted / "pyproject.toml").read_text(encoding="utf-8")
    assert f'regenerate = "{GEN_ALL}"' in pyproject
    assert f"Do not edit: run `{GEN_ALL}`." in (adopted / "src/acp/_generated/v1/models.py").read_text(encoding="utf-8")
    sdk = copied(adopted, tmp_path / "sdk")
    # Run as the target runs it: the script (with its formatting step), then ruff over the
    # whole tree; then again. Not a byte changes, and check finds everything up to date.
    out = gen_all(venv, sdk)
    assert "up to date, nothing written" in out and "Generated schema using local schema files" in out, out
    run(venv / "python", "-m", "ruff", "check", "--fix", cwd=sdk, env={**ENV, "RUFF_NO_CACHE": "true"})
    run(venv / "python", "-m", "ruff", "format", ".", cwd=sdk, env={**ENV, "RUFF_NO_CACHE": "true"})
    assert changed(sdk) == []
    gen_all(venv, sdk, "--no-format")
    assert changed(sdk) == []
    assert "src/acp/_generated: up to date" in run(venv / "acp-codegen", "check", cwd=sdk)


@V1
def test_with_the_feature_off_the_command_leaves_the_wired_files_the_sdk_s(
    venv: Path, sdk_off: tuple[Path, str], tmp_path: Path
) -> None:
    sdk = copied(sdk_off[0], tmp_path / "sdk")
    gen_all(venv, sdk, "--no-format")
    assert changed(sdk) == []
    assert_free_of_the_rfd(sdk)


@V1
@pytest.mark.ecosystem
def test_after_the_command_the_suite_and_the_kit_hold(
    venv: Path, sdk_on: tuple[Path, str], sdk_own: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    sdk = copied(sdk_on[0], tmp_path / "sdk")
    gen_all(venv, sdk, "--no-format")
    assert changed(sdk) == []
    after = steady_suite(venv, sdk)
    print(f"the SDK's suite: {sdk_own[1]} with its own module, {after} after its regeneration command")
    same_results(sdk_own[1], after)
    agent = (venv / "python", AGENT, "--store", tmp_path / "sessions.json")
    code, results, out = run_kit(
        "--protocol", "1", "--long-prompt", LONG_PROMPT, "--", *map(str, agent),
        tool=(venv / "acp-codegen",), env=sdk_env(sdk),
    )  # fmt: skip
    assert code == 0 and results == kit_expected(), out


@needs(V1_21 / "schema.unstable.json", V1_21 / "meta.unstable.json")
@pytest.mark.ecosystem
def test_one_command_moves_the_sdk_to_a_newer_release(
    venv: Path, sdk_on: tuple[Path, str], sdk_own: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    """0.12.1 (built on schema-v1.19.0) to schema-v1.21.0: its schema where the script keeps
    it (``schema/``, as ``ACP_SCHEMA_VERSION=schema-v1.21.0 make gen-all`` fetches it), then
    the script. v1.21.0 drops the env_var auth method: the SDK's EnvVarAuthMethod is said to
    be gone, its class-names entry taken out; every other name is kept."""
    sdk = copied(sdk_on[0], tmp_path / "sdk")
    shutil.copyfile(V1_21 / "schema.unstable.json", sdk / "schema" / "schema.json")
    shutil.copyfile(V1_21 / "meta.unstable.json", sdk / "schema" / "meta.json")
    out = gen_all(venv, sdk, version="schema-v1.21.0")
    assert "Generated schema using ref: refs/tags/schema-v1.21.0" in out
    assert (
        "pyproject.toml: [tool.acp-codegen.v1.class-names] AuthMethodEnvVarTagged = 'EnvVarAuthMethod' taken out:"
        " the base has no AuthMethodEnvVarTagged any more"
    ) in out, out
    assert "v1: no longer generated (not in the base): AuthEnvVar, AuthMethodEnvVar, EnvVarAuthMethod" in out
    check = "import acp, acp.schema as s; print(hasattr(s, 'CompactionUpdate'), hasattr(s, 'ArchiveSessionRequest'))"
    assert run(venv / "python", "-c", check, cwd=sdk / "src").split() == ["True", "True"]
    run("git", "add", "--all", cwd=sdk)
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "moved", cwd=sdk)
    gen_all(venv, sdk, version="schema-v1.21.0")  # once more: not a byte changes
    assert changed(sdk) == []
    assert "up to date" in run(venv / "acp-codegen", "check", cwd=sdk)
    moved = steady_suite(venv, sdk)
    print(f"the SDK's suite: {sdk_own[1]} over schema-v1.19.0, {moved} moved to schema-v1.21.0")
    same_results(sdk_own[1], moved)
    # The RFD's methods are still routed: an unknown session is the agent's -32002, not -32601.
    agent = [venv / "python", AGENT, "--store", tmp_path / "sessions.json"]
    calls = [
        ("initialize", {"protocolVersion": 1}),
        ("session/archive", {"sessionId": "sess_x"}),
        ("session/unarchive", {"sessionId": "sess_x"}),
    ]
    responses, _ = jsonrpc(agent, sdk_env(sdk), calls)
    assert [r["error"]["code"] for r in responses[1:]] == [-32002, -32002]


@needs(V1_21 / "schema.unstable.json", V1_21 / "meta.unstable.json")
@pytest.mark.ecosystem  # (a move to a newer release, as above; test_sdk_wiring holds the rule in README's command)
def test_a_field_a_newer_release_adds_reaches_the_sdk_s_signatures(
    venv: Path, sdk_on: tuple[Path, str], tmp_path: Path
) -> None:
    """What the SDK's gen_signature.py did, the command still does: a request type of the
    newer release gains an optional property (``session/new``'s ``fooBar``, in a copy of
    schema-v1.21.0), and the methods that take it (``@param_model(NewSessionRequest)``) gain
    the keyword; the client's connection sends it. The RFD's methods stay wired; a second
    run changes no byte and check is clean."""
    sdk = copied(sdk_on[0], tmp_path / "sdk")
    schema = json.loads((V1_21 / "schema.unstable.json").read_text(encoding="utf-8"))
    new_session = schema["$defs"]["NewSessionRequest"]
    assert "fooBar" not in new_session["properties"]
    new_session["properties"]["fooBar"] = {"type": ["string", "null"], "description": "A property of a later release."}
    (sdk / "schema" / "schema.json").write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    shutil.copyfile(V1_21 / "meta.unstable.json", sdk / "schema" / "meta.json")
    out = gen_all(venv, sdk, version="schema-v1.21.0")
    for label in ("interfaces.py: Agent.new_session", "connection.py: ClientSideConnection.new_session"):
        assert f"{label} gains the keyword foo_bar (a field of NewSessionRequest)" in out, out
    check = """
import inspect, json
import acp.agent.router  # (the wired router imports)
from acp.client.connection import ClientSideConnection
from acp.interfaces import Agent
def keywords(method):
    return [p for p in inspect.signature(method).parameters if p not in ("self", "kwargs")]
sends = "foo_bar=foo_bar" in inspect.getsource(ClientSideConnection.new_session)
both = (Agent, ClientSideConnection)
methods = [m for m in ("archive_session", "unarchive_session") if all(hasattr(c, m) for c in both)]
print(json.dumps([keywords(Agent.new_session), keywords(ClientSideConnection.new_session), sends, methods]))
"""
    agent, client, sends, methods = json.loads(run(venv / "python", "-c", check, cwd=sdk / "src"))
    assert agent == client == ["cwd", "additional_directories", "mcp_servers", "foo_bar"]
    assert sends and methods == ["archive_session", "unarchive_session"]
    router = (sdk / "src" / "acp" / "agent" / "router.py").read_text(encoding="utf-8")
    assert 'AGENT_METHODS["session_archive"]' in router and 'AGENT_METHODS["session_unarchive"]' in router
    run("git", "add", "--all", cwd=sdk)
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "moved", cwd=sdk)
    gen_all(venv, sdk, version="schema-v1.21.0")
    assert changed(sdk) == []
    assert "up to date" in run(venv / "acp-codegen", "check", cwd=sdk)
