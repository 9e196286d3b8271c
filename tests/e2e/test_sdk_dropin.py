"""An existing SDK regenerates its schema module with acp-codegen (docs/sdk-migration.md).

From the built wheel, in a virtualenv that also holds the official Python SDK
(``agent-client-protocol`` 0.12.1, installed here only: it is no dependency of the tool or
of the generated package), an SDK repository generates upstream ``schema-v1.19.0`` v1 (the
schema the SDK's ``acp/schema.py`` comes from) with the table of the migration guide.
Then, against the SDK's ``acp.schema``:

* every public class name (its ``RootModel`` classes too; leading underscores and
  ``RootModel[...]`` parametrisations aside) is importable from the output, with the same
  Python field names;
* for a corpus of messages (the benchmarks' corpus, plus the SDK's construction idioms:
  ``None`` for optional fields, ``field_meta=``), both models accept the same inputs and
  dump the same JSON (``by_alias=True``, unset and None fields left out).

What still differs is listed in ``DIFFERENCES``, each with its reason; the list is the
migration guide's, and the test fails when either no longer matches what it measures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SHARED_UPSTREAM

SDK_PIN = "agent-client-protocol==0.12.1"
GUIDE = ROOT / "docs" / "sdk-migration.md"
BASE = SHARED_UPSTREAM / "schema-v1.19.0" / "v1"
# The remaining differences (the guide's table, by key): where each shows in this test.
DIFFERENCES = {
    "archive-fields": {
        "fields": {"SessionInfo", "SessionInfoUpdate", "ListSessionsRequest", "SessionCapabilities"},
        "reason": "the table enables unstable_session_archive: its fields are added",
    },
    "formatted-strings": {
        "messages": {"idiom:ElicitationUrlRequestMode(url not normalised)"},
        "reason": "a formatted string stays the str that was sent: never normalised (AnyUrl: see the base class)",
    },
}

# Run in the test's virtualenv, next to the SDK repository's src/: compares the SDK's
# acp.schema with the generated models and prints the findings as JSON.
COMPARE = r"""
import json, os, sys
sys.path.insert(0, os.getcwd())  # the SDK repository's src/ (a script's own folder comes first otherwise)
from pydantic import AnyUrl, BaseModel, ValidationError
import acp.schema as sdk
from acp_new.generated.v1 import models as ours

def public_classes(module):
    return sorted(
        n for n, v in vars(module).items()
        if n.isidentifier() and not n.startswith("_") and isinstance(v, type) and issubclass(v, BaseModel)
        and v.__module__ == module.__name__ and n != "BaseModel"
    )

names = public_classes(sdk)
missing = [n for n in names if not hasattr(ours, n)]
field_differences = {}
for n in names:
    if n in missing:
        continue
    mine = getattr(ours, n)
    theirs = set(getattr(sdk, n).model_fields)
    if not isinstance(mine, type):
        field_differences[n] = "not a class: " + repr(mine)
    elif set(mine.model_fields) != theirs:
        field_differences[n] = [sorted(theirs - set(mine.model_fields)), sorted(set(mine.model_fields) - theirs)]

def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude_none=True)

def outcome(make):
    try:
        return ["ok", dump(make())]
    except (ValidationError, TypeError, AttributeError) as exc:
        return ["error", type(exc).__name__]

# The SDK's construction idioms, written once for either module.
def text(m, t="hi"):
    return m.TextContentBlock(type="text", text=t)

IDIOMS = {
    "ToolCallStart(content=None, kind=None, field_meta=)": lambda m: m.ToolCallStart(
        session_update="tool_call", tool_call_id="t1", title="Read", content=None, kind=None, status=None,
        locations=None, raw_input=None, field_meta={"trace": "x"}),
    "ToolCallProgress(status=)": lambda m: m.ToolCallProgress(
        session_update="tool_call_update", tool_call_id="t1", status="completed", content=None),
    "InitializeResponse(agent_capabilities=None)": lambda m: m.InitializeResponse(
        protocol_version=1, agent_capabilities=None, auth_methods=None, agent_info=None),
    "CreateTerminalRequest(args=None, env=None)": lambda m: m.CreateTerminalRequest(
        session_id="s", command="ls", args=None, env=None, cwd=None, output_byte_limit=None),
    "ForkSessionRequest(mcp_servers=None)": lambda m: m.ForkSessionRequest(session_id="s", cwd="/w", mcp_servers=None),
    "TextContentBlock(field_meta=)": lambda m: m.TextContentBlock(type="text", text="hi", annotations=None,
        field_meta={"k": 1}),
    "SessionNotification(AgentMessageChunk)": lambda m: m.SessionNotification(session_id="s",
        update=m.AgentMessageChunk(session_update="agent_message_chunk", content=text(m)), field_meta=None),
    "PromptRequest(prompt=[...])": lambda m: m.PromptRequest(session_id="s", prompt=[text(m),
        m.ResourceContentBlock(type="resource_link", uri="file:///a", name="a", size=None)]),
    "AgentPlanUpdate(entries=)": lambda m: m.AgentPlanUpdate(session_update="plan", entries=[
        m.PlanEntry(content="x", priority="high", status="pending")]),
    "RequestPermissionResponse(AllowedOutcome)": lambda m: m.RequestPermissionResponse(
        outcome=m.AllowedOutcome(outcome="selected", option_id="o")),
    "NewSessionRequest(mcp_servers=[HttpMcpServer])": lambda m: m.NewSessionRequest(cwd="/w", mcp_servers=[
        m.HttpMcpServer(type="http", name="n", url="https://x", headers=[])]),
    "idiom:CreateUrlRequestElicitationRequest": lambda m: m.CreateUrlRequestElicitationRequest(
        mode="url", message="m", request_id="r", elicitation_id="e", url="https://example.com/auth"),
    "idiom:CreateOtherElicitationRequest": lambda m: m.CreateOtherElicitationRequest(message="hi", mode="x-voice"),
    "ElicitationUrlRequestMode(AnyUrl)": lambda m: m.ElicitationUrlRequestMode(
        request_id="r", elicitation_id="e", url=AnyUrl("https://example.com/auth")),
    "idiom:ElicitationUrlRequestMode(url not normalised)": lambda m: m.ElicitationUrlRequestMode(
        request_id="r", elicitation_id="e", url="https://example.com"),
}

corpus = json.load(open(sys.argv[1], encoding="utf-8"))
messages = {}
for i, (name, text_) in enumerate(corpus):
    data = json.loads(text_)
    messages[f"corpus:{i}:{name}"] = (lambda m, name=name, data=data: getattr(m, name).model_validate(data))
    # The same message again, as the wire may carry it: with an unknown property.
    messages[f"corpus-unknown:{i}:{name}"] = (
        lambda m, name=name, data=data: getattr(m, name).model_validate({**data, "x-unknown": 1}))
for key, make in IDIOMS.items():
    messages[key if key.startswith("idiom:") else "idiom:" + key] = make
equal, differing = 0, {}
for key, make in messages.items():
    a, b = outcome(lambda: make(sdk)), outcome(lambda: make(ours))
    if a == b and a[0] == "ok":
        equal += 1
    else:
        differing[key] = {"sdk": a, "ours": b}
print(json.dumps({
    "names": len(names), "missing": missing,
    "fields_matched": len(names) - len(missing) - len(field_differences), "field_differences": field_differences,
    "messages": len(messages), "equal": equal, "differing": differing,
}))
"""

# The SDK's base class, moved out of acp/schema.py (docs/sdk-migration.md).
BASE_MODULE = """
from typing import Any

from pydantic import AnyUrl, BaseModel as _BaseModel, ConfigDict, field_validator


class BaseModel(_BaseModel):
    model_config = ConfigDict(populate_by_name=True, use_attribute_docstrings=True)

    def __getattr__(self, item: str) -> Any:
        if item.lower() != item:
            snake = "".join("_" + c.lower() if c.isupper() and i > 0 else c.lower() for i, c in enumerate(item))
            return getattr(self, snake)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{item}'")

    @field_validator("protocol_version", mode="before", check_fields=False)
    @classmethod
    def _coerce_protocol_version(cls, value: Any) -> Any:
        if isinstance(value, int) or cls.__name__ != "InitializeRequest":
            return value
        try:
            return int(value)
        except (TypeError, ValueError):
            return 1

    @field_validator("url", "uri", mode="before", check_fields=False)
    @classmethod
    def _url_as_string(cls, value: Any) -> Any:
        # The SDK's users pass pydantic's AnyUrl; the generated models take strings.
        return str(value) if isinstance(value, AnyUrl) else value
"""


def guide_table() -> str:
    """The guide's [tool.acp-codegen] table (the toml block after its marker)."""
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(r"<!-- sdk-table[^>]*-->\n```toml\n(.*?)```", text, re.S)
    assert found, "docs/sdk-migration.md has no sdk-table block"
    return found.group(1)


def guide_differences() -> list[str]:
    section = GUIDE.read_text(encoding="utf-8").split("## Remaining differences", 1)[1]
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def test_the_guide_lists_the_differences_this_test_knows() -> None:
    assert guide_differences() == list(DIFFERENCES)


@pytest.mark.slow
def test_the_official_sdk_regenerates_with_acp_codegen(wheel: Path, tmp_path: Path) -> None:
    if not (BASE / "schema.unstable.json").is_file():
        pytest.skip(f"upstream schema-v1.19.0 not present at {BASE}")
    from benchmarks.corpus import load

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}

    def run(*command: str | Path, cwd: Path) -> str:
        done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done.stdout

    run(bin_dir / "python", "-m", "pip", "install", "--quiet", "--no-compile", wheel, SDK_PIN, cwd=tmp_path)

    # The SDK repository: its schema (as its gen_all.py keeps it), the guide's table, and
    # its base class. The package is acp_new, not acp: the installed SDK is the reference.
    sdk = tmp_path / "sdk"
    (sdk / "schema").mkdir(parents=True)
    shutil.copyfile(BASE / "schema.unstable.json", sdk / "schema" / "schema.json")
    shutil.copyfile(BASE / "meta.unstable.json", sdk / "schema" / "meta.json")
    table = guide_table().replace('"src/acp/generated"', '"src/acp_new/generated"')
    table = table.replace('"acp._base:BaseModel"', '"acp_new._base:BaseModel"')
    (sdk / "pyproject.toml").write_text(table, encoding="utf-8")
    (sdk / "src" / "acp_new").mkdir(parents=True)
    (sdk / "src" / "acp_new" / "__init__.py").write_text("", encoding="utf-8")
    (sdk / "src" / "acp_new" / "_base.py").write_text(BASE_MODULE, encoding="utf-8")
    out = run(bin_dir / "acp-codegen", "generate", cwd=sdk)
    assert "chosen in pyproject.toml: 67" in out, out
    header = (sdk / "src" / "acp_new" / "generated" / "v1" / "models.py").read_text(encoding="utf-8")
    assert header.startswith("# Generated by acp-codegen 0.1.0. Do not edit: run `make gen-all`.")

    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(load()), encoding="utf-8")
    (tmp_path / "compare.py").write_text(COMPARE, encoding="utf-8")
    found = json.loads(run(bin_dir / "python", tmp_path / "compare.py", corpus, cwd=sdk / "src"))
    print(
        f"names: {found['names'] - len(found['missing'])}/{found['names']} importable;"
        f" fields: {found['fields_matched']}/{found['names']} the same;"
        f" messages: {found['equal']}/{found['messages']} equal"
    )
    assert found["missing"] == []
    expected_fields = set().union(*(d.get("fields", set()) for d in DIFFERENCES.values()))
    assert set(found["field_differences"]) == expected_fields, found["field_differences"]
    expected_messages = set().union(*(d.get("messages", set()) for d in DIFFERENCES.values()))
    assert set(found["differing"]) == expected_messages, json.dumps(found["differing"], indent=1)
    assert found["names"] > 250 and found["messages"] > 60
