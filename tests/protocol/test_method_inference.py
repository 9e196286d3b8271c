"""Method types an upstream release lists but does not mark, found by its naming convention
(``codegen/method_inference.py``), and what generate and diff make of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.errors import SchemaError
from acp_codegen.protocol.load import Source, VersionSources
from acp_codegen.protocol.method_inference import infer_method_types
from acp_codegen.protocol.validate import validate_version

OBJ = {"type": "object", "properties": {"sessionId": {"type": "string"}}, "required": ["sessionId"]}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _release() -> tuple[dict[str, Any], dict[str, Any]]:
    """A schema and meta file as upstream wrote them before v0.0.33: no type is marked,
    each side's messages are listed in unions, empty results are titled variants only."""
    names = ("NewSessionRequest", "NewSessionResponse", "PromptRequest", "CancelNotification")
    defs: dict[str, Any] = {n: dict(OBJ) for n in (*names, "SessionNotification", "ReadTextFileRequest")}
    defs |= {
        "ClientRequest": {"anyOf": [_ref("NewSessionRequest"), _ref("PromptRequest")]},
        "AgentResponse": {"anyOf": [_ref("NewSessionResponse"), {"title": "PromptResponse", "type": "null"}]},
        "ClientNotification": {"anyOf": [_ref("CancelNotification")]},
        "AgentRequest": {"anyOf": [_ref("ReadTextFileRequest")]},
        "ClientResponse": {"anyOf": [{"title": "ReadTextFileResponse", "type": "object"}]},
        "AgentNotification": {"anyOf": [_ref("SessionNotification")]},
    }
    meta = {
        "version": 1,
        "agentMethods": {
            "session_new": "session/new",
            "session_prompt": "session/prompt",
            "session_cancel": "session/cancel",
        },
        "clientMethods": {"session_update": "session/update", "fs_read_text_file": "fs/read_text_file"},
    }
    return {"$defs": defs}, meta


def _sources(schema: dict[str, Any], meta: dict[str, Any]) -> VersionSources:
    return VersionSources(
        "release", (Source("release/schema.json", "0", schema),), Source("release/meta.json", "0", meta)
    )


def _marked(sources: VersionSources) -> dict[str, tuple[str, str]]:
    return {n: (d["x-method"], d["x-side"]) for n, d in sources.schemas[0].data["$defs"].items() if "x-method" in d}


def test_each_listed_method_gets_the_types_its_name_gives_on_its_side():
    schema, meta = _release()
    inferred = infer_method_types(_sources(schema, meta))
    validate_version(inferred, 1)  # what validation refused before now passes
    assert _marked(inferred) == {
        "NewSessionRequest": ("session/new", "agent"),
        "NewSessionResponse": ("session/new", "agent"),
        "PromptRequest": ("session/prompt", "agent"),
        "PromptResponse": ("session/prompt", "agent"),
        # session/cancel is an agent method: a ClientNotification, never the client's SessionNotification
        "CancelNotification": ("session/cancel", "agent"),
        "SessionNotification": ("session/update", "client"),
        "ReadTextFileRequest": ("fs/read_text_file", "client"),
        "ReadTextFileResponse": ("fs/read_text_file", "client"),
    }
    defs = inferred.schemas[0].data["$defs"]
    assert {k: v for k, v in defs["PromptResponse"].items() if not k.startswith("x-")} == {"type": "null"}
    assert {k: v for k, v in defs["ReadTextFileResponse"].items() if not k.startswith("x-")} == {"type": "object"}
    assert "x-method" not in schema["$defs"]["PromptRequest"]  # the input is left as it was read
    assert [str(n) for n in inferred.notes] == [
        "release/meta.json: /agentMethods/session_cancel: no type is marked for it; by name:"
        " notification CancelNotification",
        "release/meta.json: /agentMethods/session_new: no type is marked for it; by name:"
        " request NewSessionRequest, response NewSessionResponse",
        "release/meta.json: /agentMethods/session_prompt: no type is marked for it; by name: request PromptRequest,"
        " response PromptResponse (null, as the variant of AgentResponse of that title says)",
        "release/meta.json: /clientMethods/fs_read_text_file: no type is marked for it; by name: request"
        " ReadTextFileRequest, response ReadTextFileResponse (an empty object, as the variant of ClientResponse"
        " of that title says)",
        "release/meta.json: /clientMethods/session_update: no type is marked for it; by name:"
        " notification SessionNotification",
    ]


def test_the_largest_stem_the_method_names_wins():
    schema, meta = _release()
    schema["$defs"]["SetSessionModeRequest"] = dict(OBJ)
    schema["$defs"]["ModeRequest"] = dict(OBJ)
    schema["$defs"]["ClientRequest"]["anyOf"] += [_ref("ModeRequest"), _ref("SetSessionModeRequest")]
    meta["agentMethods"]["session_set_mode"] = "session/set_mode"
    with pytest.raises(SchemaError):  # no response anywhere: validation still refuses the method
        validate_version(infer_method_types(_sources(schema, meta)), 1)
    assert _marked(infer_method_types(_sources(schema, meta)))["SetSessionModeRequest"] == ("session/set_mode", "agent")


def test_a_method_two_stems_of_one_size_fit_is_an_error():
    schema, meta = _release()
    schema["$defs"]["NewPromptRequest"] = dict(OBJ)
    schema["$defs"]["ClientRequest"]["anyOf"].append(_ref("NewPromptRequest"))
    meta["agentMethods"]["session_new_prompt"] = "session/new_prompt"  # NewSession and NewPrompt alike
    with pytest.raises(SchemaError) as caught:
        infer_method_types(_sources(schema, meta))
    assert str(caught.value) == (
        "release/meta.json: /agentMethods/session_new_prompt: 'session/new_prompt' is named like"
        " NewPromptRequest and NewSessionRequest alike"
    )


def test_marked_types_are_kept_and_a_complete_release_is_left_alone():
    schema, meta = _release()
    schema["$defs"]["PromptRequest"] |= {"x-method": "session/prompt", "x-side": "agent"}
    inferred = infer_method_types(_sources(schema, meta))
    assert "session_prompt: no type is marked for it; by name: response PromptResponse" in "\n".join(
        map(str, inferred.notes)
    )
    complete = infer_method_types(inferred)
    assert complete is inferred  # nothing missing: the same sources, no second note


def test_a_method_nothing_is_named_after_is_left_to_validation():
    schema, meta = _release()
    meta["agentMethods"]["authenticate"] = "authenticate"
    inferred = infer_method_types(_sources(schema, meta))
    with pytest.raises(SchemaError) as caught:
        validate_version(inferred, 1)
    assert "/agentMethods/authenticate: method 'authenticate' has no request type" in str(caught.value)


def _write_release(tmp_path: Path) -> Path:
    schema, meta = _release()
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder / "schema.json"


def test_generate_over_such_a_release_notes_what_it_inferred(tmp_path, capsys):
    base = _write_release(tmp_path)
    out = tmp_path / "out"
    args = ["generate", "--no-default-features", "--no-conversions", "--base-v1", str(base), "--out", str(out)]
    assert main(args) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if "no type is marked for it" in line]
    assert len(notes) == 5 and notes[-1].startswith("note: ")
    assert notes[-1].endswith(
        "release/meta.json: /clientMethods/session_update: no type is marked for it;"
        " by name: notification SessionNotification"
    )
    methods = (out / "v1" / "methods.py").read_text(encoding="utf-8")
    assert 'name="session/prompt",' in methods and "result=models.PromptResponse," in methods


def test_diff_reads_such_a_release_and_generates_from_it(tmp_path, capsys):
    base = _write_release(tmp_path)
    assert main(["diff", str(base), str(base), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["changes"] == [] and report["generated"] == []  # generated files compared, none differ
