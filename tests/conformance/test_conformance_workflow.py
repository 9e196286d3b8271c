"""The example workflow in docs/examples/acp-conformance.yml, run step by step (its shell
commands, not GitHub): against the reference agent the job passes and writes the JUnit
report; against a broken agent the kit's step fails the job, and the upload step (the one
step that runs after a failure) still finds the report, with the failure in it.

The GitHub-hosted actions and the two install steps are the only steps not run: the test
runs this checkout's acp-codegen, and the agents need no install.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from support import ROOT, run_script

WORKFLOW = ROOT / "docs" / "examples" / "acp-conformance.yml"
NOT_RUN = ("actions/checkout@", "actions/setup-python@", "actions/upload-artifact@")


def _run_job(workspace: Path, agent: list[str]) -> tuple[bool, str, list[dict[str, str]]]:
    """(failed, log, the upload steps' inputs that would have run), as GitHub runs the job:
    bash -eo pipefail per step, the job's env with ${{ runner.temp }}, `if: always()`."""
    [job] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"].values()
    runner_temp = workspace / "runner-temp"
    runner_temp.mkdir()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),  # the agent is this checkout's examples/archive_agent
        **{k: str(v).replace("${{ runner.temp }}", str(runner_temp)) for k, v in job["env"].items()},
        "AGENT_COMMAND": " ".join(agent),  # what the copy of the workflow sets
    }
    failed, log, uploads = False, [], []
    for number, step in enumerate(job["steps"]):
        condition = step.get("if")
        assert condition in (None, "always()"), f"the test does not evaluate if: {condition}"
        if failed and condition is None:
            continue
        if "uses" in step:
            assert step["uses"].startswith(NOT_RUN), step["uses"]
            if step["uses"].startswith("actions/upload-artifact@"):
                assert step["with"]["path"] == job["env"]["REPORT"]  # the file the kit writes
                uploads.append(step["with"])
            continue
        if step["name"].startswith("Install "):
            assert step["run"].startswith("python -m pip install ")
            continue
        done = run_script(workspace / f"step-{number}.sh", step["run"], workspace, env, timeout=300)
        log.append(f"## {step['name']}: exit {done.returncode}\n{done.stdout}{done.stderr}")
        failed = failed or done.returncode != 0
    return failed, "\n".join(log), uploads


def test_the_job_passes_the_reference_agent_and_uploads_its_report(tmp_path):
    agent = [sys.executable, "-m", "examples.archive_agent", "--db", str(tmp_path / "agent.sqlite3")]
    failed, log, [upload] = _run_job(tmp_path, agent)
    assert not failed, log
    # With the kit's defaults: pagination is checked (page size 50); the reference agent's
    # turns end at once, so active-archive is skipped, saying so (a skip does not fail).
    assert re.search(r"^27 passed, 0 failed, 3 skipped", log, re.M), log
    assert "PASS  v1  pagination" in log and "SKIP  v1  active-archive" in log
    report = ET.parse(tmp_path / upload["path"]).getroot()
    assert [s.get("name") for s in report] == ["acp-conformance.v1", "acp-conformance.v2"]


def test_a_failed_scenario_fails_the_job_and_the_report_is_still_uploaded(tmp_path):
    broken = ROOT / "tests" / "agents" / "broken_agent.py"
    agent = [sys.executable, str(broken), "unknown-id", "--db", str(tmp_path / "agent.sqlite3")]
    failed, log, [upload] = _run_job(tmp_path, agent)
    assert failed and "## Run the conformance kit: exit 1" in log, log
    failures = ET.parse(tmp_path / upload["path"]).getroot().findall("./testsuite/testcase/failure")
    assert {f.get("message") for f in failures} == {
        "session/archive of an unknown id: expected error -32002, got a result"
    }
