"""The GitHub Action at the repository root (``action.yml``), run as a runner runs a composite
action: each ``run:`` step with bash, its ``${{ }}`` expressions and ``if:`` evaluated, and the
files a runner gives every step (``GITHUB_OUTPUT``, ``GITHUB_ENV``, ``GITHUB_PATH``,
``GITHUB_STEP_SUMMARY``) with ``GITHUB_WORKSPACE`` and ``github.action_path`` set. The action
path is a copy of this checkout; the workspace a scratch SDK repository (the official Python
SDK's layout: ``schema/schema.json`` and ``meta.json``) whose ``origin`` has the base branch.
GitHub's API is a local stand-in (``GITHUB_API_URL``), so nothing leaves the machine.

The workflows the docs show are checked against the action's inputs here too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import NOT_SOURCE, ROOT, SHARED_UPSTREAM, edit_json, run_script
from support.reference_data import require

ACTION = ROOT / "action.yml"
MARKER = "<!-- acp-codegen diff -->"
REPO = "example/my-sdk"
PR = "7"
TOKEN = "test-token"
BASE = SHARED_UPSTREAM / "schema-v1.19.0" / "v1"  # the official SDK 0.12.1's schema


class FakeGitHub(ThreadingHTTPServer):
    """The issue-comment endpoints of one pull request, on 127.0.0.1."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.comments: list[dict[str, Any]] = []
        self.calls: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeGitHub

    def _answer(self, status: int, data: Any) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self, method: str) -> None:
        self.server.calls.append(f"{method} {self.path}")
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._answer(401, {"message": "Bad credentials"})
        length = int(self.headers.get("Content-Length") or 0)
        data = json.loads(self.rfile.read(length)) if length else None
        listing = f"/repos/{REPO}/issues/{PR}/comments"
        comments = self.server.comments
        if method == "GET" and self.path.startswith(listing + "?"):
            page = int(re.search(r"[?&]page=([0-9]+)", self.path)[1])  # type: ignore[index]
            return self._answer(200, comments[(page - 1) * 100 : page * 100])
        if method == "POST" and self.path == listing:
            comments.append({"id": 1000 + len(comments), "body": data["body"]})
            return self._answer(201, comments[-1])
        match = re.fullmatch(rf"/repos/{REPO}/issues/comments/([0-9]+)", self.path)
        if method == "PATCH" and match:
            [comment] = [c for c in comments if c["id"] == int(match[1])]
            comment["body"] = data["body"]
            return self._answer(200, comment)
        return self._answer(404, {"message": "Not Found"})

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Run:
    failed: bool
    log: str
    summary: str
    outputs: dict[str, dict[str, str]]
    annotations: list[str] = field(default_factory=list)


_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Runner:
    """A composite action's steps, run as GitHub's runner runs them (the parts this action uses)."""

    def __init__(self, action_path: Path, workspace: Path, temp: Path, context: dict[str, str]) -> None:
        self.action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
        self.action_path, self.workspace, self.temp, self.context = action_path, workspace, temp, context

    def value(self, name: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
        if name.startswith("inputs."):
            return inputs[name[len("inputs.") :]]
        if name.startswith("steps."):
            step, kind, key = name.split(".")[1:]
            assert kind == "outputs", name
            return outputs.get(step, {}).get(key, "")
        if name == "github.action_path":
            return str(self.action_path)
        assert name in self.context, f"the test does not know {name}"
        return self.context[name]

    def expand(self, text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
        return _EXPRESSION.sub(lambda m: self.value(m[1], inputs, outputs), text)

    def condition(self, text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> bool:
        """``a != ''``, ``a == 'x'`` joined by ``&&``: what this action's ``if:`` use."""
        results = []
        for part in text.split("&&"):
            match = re.fullmatch(r"\s*([a-z_.-]+(?:\.[0-9a-z_-]+)*)\s*(==|!=)\s*'([^']*)'\s*", part)
            assert match, f"the test does not evaluate if: {text}"
            equal = self.value(match[1], inputs, outputs) == match[3]
            results.append(equal if match[2] == "==" else not equal)
        return all(results)

    def run(self, given: dict[str, str]) -> Run:
        declared = self.action["inputs"]
        assert set(given) <= set(declared), set(given) - set(declared)
        inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()} | given
        inputs = {name: self.expand(text, inputs, {}) for name, text in inputs.items()}
        files = {name: self.temp / name.lower() for name in ("GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")}
        for path in files.values():
            path.write_text("", encoding="utf-8")
        outputs: dict[str, dict[str, str]] = {}
        log, annotations, failed = [], [], False
        assert self.action["runs"]["using"] == "composite"
        for number, step in enumerate(self.action["runs"]["steps"]):
            assert "run" in step and step["shell"] == "bash", step  # no third-party action in it
            if "if" in step and (failed or not self.condition(step["if"], inputs, outputs)):
                continue
            if failed:
                continue
            output = self.temp / f"output-{number}"
            output.write_text("", encoding="utf-8")
            extra_path = [p for p in files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines() if p]
            env = {
                **{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")},
                **_env_file(files["GITHUB_ENV"]),
                "PATH": os.pathsep.join([*reversed(extra_path), os.environ["PATH"]]),
                "GITHUB_OUTPUT": str(output),
                **{name: str(path) for name, path in files.items()},
                "GITHUB_WORKSPACE": str(self.workspace),
                "GITHUB_ACTION_PATH": str(self.action_path),
                "GITHUB_REPOSITORY": REPO,
                "GITHUB_API_URL": self.context["api"],
                "RUNNER_TEMP": str(self.temp),
                "CI": "true",
                **{k: self.expand(str(v), inputs, outputs) for k, v in step.get("env", {}).items()},
            }
            cwd = self.workspace / self.expand(step.get("working-directory", "."), inputs, outputs)
            script = self.temp / f"step-{number}.sh"
            done = run_script(script, self.expand(step["run"], inputs, outputs), cwd, env)
            log.append(f"## {step['name']}: exit {done.returncode}\n{done.stdout}{done.stderr}")
            annotations += [line for line in done.stdout.splitlines() if re.match(r"::(error|warning|notice)", line)]
            if "id" in step:
                outputs[step["id"]] = _env_file(output)
            failed = done.returncode != 0
        summary = files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8")
        return Run(failed, "\n".join(log), summary, outputs, annotations)


def _env_file(path: Path) -> dict[str, str]:
    """``name=value`` lines (the single-line form of GITHUB_OUTPUT and GITHUB_ENV)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _git(cwd: Path, *args: str) -> None:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def sdk(tmp_path: Path) -> Path:
    """An SDK's clone whose ``origin`` has ``main``, checked out on the pull request's branch.
    It is a Python project of its own (``my-sdk``), which the action must not install."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    require(BASE)
    seed = tmp_path / "seed"
    (seed / "schema").mkdir(parents=True)
    shutil.copyfile(BASE / "schema.unstable.json", seed / "schema" / "schema.json")
    shutil.copyfile(BASE / "meta.unstable.json", seed / "schema" / "meta.json")
    (seed / "src" / "my_sdk").mkdir(parents=True)
    (seed / "src" / "my_sdk" / "__init__.py").write_text("", encoding="utf-8")
    (seed / "pyproject.toml").write_text(
        '[project]\nname = "my-sdk"\nversion = "1.0.0"\n\n[tool.acp-codegen]\nbase-v1 = "schema/schema.json"\n'
        'out = "src/my_sdk/generated"\nfeatures = ["unstable_session_archive"]\n',
        encoding="utf-8",
    )
    _git(seed, "init", "-q", "-b", "main")
    _git(seed, "add", ".")
    _git(seed, "commit", "-qm", "base")
    _git(tmp_path, "clone", "-q", "--bare", str(seed), "origin.git")
    _git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), "repo")
    _git(tmp_path / "repo", "checkout", "-qb", "pull-request")
    return tmp_path / "repo"


def _push(repo: Path, change: Any) -> None:
    edit_json(repo / "schema" / "schema.json", lambda data: change(data["$defs"]))
    _git(repo, "commit", "-qam", "change")


@pytest.mark.slow
def test_the_action_comments_annotates_and_fails_on_a_removed_response_field(
    sdk: Path, github: FakeGitHub, tmp_path: Path
) -> None:
    action_path = tmp_path / "action"  # as a runner lays out `uses: owner/acp-codegen@ref`
    shutil.copytree(ROOT, action_path, ignore=NOT_SOURCE)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    context = {
        "github.base_ref": "main",
        "github.token": TOKEN,
        "github.event.pull_request.number": PR,
        "api": github.url,
    }
    runner = Runner(action_path, sdk, temp, context)

    # The pull request removes a response field: breaking (code), the comment posted.
    _push(sdk, lambda defs: defs["ListSessionsResponse"]["properties"].pop("nextCursor"))
    first = runner.run({})
    assert first.failed and "## Fail on errors and breaking changes: exit 1" in first.log, first.log
    assert first.outputs["diff"]["status"] == "1"
    assert first.summary.startswith(MARKER) and "### Breaking changes" in first.summary
    assert "`ListSessionsResponse.nextCursor`" in first.summary and "clients' code that reads it" in first.summary
    report = Path(first.outputs["diff"]["report"])
    assert report == sdk / "schema-diff.md" and report.read_text(encoding="utf-8") in first.summary
    [comment] = github.comments
    assert comment["body"] == report.read_text(encoding="utf-8")
    lines = (sdk / "schema" / "schema.json").read_text(encoding="utf-8").splitlines()
    [removed] = [a for a in first.annotations if "ListSessionsResponse.nextCursor" in a]
    match = re.match(r"::error file=schema/schema.json,line=([0-9]+),title=Breaking schema change", removed)
    assert match, first.annotations
    assert lines[int(match[1]) - 1].strip().startswith('"properties"')  # the removed field's nearest line
    # Installed from the action's own folder into an environment of its own; the SDK is not in it.
    venv = Path(first.outputs["install"]["bin"]).parent
    assert venv.is_relative_to(temp)
    site = next(venv.glob("lib/python*/site-packages"))
    assert not list(site.glob("my_sdk*")) and not list(site.glob("my-sdk*")), sorted(p.name for p in site.iterdir())
    [direct] = site.glob("acp_codegen-*.dist-info/direct_url.json")
    assert json.loads(direct.read_text(encoding="utf-8"))["url"] == action_path.as_uri()
    assert f"from {site / 'acp_codegen'}" in first.log

    # Another push: the same comment is updated, not posted again.
    _push(sdk, lambda defs: defs["ListSessionsRequest"]["properties"].pop("cursor"))
    second = runner.run({"fail-on": "never"})
    assert not second.failed, second.log  # breaking, but fail-on never
    [comment] = github.comments
    assert "`ListSessionsRequest.cursor`" in comment["body"] and "`ListSessionsResponse.nextCursor`" in comment["body"]
    assert [c.split("?")[0] for c in github.calls].count(f"POST /repos/{REPO}/issues/{PR}/comments") == 1
    assert any(c.startswith("PATCH ") for c in github.calls)

    # Bad input, and no token: the job fails with the message in its summary; no comment call.
    calls = len(github.calls)
    (sdk / "schema" / "schema.json").write_text("{", encoding="utf-8")
    _git(sdk, "commit", "-qam", "broken")
    third = runner.run({"token": ""})
    assert third.failed and third.outputs["diff"]["status"] == "2", third.log
    assert "could not run: bad input" in third.summary and "schema/schema.json: /: invalid JSON" in third.summary
    assert "## Post or update the pull-request comment" not in third.log and len(github.calls) == calls


def test_the_workflows_in_the_docs_use_the_action_with_its_inputs() -> None:
    """README's workflow and docs/examples/schema-diff.yml run this action (a checkout of this
    repository beside the SDK's), naming only inputs it has."""
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    workflows = [yaml.safe_load((ROOT / "docs" / "examples" / "schema-diff.yml").read_text(encoding="utf-8"))]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    workflows += [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "jobs:" in block]
    assert len(workflows) == 2
    for workflow in workflows:
        [job] = workflow["jobs"].values()
        [step] = [s for s in job["steps"] if "acp-codegen" in s.get("uses", "")]
        assert set(step.get("with", {})) <= set(action["inputs"]), step
        assert workflow["permissions"]["pull-requests"] == "write"  # the comment
        checkout = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
        assert checkout, job["steps"]


def test_a_run_that_names_no_base_branch_fails_at_once(tmp_path: Path) -> None:
    """Outside a pull request (a push), github.base_ref is empty: the diff step says what to set."""
    (tmp_path / "temp").mkdir()
    runner = Runner(ROOT, tmp_path, tmp_path / "temp", {"github.base_ref": "", "github.token": "", "api": ""})
    steps = runner.action["runs"]["steps"]
    runner.action["runs"]["steps"] = [s for s in steps if s.get("id") == "diff"]
    done = runner.run({})
    assert done.failed and "::error::no base-ref" in done.log, done.log
