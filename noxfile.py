"""Sessions: generate, generate_upstream, check, tests, ecosystem, fetch_data, lint, bench, schema_diff,
lowest_pydantic, mypy_newest.
``nox -s tests`` is what CI runs."""

from __future__ import annotations

from pathlib import Path

import nox
import nox.command
import tomllib

nox.options.sessions = ["tests"]
# uv creates and fills an environment in a few seconds where pip takes half a minute; where
# uv is not installed, nox falls back to the standard venv and pip.
nox.options.default_venv_backend = "uv|venv"


def _install(session: nox.Session, *extras: str, bytecode: bool = False) -> None:
    """The tool, editable, with ``extras``. ``bytecode``: compile the dependencies at install,
    as pip does and uv does only when asked; where PYTHONDONTWRITEBYTECODE is set, every
    process that imports them compiles them again otherwise (0.9 s for the generator). Worth
    it for sessions that start many such processes; a single run is faster without."""
    env = {"UV_COMPILE_BYTECODE": "1"} if bytecode else None
    session.install("-e", f".[{','.join(extras)}]" if extras else ".", env=env)


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate ``generated/`` from ``schema/`` and ``templates/``."""
    _install(session)
    session.run("acp-codegen", "generate", *session.posargs)


@nox.session(name="generate_upstream")
def generate_upstream(session: nox.Session) -> None:
    """Regenerate ``generated_upstream/`` (the package the polyfill's version bridge runs on,
    shipped as ``acp_codegen.upstream``) from upstream's newest v1 and v2 schemas in the
    reference data (``../shared``, or ``nox -s fetch_data``), without upstream's descriptions."""
    _install(session)
    session.run("python", "-m", "acp_codegen.polyfill.upstream", *session.posargs)


@nox.session
def check(session: nox.Session) -> None:
    """Fail (with a diff) when ``generated/`` is not what ``generate`` would write."""
    _install(session)
    session.run("acp-codegen", "check", *session.posargs)


def _pytest(session: nox.Session, marks: str) -> None:
    """pytest over the tests that ``marks`` selects, on every core, from the tests environment."""
    _install(session, "test")
    # Bytecode is written, once, into a tree of the session's own: pytest keeps its rewritten
    # test modules between runs, and the hundreds of processes the suite starts (CLI runs,
    # agents, fresh interpreters) compile nothing twice, where PYTHONDONTWRITEBYTECODE would
    # have each compile all it imports again. No __pycache__ lands in the trees tests compare.
    session.env["PYTHONDONTWRITEBYTECODE"] = ""
    session.env["PYTHONPYCACHEPREFIX"] = str(Path(session.virtualenv.location) / "pycache")
    # On every core (pytest-xdist). loadfile runs each module on one worker, so that its
    # expensive module- and session-scoped fixtures are built once (loadgroup's xdist_group
    # marks do not group under pytest 9 with xdist 3.8); modules go out in collection order,
    # the slowest first (tests/conftest.py). `-- -n 0` runs in one process; a `-m` in posargs
    # comes later and wins.
    # The checkout's own packages compiled before the workers start, so that they do not both.
    packages = ("codegen", "generated", "generated_upstream", "examples")
    session.run("python", "-m", "compileall", "-q", *packages, silent=True)
    session.run("pytest", "-m", marks, "-n", "auto", "--dist", "loadfile", "--no-loadscope-reorder", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite. ``nox -s tests -- --update-goldens`` rewrites the golden files.

    Everything but the ``ecosystem`` tests: the ``slow`` ones too (full-upstream renders,
    installs, cross-process runs), which a bare local ``pytest`` leaves out."""
    _pytest(session, "not ecosystem")


@nox.session
def ecosystem(session: nox.Session) -> None:
    """The tests against the ecosystem's published packages: every release of the official
    SDK adopted with its own suite, agents from npm and PyPI through the conformance kit.
    Downloads are cached; where a registry cannot be reached they skip, saying so."""
    _pytest(session, "ecosystem")


@nox.session(name="fetch_data", venv_backend="none")
def fetch_data(session: nox.Session) -> None:
    """Fetch the tests' reference data (upstream schemas, the RFD, peer code) into
    ``.reference/`` where ``../shared`` is absent: each file from where upstream publishes it,
    checked against ``tests/support/reference.tsv``. Standard library, git and npm only;
    ``nox -s fetch_data -- --help`` lists the options that point each source elsewhere."""
    session.run("python3", "tests/support/reference_data.py", *session.posargs, external=True)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on everything; mypy --strict on the generator, the generated packages and the example agent."""
    _install(session, "lint", "test")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", "codegen", "tests", "noxfile.py", "examples")
    session.run("mypy", "--strict", "codegen", "generated", "generated_upstream", "examples")


# The oldest pydantic the generated package supports (acp_codegen.render.templates.PYDANTIC_MINIMUM;
# a test keeps the two in step). The tests session runs on the newest in range.
LOWEST_PYDANTIC = "2.10.0"
# The newest Python on the machine (pyenv: 3.10 - 3.13); tests/generate/test_upstream.NEWEST_PYTHON.
NEWEST_PYTHON = "3.13"
# pyenv's own interpreter where there is one: its shims run only the versions it has selected.
_PYENV = sorted(Path.home().glob(f".pyenv/versions/{NEWEST_PYTHON}.*/bin/python{NEWEST_PYTHON}"))
# Tests that need only the generated package.
GENERATED_ONLY_TESTS = (
    "tests/generated/test_models.py",
    "tests/generated/test_lenient.py",
    "tests/generated/test_json_types.py",
    "tests/generated/test_wire_fragments.py",
    "tests/generated/test_sdk_style.py",
)


def _test_requirements() -> list[str]:
    project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["project"]
    keep = ("jinja2", "jsonschema-rs", "tomli")  # what acp_codegen.generate.pipeline.load_protocols imports
    runtime = [r for r in project["dependencies"] if r.startswith(keep)]
    return runtime + project["optional-dependencies"]["test"]


@nox.session(name="lowest_pydantic")
def lowest_pydantic(session: nox.Session) -> None:
    """The generated package imported and exercised on the oldest pydantic it supports.

    The generator itself (datamodel-code-generator) needs a newer one, so it is not
    installed: the tests here use ``generated/`` only (the wire property over the fragments
    included; over upstream it needs the generator and runs in the tests session)."""
    if session.venv_backend == "uv":
        # uv's own way to ask for the oldest release a range admits: the range is what the
        # generated package states; a pin would only repeat it.
        session.install("--resolution", "lowest-direct", f"pydantic>={LOWEST_PYDANTIC}")
    else:
        session.install(f"pydantic=={LOWEST_PYDANTIC}")
    session.install(*_test_requirements())
    session.run(
        "python",
        "-c",
        f"import pydantic; print('pydantic', pydantic.VERSION); assert pydantic.VERSION == {LOWEST_PYDANTIC!r}",
    )
    session.run("pytest", *GENERATED_ONLY_TESTS, *session.posargs)


@nox.session(name="mypy_newest", python=str(_PYENV[-1]) if _PYENV else NEWEST_PYTHON)
def mypy_newest(session: nox.Session) -> None:
    """mypy --strict on the newest Python: the generated package, and (with the upstream
    schemas present) a full upstream render."""
    _install(session, "test")
    session.run("mypy", "--strict", "--python-version", NEWEST_PYTHON, "generated")
    session.run("pytest", "tests/generate/test_upstream.py", "-m", "slow", "-k", "mypy", *session.posargs)


# The official Python SDK, the baseline of benchmarks S1/S2: pinned, and installed into the
# bench environment only (never a dependency of the tool or of the generated package).
SDK_PIN = "agent-client-protocol==0.12.1"


@nox.session
def bench(session: nox.Session) -> None:
    """Performance ratios, each against a baseline measured in the same run."""
    _install(session, "test", bytecode=True)
    try:
        session.install(SDK_PIN)
    except nox.command.CommandFailed:
        session.warn(f"could not install {SDK_PIN}: S1 and S2 are skipped")
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session(name="schema_diff")
def schema_diff(session: nox.Session) -> None:
    """Compare the schema at a git ref (default HEAD) with the working tree: ``nox -s schema_diff -- main``."""
    _install(session)
    args = list(session.posargs)
    ref = args.pop(0) if args and not args[0].startswith("-") else "HEAD"
    session.run("acp-codegen", "diff", f"git:{ref}", "schema", *args)
