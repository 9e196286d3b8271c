"""Sessions: generate, check, tests, lint, bench, schema_diff. ``nox -s tests`` is what CI runs."""

from __future__ import annotations

import nox
import nox.command

nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "venv"


def _install(session: nox.Session, *extras: str) -> None:
    session.install("-e", f".[{','.join(extras)}]" if extras else ".")


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate ``generated/`` from ``schema/`` and ``templates/``."""
    _install(session)
    session.run("acp-codegen", "generate", *session.posargs)


@nox.session
def check(session: nox.Session) -> None:
    """Fail (with a diff) when ``generated/`` is not what ``generate`` would write."""
    _install(session)
    session.run("acp-codegen", "check", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite. ``nox -s tests -- --update-goldens`` rewrites the golden files."""
    _install(session, "test")
    # `-m ""` lifts pyproject's `-m "not slow"`: the full-upstream renders, installs and
    # cross-process runs run here (and so in CI); a bare local `pytest` leaves them out.
    # A `-m` in posargs comes later and wins.
    session.run("pytest", "-m", "", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on everything; mypy --strict on the generator, the generated package and the example agent."""
    _install(session, "lint", "test")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", "codegen", "tests", "noxfile.py", "examples")
    session.run("mypy", "--strict", "codegen", "generated", "examples")


# The official Python SDK, the baseline of benchmarks S1/S2: pinned, and installed into the
# bench environment only (never a dependency of the tool or of the generated package).
SDK_PIN = "agent-client-protocol==0.12.1"


@nox.session
def bench(session: nox.Session) -> None:
    """Performance ratios, each against a baseline measured in the same run."""
    _install(session, "test")
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
