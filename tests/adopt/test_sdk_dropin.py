"""SDK modules switch to acp-codegen with ``acp-codegen adopt`` alone, run from the built
wheel in a virtualenv of their own (docs/sdk-migration.md).

* The official Python SDK, ``agent-client-protocol`` 0.12.1, from its sdist (tests
  included), over upstream ``schema-v1.19.0`` (what its ``acp/schema.py`` was generated
  from): a ``[tool.acp-codegen]`` of ``base-v1``, ``out`` and ``features`` only; adopt
  exits 0, the SDK's own suite gives after it what it gave before, a second run changes no
  byte, ``url`` fields are ``AnyUrl`` as in the SDK, and the table adopt writes is the one
  the migration guide shows (``--update-goldens`` rewrites the guide's block), as is its
  row of the guide's table of every release (tests/adopt/test_sdk_releases.py).
* The SDK's protocol-v2 module (``peers/python-sdk-v2`` of the reference data) over
  ``schema-v2.0.0-alpha.3`` with ``--version 2``: the SDK's own v2 test passes against the
  adopted package, also with the SDK's ``_reserved_tags`` emptied (which fails it on the
  SDK's own module: the catch-all variants refuse known tags by themselves).
* A module bare datamodel-code-generator writes over upstream 2026-11 v1, its numbered
  classes renamed by a small post-processing step, and a module written by hand in
  another style (tests/fixtures/adopt/handwritten: camelCase attributes, its own class
  names, a base class that keeps unknown keys and freezes messages): every public name
  reproduced.

The SDK and its test dependencies are pinned here, installed into this test's virtualenv
only: none is a dependency of the tool or of the generated package.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from support import FIXTURES, ROOT, SHARED_UPSTREAM
from support.reference_data import needs
from support.sdk import (  # noqa: F401  (also what the other SDK tests import from here)
    ENV,
    FEATURE,
    PIP_OFFLINE_FAST,
    SDK_PIN,
    SDK_TEST_PINS,
    adopt,
    repository,
    run,
    the_sdk_sdist,
    tree,
)

# adopt from the wheel over SDK modules other than the one README's command adopts
# (test_sdk_rfd.py: 0.12.1 with the wiring): the ecosystem session's (nox -s ecosystem).
pytestmark = [pytest.mark.slow, pytest.mark.ecosystem]

GUIDE = ROOT / "docs" / "sdk-migration.md"
GUIDE_MARK = "<!-- adopt-table: what `acp-codegen adopt` writes, checked by tests/adopt/test_sdk_dropin.py -->"
# The table of every SDK release in the guide (tests/adopt/test_sdk_releases.py; this
# module's 0.12.1 test writes that release's row).
RELEASES_MARK = "<!-- sdk-releases: each release's row is written by tests/adopt/test_sdk_releases.py -->"
NOT_AT_HAND = "its base tag is not at hand"
# The keys of the repository's table before adopt (the test's own): not adopt's settings.
GIVEN = ("base-v1", "out", "features")
V1_BASE = SHARED_UPSTREAM / "schema-v1.19.0" / "v1"
V2_BASE = SHARED_UPSTREAM / "schema-v2.0.0-alpha.3" / "v2"
NEWEST_V1 = SHARED_UPSTREAM / "2026-11" / "v1" / "schema.unstable.json"
PEER_V2 = SHARED_UPSTREAM.parent / "peers" / "python-sdk-v2"


def reproduced(report: str) -> tuple[int, int]:
    found = re.search(r"^adopt \S+: (\d+) of (\d+) public names reproduced$", report, re.M)
    assert found, report
    return int(found.group(1)), int(found.group(2))


def suite(bin_dir: Path, at: Path, *tests: str) -> dict[str, int]:
    """The SDK's own tests: passed, failed, skipped. A test that failed is run once more
    (the SDK's stdio tests give a fresh interpreter two seconds to start)."""
    run(bin_dir / "python", "-m", "compileall", "-q", "src", cwd=at, check=False)
    # The SDK importable as if installed: its stdio test spawns an agent with a minimal
    # environment (no PYTHONPATH), which must import the module under test too.
    (site,) = (bin_dir.parent / "lib").glob("python*/site-packages")
    installed = site / "sdk-under-test.pth"
    installed.write_text(str(at / "src"), encoding="utf-8")
    env = {**ENV, "PYTHONPATH": str(at / "src")}
    command = (bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider")
    try:
        out = run(*command, *tests, cwd=at, check=False, env=env)
        counts = _counts(out)
        failed = re.findall(r"^FAILED (\S+)", out, re.M)
        if failed:
            fixed = _counts(run(*command, *failed, cwd=at, check=False, env=env)).get("passed", 0)
            counts["passed"] = counts.get("passed", 0) + fixed
            counts["failed"] = counts.get("failed", 0) - fixed
    finally:
        installed.unlink()
    return {k: v for k, v in counts.items() if v}


def steady_suite(venv: Path, at: Path) -> dict[str, int]:
    """The SDK's suite (``suite``: a failed test is run once more), run whole once more where
    a test still failed: the SDK's tests give a turn or a new process one or two seconds,
    which a loaded machine can miss. The run with fewer failures."""
    first = suite(venv, at)
    if not first.get("failed"):
        return first
    second = suite(venv, at)
    return min(first, second, key=lambda counts: counts.get("failed", 0))


def same_results(before: dict[str, int], after: dict[str, int]) -> None:
    """The SDK's suite gave ``after`` what it gave ``before``: the same tests, none failing
    that passed (its stdio tests give a new process two seconds to start, which a loaded
    machine can miss either way; suite() runs a failed test once more)."""
    assert sum(after.values()) == sum(before.values()) and after.get("skipped") == before.get("skipped"), (
        before,
        after,
    )
    assert after.get("failed", 0) <= before.get("failed", 0), (before, after)


def _counts(out: str) -> dict[str, int]:
    """pytest's closing line ("197 passed, 2 skipped in 15.81s"), as counts."""
    lines = re.findall(r"^=* ?(\d+ (?:passed|failed|skipped|errors?)[^\n]*) in [0-9.]+s", out, re.M)
    assert lines, out[-3000:]
    return {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|errors?)", lines[-1])}


def guide_table() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(re.escape(GUIDE_MARK) + r"\n```toml\n(.*?)```", text, re.S)
    assert found, f"docs/sdk-migration.md has no block after {GUIDE_MARK}"
    return found.group(1)


def derived(pyproject: Path) -> str:
    """The settings adopt wrote that are not the defaults: strings in full, a list of up to
    four in full, longer lists and tables by their length."""
    import tomllib  # (Python 3.11 and later, as the SDK's releases)

    table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["acp-codegen"]
    values = {k: v for k, v in table.items() if k not in GIVEN and k != "v1"} | table.get("v1", {})
    shown = []
    for key, value in values.items():
        if isinstance(value, dict) or (isinstance(value, list) and len(value) > 4):
            shown.append(f"`{key}` ({len(value)})")
        else:
            shown.append(f"`{key} = {json.dumps(value)}`")
    return ", ".join(shown)


def counts(found: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in found.items())


def row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def check_row(request: pytest.FixtureRequest, release: str, line: str) -> None:
    """The release's row of the guide's table is ``line`` (``--update-goldens`` writes it)."""
    text = GUIDE.read_text(encoding="utf-8")
    assert RELEASES_MARK in text, f"docs/sdk-migration.md has no table after {RELEASES_MARK}"
    found = re.search(rf"^\| {re.escape(release)} \|.*$", text, re.M)
    if request.config.getoption("--update-goldens"):
        assert found, f"docs/sdk-migration.md's table has no row for {release}"
        GUIDE.write_text(text[: found.start()] + line + text[found.end() :], encoding="utf-8")
        return
    assert found and found.group(0) == line, f"docs/sdk-migration.md's row of {release} is not what the run gave"


def switched_row(
    release: str, sdk: Path, feature: bool, report: str, before: dict[str, int], after: dict[str, int]
) -> str:
    """The guide's row of a release that adopt switched: its base tag (as the module it
    shipped names it), the names, its suite's counts (where it has one), the settings."""
    tag = re.search(r"Schema ref: refs/tags/(\S+)", run("git", "show", "HEAD:src/acp/schema.py", cwd=sdk))
    assert tag, "its acp/schema.py names no upstream tag"
    done, total = reproduced(report)
    results = (counts(before), counts(after)) if before else ("no tests in the sdist", "")
    on = "on" if feature else "off"
    return row(release, tag.group(1), on, f"{done} of {total}", *results, derived(sdk / "pyproject.toml"))


def sdk_adopted(
    venv: Path, at: Path, pin: str, schema: Path, meta: Path, *, feature: bool = True
) -> tuple[Path, str, dict[str, int], str]:
    """The SDK release ``pin`` from its sdist, at ``at``, over the upstream release it was
    generated from (``schema``, ``meta``), and its pyproject.toml as shipped; its own
    suite's counts with its own module; the report of ``acp-codegen adopt`` of its
    ``acp/schema.py`` (run twice)."""
    sdk = the_sdk_sdist(at, venv, pin)
    shipped = (sdk / "pyproject.toml").read_text(encoding="utf-8")
    repository(sdk, version=1, out="src/acp/_generated", schema=schema, meta=meta, feature=feature)
    before = steady_suite(venv, sdk)
    report = adopt(venv, sdk, "src/acp/schema.py", twice=True)
    print(report.splitlines()[0], "|", re.findall(r"^verified: .*$", report, re.M))
    return sdk, shipped, before, report


@needs(V1_BASE / "schema.unstable.json")
def test_the_official_sdk_switches_with_adopt_alone(venv: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    sdk, its_own, before, report = sdk_adopted(
        venv, tmp_path / "sdk", SDK_PIN, V1_BASE / "schema.unstable.json", V1_BASE / "meta.unstable.json"
    )
    assert before.get("passed", 0) > 150, before
    done, total = reproduced(report)
    assert done == total > 250
    # The models, the base class, and the helpers the module imported from acp._deserialize.
    imports = re.findall(
        r"^(?:from|import) (\S+)", (sdk / "src" / "acp" / "schema.py").read_text(encoding="utf-8"), re.M
    )
    assert imports == ["acp._generated.v1.models", "acp._schema_ext", "acp._deserialize", "acp._deserialize"]
    assert "InitializeRequest._coerce_protocol_version" in report  # the SDK's own validator, carried

    after = steady_suite(venv, sdk)
    print(f"the SDK's suite: {before} with its module, {after} adopted")
    same_results(before, after)

    # `format: uri` strings are AnyUrl, as in the SDK: its users read `.url.host`.
    urls = run(
        venv / "python", "-c",
        "from pydantic import AnyUrl; from acp.schema import ElicitationUrlRequestMode as M;"
        " m = M(request_id='r', elicitation_id='e', url='https://example.com/auth');"
        " print(M.model_fields['url'].annotation is AnyUrl, m.url.host)",
        cwd=sdk / "src",
    )  # fmt: skip
    assert urls.split() == ["True", "example.com"]

    # The SDK's own pyproject.toml is kept as it was, comments and order included, but for
    # one line (its ruff leaves the generated package alone); the table that was appended
    # to it, with the version's settings under it, is adopt's.
    pyproject = (sdk / "pyproject.toml").read_text(encoding="utf-8")
    ruff = 'extend-exclude = ["src/acp/_generated"]\n'
    assert pyproject.count(ruff) == 1 and pyproject.replace(ruff, "", 1).startswith(its_own)
    table = pyproject[pyproject.index("[tool.acp-codegen]") :]
    if request.config.getoption("--update-goldens"):
        text = GUIDE.read_text(encoding="utf-8")
        GUIDE.write_text(text.replace(guide_table(), table), encoding="utf-8")
    assert guide_table() == table, "docs/sdk-migration.md shows another table than adopt writes"
    # Its row of the guide's table of every release (test_sdk_releases.py leaves it to this test).
    check_row(request, SDK_PIN.split("==")[1], switched_row(SDK_PIN.split("==")[1], sdk, True, report, before, after))


@needs(PEER_V2, V2_BASE / "schema.unstable.json")
def test_the_sdk_v2_module_switches_and_refuses_known_tags_itself(venv: Path, tmp_path: Path) -> None:
    sdk = tmp_path / "sdk-v2"
    shutil.copytree(PEER_V2 / "acp", sdk / "src" / "acp")
    shutil.copytree(PEER_V2 / "tests", sdk / "tests")
    (sdk / "pyproject.toml").write_text('[project]\nname = "sdk-v2"\nversion = "0"\n', encoding="utf-8")
    repository(
        sdk, version=2, out="src/acp/_generated", schema=V2_BASE / "schema.unstable.json",
        meta=V2_BASE / "meta.unstable.json",
    )  # fmt: skip
    test = "tests/test_v2_schema.py"
    assert suite(venv, sdk, test) == {"passed": 3}

    def without_reserved_tags() -> list[tuple[Path, str]]:
        kept = []
        for path in (
            sdk / "src" / "acp" / "_schema_base.py",
            sdk / "src" / "acp" / "experimental" / "v2" / "_schema_base.py",
        ):
            text = path.read_text(encoding="utf-8")
            emptied = re.sub(r"(_reserved_tags: ClassVar\[[^\n]*\] = )\{.*?\n    \}\n", r"\1{}\n", text, flags=re.S)
            assert emptied != text
            path.write_text(emptied, encoding="utf-8")
            kept.append((path, text))
        return kept

    # The SDK's own module needs its table of reserved tags: emptied, its catch-all takes
    # a malformed known update.
    kept = without_reserved_tags()
    assert suite(venv, sdk, test).get("failed") == 1
    for path, text in kept:
        path.write_text(text, encoding="utf-8")

    report = adopt(venv, sdk, "src/acp/experimental/v2/schema.py", "--version", "2")
    done, total = reproduced(report)
    assert done == total > 300
    # What the module imported from the SDK's package stays importable from it: its base
    # class (from _schema_base) and _deserialize's helpers.
    check = (
        "from acp.experimental.v2._schema_base import BaseModel as Base;"
        " from acp.experimental.v2.schema import BaseModel, coerce_protocol_version, TextContentBlock;"
        " print(BaseModel is Base, issubclass(TextContentBlock, Base), callable(coerce_protocol_version))"
    )
    assert run(venv / "python", "-c", check, cwd=sdk / "src").split() == ["True", "True", "True"]
    assert suite(venv, sdk, test) == {"passed": 3}
    without_reserved_tags()
    assert suite(venv, sdk, test) == {"passed": 3}


# The post-processing step of a module datamodel-code-generator wrote: a numbered class
# takes its tag's name (ContentBlock1 with type "text" -> TextContentBlock) where that is
# free, and the root schema's model goes (acp-codegen generates $defs), as the official
# SDK's script does.
RENAME = r"""
import re, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
starts = {m.group(1): m.start() for m in re.finditer(r"^class (\w+)\(", text, re.M)}
renames = {}
for name in sorted(starts):
    numbered = re.fullmatch(r"([A-Za-z]+?)(\d+)", name)
    body = text[starts[name]:].split("\n\n\n", 1)[0]
    tag = re.search(r"^    \w+: Literal\[['\"]([A-Za-z0-9_]+)['\"]\]", body, re.M)
    if numbered and tag:
        new = "".join(p[:1].upper() + p[1:] for p in re.split(r"[_\W]+", tag.group(1))) + numbered.group(1)
        if new not in starts and new not in renames.values():
            renames[name] = new
for old, new in sorted(renames.items(), key=lambda kv: -len(kv[0])):
    text = re.sub(rf"\b{old}\b", new, text)
text = re.sub(r"\nclass Model\(RootModel\[Any\]\):\n    root: Any\n\n", "\n", text)
open(path, "w", encoding="utf-8").write(text)
print(len(renames))
"""


@needs(NEWEST_V1)
def test_a_module_that_datamodel_code_generator_wrote(venv: Path, tmp_path: Path) -> None:
    sdk = tmp_path / "dmsdk"
    (sdk / "src" / "dmsdk").mkdir(parents=True)
    (sdk / "src" / "dmsdk" / "__init__.py").write_text("", encoding="utf-8")
    schema = json.loads(NEWEST_V1.read_text(encoding="utf-8"))
    (tmp_path / "defs.json").write_text(json.dumps({"$defs": schema["$defs"]}), encoding="utf-8")
    module = sdk / "src" / "dmsdk" / "models.py"
    run(
        venv / "datamodel-codegen", "--input", tmp_path / "defs.json", "--input-file-type", "jsonschema",
        "--output-model-type", "pydantic_v2.BaseModel", "--output", module, cwd=tmp_path,
    )  # fmt: skip
    (tmp_path / "rename.py").write_text(RENAME, encoding="utf-8")
    assert int(run(venv / "python", tmp_path / "rename.py", module, cwd=tmp_path)) > 30
    repository(sdk, version=1, out="src/dmsdk/generated", schema=NEWEST_V1)
    report = adopt(venv, sdk, "src/dmsdk/models.py")
    done, total = reproduced(report)
    assert done == total > 300
    # Its Enum classes stay Enum classes, with datamodel-code-generator's member names.
    check = "from dmsdk.models import Role; print([m.name for m in Role])"
    assert run(venv / "python", "-c", check, cwd=sdk / "src").strip() == "['assistant', 'user']"


@needs(NEWEST_V1)
def test_a_module_written_by_hand_in_another_style(venv: Path, tmp_path: Path) -> None:
    sdk = tmp_path / "client"
    shutil.copytree(FIXTURES / "adopt" / "handwritten", sdk)
    repository(sdk, version=1, out="src/archive_client/generated", schema=NEWEST_V1)
    report = adopt(venv, sdk, "src/archive_client/wire.py", twice=True)
    assert reproduced(report) == (12, 12)
    assert "ArchiveFilter: an Enum of its own" in report
    check = """
import json
from pydantic import ValidationError
from archive_client.wire import ArchiveFilter, ListParams, SessionListing, SessionPage, SessionSummary, Wire
page = SessionListing.model_validate({"sessions": [{"sessionId": "s", "cwd": "/w", "x-vendor": 1}]})
summary = page.sessions[0]
try:
    summary.cwd = "/elsewhere"
    frozen = False
except ValidationError:
    frozen = True
try:
    ListParams(cwd="relative")
    refused = False
except ValidationError:
    refused = True
print(json.dumps({
    "camel": summary.sessionId, "label": summary.label, "wire": summary.to_wire(), "frozen": frozen,
    "refused": refused, "filter": [ListParams(archived="only").archived, ArchiveFilter("only").name],
    "base": issubclass(SessionSummary, Wire), "listing": SessionListing is SessionPage,
}))
"""
    found = json.loads(run(venv / "python", "-c", check, cwd=sdk / "src"))
    assert found == {
        "camel": "s",
        "label": "/w",
        "wire": {"sessionId": "s", "cwd": "/w", "x-vendor": 1},
        "frozen": True,
        "refused": True,
        # upstream 2026-11's filter is open (it keeps unknown values): the field stays a
        # string, and the SDK's Enum a class of its own
        "filter": ["only", "ONLY"],
        "base": True,
        "listing": True,
    }
