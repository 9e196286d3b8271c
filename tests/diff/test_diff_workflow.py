"""The example workflow in docs/examples/schema-diff.yml, run step by step (its shell
commands, not GitHub) in a local repository with an ``origin`` remote: the comment is posted
once and then updated, annotations are printed, and breaking changes fail the run.

``gh`` is replaced by a small fake that keeps the pull request's comments in a JSON file; the
GitHub-hosted actions (checkout, setup-python) and the install step are the only steps not run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import ROOT, copy_schema, edit_json

WORKFLOW = ROOT / "docs" / "examples" / "schema-diff.yml"
MARKER = "<!-- acp-codegen diff -->"
# What the workflow reads from GitHub's context, as the test's pull request has it.
CONTEXT = {"github.base_ref": "main", "github.token": "token", "github.event.pull_request.number": "7"}

FAKE_GH = """#!{python}
# A stand-in for `gh api` over one pull request's comments, kept in $FAKE_GH_STATE.
import json, os, sys
state_path = os.environ["FAKE_GH_STATE"]
comments = json.load(open(state_path)) if os.path.exists(state_path) else []
args = sys.argv[1:]
assert args[0] == "api", args
method = args[args.index("--method") + 1] if "--method" in args else "GET"
endpoint = next(a for a in args[1:] if a.startswith("repos/"))
assert endpoint.startswith("repos/" + os.environ["GITHUB_REPOSITORY"] + "/"), endpoint
if method == "GET":
    assert endpoint.endswith("/issues/7/comments"), endpoint
    jq = args[args.index("--jq") + 1]
    assert jq == '.[] | select(.body | startswith("<!-- acp-codegen diff -->")) | .id', jq
    for comment in comments:
        if comment["body"].startswith("<!-- acp-codegen diff -->"):
            print(comment["id"])
    sys.exit(0)
body_arg = args[args.index("-F") + 1]
assert body_arg.startswith("body=@"), body_arg
body = open(body_arg[len("body=@"):], encoding="utf-8").read()
if method == "POST":
    assert endpoint.endswith("/issues/7/comments"), endpoint
    comments.append({{"id": 100 + len(comments), "body": body}})
elif method == "PATCH":
    target = int(endpoint.rsplit("/", 1)[1])
    [comment] = [c for c in comments if c["id"] == target]
    comment["body"] = body
json.dump(comments, open(state_path, "w"))
print("{{}}")
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _expand(text: str) -> str:
    def value(match: re.Match[str]) -> str:
        assert match.group(1) in CONTEXT, f"the test does not know {match.group(0)}"
        return CONTEXT[match.group(1)]

    return re.sub(r"\$\{\{\s*([a-z_.]+)\s*\}\}", value, text)


def _outputs(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _run_workflow(repo: Path, home: Path) -> tuple[bool, str, dict[str, Any]]:
    """Run the job's steps as GitHub would (bash -eo pipefail, env, step ids and `if:`)."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    [job] = workflow["jobs"].values()
    outputs: dict[str, dict[str, str]] = {}
    log = []
    failed = False
    for number, step in enumerate(job["steps"]):
        if "uses" in step:
            assert step["uses"].startswith(("actions/checkout@", "actions/setup-python@"))
            continue
        if step["name"] == "Install acp-codegen":
            assert step["run"].strip() == "python -m pip install ."  # the test runs from this checkout
            continue
        condition = step.get("if")
        if condition is not None:
            match = re.fullmatch(r"steps\.([a-z_]+)\.outputs\.([a-z_]+) == '([^']*)'", condition)
            assert match, f"the test does not evaluate if: {condition}"
            if outputs.get(match.group(1), {}).get(match.group(2)) != match.group(3):
                continue
        output_file = home / f"output-{number}"
        env = {
            **os.environ,
            "PATH": f"{home / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_REPOSITORY": "example/protocol",
            "FAKE_GH_STATE": str(home / "comments.json"),
            **{k: _expand(str(v)) for k, v in step.get("env", {}).items()},
        }
        script = home / f"step-{number}.sh"
        script.write_text(_expand(step["run"]), encoding="utf-8")
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        log.append(f"## {step['name']}: exit {done.returncode}\n{done.stdout}{done.stderr}")
        if "id" in step:
            outputs[step["id"]] = _outputs(output_file)
        if done.returncode:
            failed = True
            break
    state = home / "comments.json"
    comments = json.loads(state.read_text(encoding="utf-8")) if state.exists() else []
    return failed, "\n".join(log), {"comments": comments}


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, Path]:
    """A clone of a repository with this project's schema and config, its ``origin`` a bare
    repository whose ``main`` is the base of the pull request."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    seed = tmp_path / "seed"
    seed.mkdir()
    copy_schema(seed / "schema")
    shutil.copy(ROOT / "pyproject.toml", seed / "pyproject.toml")
    _git(seed, "init", "-q", "-b", "main")
    _git(seed, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", ".")
    _git(seed, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
    _git(tmp_path, "clone", "-q", "--bare", str(seed), "origin.git")
    _git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), "repo")
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    gh = home / "bin" / "gh"
    gh.write_text(FAKE_GH.format(python=sys.executable), encoding="utf-8")
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    return tmp_path / "repo", home


def _edit(repo: Path, change: Any, version: str = "v1") -> None:
    edit_json(repo / "schema" / version / "schema.json", lambda data: change(data["$defs"]))


def test_the_comment_is_posted_then_updated_and_breaking_changes_fail(pull_request: tuple[Path, Path]) -> None:
    repo, home = pull_request
    for version in ("v1", "v2"):  # in v1 only, generate would refuse it (no conversion declared): an error
        _edit(repo, lambda defs: defs["SessionInfo"]["properties"].update(note={"type": "string"}), version)
    _edit(repo, lambda defs: defs["SessionInfo"].update(description="A session, now with a note."))
    failed, log, state = _run_workflow(repo, home)
    assert not failed, log
    [comment] = state["comments"]
    assert comment["body"].startswith(MARKER + "\n## Schema diff: `git:origin/main` -> `schema`")
    assert "0 breaking" in comment["body"] and "`SessionInfo.note`" in comment["body"]
    assert re.search(r"::notice file=schema/v1/schema.json,line=[0-9]+,title=Schema change%3A", log), log
    assert "## Fail on breaking changes" not in log

    # A second push: the archive filter becomes required.
    _edit(repo, lambda defs: defs["ListSessionsRequest"].setdefault("required", []).append("archived"))
    failed, log, state = _run_workflow(repo, home)
    assert failed and "## Fail on breaking changes: exit 1" in log, log
    [comment] = state["comments"]  # updated, not posted again
    body = comment["body"]
    assert "### Breaking changes" in body and "`ListSessionsRequest.archived`" in body
    lines = (repo / "schema" / "v1" / "schema.json").read_text(encoding="utf-8").splitlines()
    match = re.search(r"::error file=schema/v1/schema.json,line=([0-9]+),title=[^:]*::v1 ListSessionsRequest", log)
    assert match, log
    assert lines[int(match.group(1)) - 1].strip().startswith('"archived"')

    # A third push: a property generate refuses (v1 only, no conversion declared) is an error.
    _edit(repo, lambda defs: defs["ArchiveSessionRequest"]["properties"].update(reason={"type": "string"}))
    failed, log, state = _run_workflow(repo, home)
    assert failed and "## Fail on breaking changes: exit 1" in log, log
    [comment] = state["comments"]
    assert "### Errors" in comment["body"] and "generation failed on the new side" in comment["body"]
    lines = (repo / "schema" / "v1" / "schema.json").read_text(encoding="utf-8").splitlines()
    match = re.search(r"::error file=schema/v1/schema.json,line=([0-9]+),title=Generation failed \(new side\)::", log)
    assert match, log
    assert lines[int(match.group(1)) - 1].strip().startswith('"reason"')


def test_bad_schema_input_fails_the_diff_step_with_its_message(pull_request: tuple[Path, Path]) -> None:
    repo, home = pull_request
    (repo / "schema" / "v1" / "schema.json").write_text("{", encoding="utf-8")
    failed, log, state = _run_workflow(repo, home)
    assert failed and "## Compare the schema with the base branch: exit 2" in log
    assert "schema/v1/schema.json: /: invalid JSON" in log
    assert state["comments"] == []
