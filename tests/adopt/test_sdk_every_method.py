"""Issue 51: the official Python SDK (``agent-client-protocol`` 0.12.1, from its sdist),
adopted from the built wheel, serves and calls every method of its base and of the enabled
features, on both sides, through its public API (``sdk_agent/every_method.py``: an agent
implementing its ``Agent`` protocol and a client implementing ``Client``, talking through
``spawn_agent_process`` and ``run_agent``):

* feature on: 30 of 30 agent methods and 14 of 14 client methods of schema-v1.19.0 and the
  RFD; off: 28 and 14;
* without ``use_unstable_protocol``: every method of the base's stable ``meta.json`` that the
  SDK does not gate itself is served, and no method outside it;
* adopt's report lists each method it wired anew with its Python name, and the two routes
  the SDK gates although its base calls them stable (``session/close``, ``session/resume``),
  which stay as the SDK wrote them;
* the base is README's, the unstable pair alone: acp-codegen knows it as upstream's
  schema-v1.19.0 and its stable methods (issue 58); a base edited so that it is no release
  gets every method added gated, and the report says so, naming ``stable-meta-v1``;
* (ecosystem) the same after the SDK's own regeneration command moves it to schema-v1.21.0,
  and the kit, with ``session/delete``, on the moved SDK.

The SDK's suite and the kit on 0.12.1 over its own base are test_sdk_rfd.py's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import edit_json, run_kit
from test_sdk_dropin import V1_BASE, adopt, needs
from test_sdk_rfd import AGENT, LONG_PROMPT, V1_21, copied, gen_all, sdk_copy, sdk_env

pytestmark = pytest.mark.slow

EVERY = Path(__file__).resolve().parents[1] / "agents" / "sdk_agent" / "every_method.py"
RFD = {"session/archive", "session/unarchive"}
V1 = needs(V1_BASE / "schema.unstable.json", V1_BASE / "meta.unstable.json", V1_BASE / "meta.json")


def methods(meta: Path) -> dict[str, set[str]]:
    """side -> the wire names a meta file lists."""
    data = json.loads(meta.read_text(encoding="utf-8"))
    return {side: set(data.get(f"{side}Methods", {}).values()) for side in ("agent", "client")}


def adopted_copy(sdist: Path, at: Path, venv: Path, *, feature: bool) -> tuple[Path, str]:
    """The sdist with README's ``[tool.acp-codegen]`` (``sdk_copy``), then adopted."""
    sdk_copy(sdist, at, feature=feature)
    return at, adopt(venv, at, "src/acp/schema.py")


@pytest.fixture(scope="module")
def sdk_on(venv: Path, sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return adopted_copy(sdist, tmp_path_factory.mktemp("every-on") / "sdk", venv, feature=True)


@pytest.fixture(scope="module")
def sdk_off(venv: Path, sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return adopted_copy(sdist, tmp_path_factory.mktemp("every-off") / "sdk", venv, feature=False)


def reached(venv: Path, sdk: Path, *args: str) -> dict[str, Any]:
    """What ``every_method.py`` says each side reached, on the SDK copy ``sdk``."""
    done = subprocess.run(
        [str(venv / "python"), str(EVERY), "client", *args], capture_output=True, text=True, env=sdk_env(sdk),
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def gated_by_the_sdk(sdist: Path) -> dict[str, set[str]]:
    """side -> meta keys the SDK's own routers mark unstable (``unstable=True``, or a
    route of its own making with ``warn_unstable``), read from the sdist's files."""
    out = {}
    for side, table, router in (("agent", "AGENT_METHODS", "agent"), ("client", "CLIENT_METHODS", "client")):
        text = (sdist / "src" / "acp" / router / "router.py").read_text(encoding="utf-8")
        calls = re.split(r"\n\s*router\.", text)  # one route a piece
        out[side] = {key for call in calls if "unstable" in call for key in re.findall(rf'{table}\["(\w+)"\]', call)}
    return out


def expected(base: Path, feature: bool) -> dict[str, set[str]]:
    every = methods(base / "meta.unstable.json")
    return {"agent": every["agent"] | (RFD if feature else set()), "client": every["client"]}


def assert_every_method_reached(venv: Path, sdk: Path, base: Path, feature: bool) -> None:
    got = reached(venv, sdk)
    want = expected(base, feature)
    print(f"reached: {len(got['agent'])} agent methods, {len(got['client'])} client methods")
    assert (got["agent_errors"], got["client_errors"]) == ({}, {})
    assert set(got["agent"]) == want["agent"] and len(want["agent"]) == (30 if feature else 28)
    assert set(got["client"]) == want["client"] and len(want["client"]) == 14


def assert_the_gate_follows_the_base(venv: Path, sdk: Path, base: Path, sdist: Path) -> None:
    got = reached(venv, sdk, "--no-unstable-protocol")
    stable = methods(base / "meta.json")
    every = methods(base / "meta.unstable.json")
    own = gated_by_the_sdk(sdist)
    for side in ("agent", "client"):
        keys = {
            wire: key for key, wire in json.loads((base / "meta.unstable.json").read_text())[f"{side}Methods"].items()
        }
        served = set(got[side])
        # every stable method the SDK did not gate itself is served; nothing outside the stable meta is
        assert {m for m in stable[side] if keys[m] not in own[side]} <= served, side
        assert served <= stable[side], side
        # the others are refused as the SDK refuses session/fork (requests: -32601)
        assert {m for m, code in got[f"{side}_errors"].items() if code != -32601} == set(), side
        assert len(served) < len(every[side]), side
    assert {"session/delete", "logout"} <= set(got["agent"])


@V1
# (off: a second adopt, the ecosystem session's; README's command holds the feature on)
@pytest.mark.parametrize("feature", [True, pytest.param(False, marks=pytest.mark.ecosystem)], ids=["on", "off"])
def test_every_method_of_the_base_is_reached_on_both_sides(
    venv: Path,
    sdk_on: tuple[Path, str],
    sdk_off: tuple[Path, str],
    feature: bool,
) -> None:
    sdk, _ = sdk_on if feature else sdk_off
    assert_every_method_reached(venv, sdk, V1_BASE, feature)


@V1
def test_without_the_unstable_protocol_the_gate_follows_the_base(
    venv: Path,
    sdist: Path,
    sdk_on: tuple[Path, str],
) -> None:
    assert_the_gate_follows_the_base(venv, sdk_on[0], V1_BASE, sdist)


@V1
def test_the_report_names_every_method_wired_anew_and_what_it_left(sdk_on: tuple[Path, str]) -> None:
    _, report = sdk_on
    line = next(line for line in report.splitlines() if line.startswith("methods wired anew"))
    added = dict(re.findall(r"(\S+) -> (\w+) \(", line))
    own_agent, own_client = 12, 11  # what the SDK 0.12.1 routes itself
    every = expected(V1_BASE, True)
    assert len(added) == len(every["agent"]) - own_agent + len(every["client"]) - own_client - 1  # (mcp/message: both)
    assert added["session/delete"] == "delete_session" and added["logout"] == "logout"
    assert "session/delete -> delete_session (agent)" in line  # stable: not gated
    assert "nes/start -> start_nes (agent, unstable)" in line
    assert "gates: schema.json is upstream's schema-v1.19.0 = v1.4.0; what it calls stable is not gated" in report
    assert "  session/close: stable in the base, routed as unstable by the SDK itself; left as it is" in report
    assert "  session/resume: stable in the base, routed as unstable by the SDK itself; left as it is" in report
    router = (sdk_on[0] / "src/acp/agent/router.py").read_text(encoding="utf-8")
    assert (
        router.count('AGENT_METHODS["session_close"]') == 1
        and "unstable=True" in router.split("session_close")[1][:200]
    )


@V1
def test_a_base_that_is_no_release_gets_every_method_added_gated(venv: Path, sdist: Path, tmp_path: Path) -> None:
    sdk = sdk_copy(sdist, tmp_path / "sdk", feature=True)
    edit_json(sdk / "schema" / "schema.json", lambda s: s["$defs"]["DeleteSessionRequest"].update(description="ours"))
    report = adopt(venv, sdk, "src/acp/schema.py", "--dry-run")
    assert (
        "gates: schema.json holds unstable methods and is no upstream release acp-codegen knows"
        " (set stable-meta-v1); every method wired anew is gated as unstable"
    ) in report.splitlines()
    line = next(line for line in report.splitlines() if line.startswith("methods wired anew"))
    added = re.findall(r"\S+ -> \w+ \(([^)]*)\)", line)
    assert added and all(a.endswith(", unstable") for a in added), line


@needs(V1_21 / "schema.unstable.json", V1_21 / "meta.unstable.json", V1_21 / "meta.json")
@pytest.mark.ecosystem  # (the move, the reach and the kit again: a minute)
@pytest.mark.parametrize("feature", [True, False], ids=["on", "off"])
def test_moved_to_a_newer_release_every_method_is_still_reached(
    venv: Path, sdist: Path, sdk_on: tuple[Path, str], sdk_off: tuple[Path, str], tmp_path: Path, feature: bool
) -> None:
    sdk = copied((sdk_on if feature else sdk_off)[0], tmp_path / "sdk")
    shutil.copyfile(V1_21 / "schema.unstable.json", sdk / "schema" / "schema.json")
    shutil.copyfile(V1_21 / "meta.unstable.json", sdk / "schema" / "meta.json")
    out = gen_all(venv, sdk, version="schema-v1.21.0")
    release = "schema-v1.21.0 = schema-v2.0.0-alpha.3 = v1.7.0"  # (one commit, three tags)
    assert f"gates: schema.json is upstream's {release}; what it calls stable is not gated" in out, out
    assert_every_method_reached(venv, sdk, V1_21, feature)
    assert_the_gate_follows_the_base(venv, sdk, V1_21, sdist)
    if not feature:
        return  # (the kit's agent is an archive agent: it needs the RFD)
    agent = (venv / "python", AGENT, "--store", tmp_path / "sessions.json")
    code, results, out = run_kit(
        "--protocol", "1", "--long-prompt", LONG_PROMPT, "--", *map(str, agent),
        tool=(venv / "acp-codegen",), env=sdk_env(sdk),
    )  # fmt: skip
    assert code == 0 and set(results.values()) == {"PASS"}, out
    assert re.search(r"^15 passed, 0 failed, 0 skipped", out, re.M), out
