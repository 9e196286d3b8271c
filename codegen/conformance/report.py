"""The run's output: one line per scenario and a summary on stdout, JUnit XML for CI."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..errors import _printable
from .runner import Outcome

LABEL = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP", "auth": "AUTH"}


def line(outcome: Outcome) -> str:
    text = f"{LABEL[outcome.status]}  v{outcome.version}  {outcome.scenario.name:<18} [{outcome.scenario.section}]"
    if outcome.reason:
        text += ": " + _printable(outcome.reason)  # agent-chosen ids: one line each, escaped
    return "\n".join([text, *("      " + part for part in outcome.exchange)])


def summary(outcomes: Sequence[Outcome], seconds: float, notes: Sequence[str] = ()) -> str:
    """The counts, then one line for each thing that limits what they say."""
    counts = Counter(o.status for o in outcomes)
    text = f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"
    if counts["auth"]:
        text += f", {counts['auth']} stopped (authentication required)"
    text += f" in {seconds:.1f}s"
    return "\n".join([text, *(_printable(note) for note in notes)])


def junit(outcomes: Sequence[Outcome], path: Path) -> None:
    """One test suite per protocol version, one test case per scenario."""
    suites = ET.Element("testsuites", name="acp-conformance")
    for version in sorted({o.version for o in outcomes}):
        mine = [o for o in outcomes if o.version == version]
        counts = Counter(o.status for o in mine)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"acp-conformance.v{version}",
            tests=str(len(mine)),
            failures=str(counts["fail"]),
            errors=str(counts["auth"]),
            skipped=str(counts["skip"]),
            time=f"{sum(o.seconds for o in mine):.3f}",
        )
        for outcome in mine:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"acp-conformance.v{version}",
                name=outcome.scenario.name,
                time=f"{outcome.seconds:.3f}",
            )
            if outcome.status == "fail":
                # Escaped like the text output: XML 1.0 cannot hold most control characters.
                failure = ET.SubElement(case, "failure", message=_printable(outcome.reason))
                failure.text = "\n".join([f"RFD section: {outcome.scenario.section}", *outcome.exchange])
            elif outcome.status == "auth":  # the environment's verdict, not the agent's
                ET.SubElement(case, "error", message=_printable(outcome.reason), type="authentication required")
            elif outcome.status == "skip":
                skipped = ET.SubElement(case, "skipped", message=_printable(outcome.reason))
                skipped.text = "\n".join(outcome.exchange) or None
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
