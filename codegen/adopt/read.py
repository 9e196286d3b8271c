"""Read: the SDK's module as its users see it.

``reader.py`` runs in the SDK's interpreter (``--python``) and describes every public
name; this side turns the description into ``Module``. The same process then answers the
verification corpus, so the module is imported once per run (see ``Session``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import AdoptError
from ..resources import package_data


@dataclass(frozen=True)
class SdkField:
    attr: str
    wire: str
    required: bool
    type: dict[str, Any]  # a reader term
    default: Any = None
    has_default: bool = False
    null_absent: bool = False  # takes None for "not given" though its type has no None


@dataclass(frozen=True)
class SdkName:
    """One public name of the module."""

    name: str
    kind: str  # model, root, enum, alias, class, other
    ref: str = ""  # "module:qualname" of the object (models, enums, classes)
    own: bool = True  # the object's own name is this name (else: a second name for it)
    fields: tuple[SdkField, ...] = ()
    bases: tuple[str, ...] = ()
    mro: tuple[str, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)
    members: tuple[dict[str, Any], ...] = ()
    type: dict[str, Any] | None = None  # alias: its term; root: the root's term
    enum_members: tuple[tuple[str, Any], ...] = ()

    @property
    def is_model(self) -> bool:
        return self.kind in ("model", "root")

    def keys(self) -> frozenset[str]:
        return frozenset(f.wire for f in self.fields)

    def required_keys(self) -> frozenset[str]:
        return frozenset(f.wire for f in self.fields if f.required)


@dataclass(frozen=True)
class Module:
    dotted: str  # package.module
    file: Path
    root: Path  # the source root it is imported from
    names: dict[str, SdkName]
    private: dict[str, SdkName] = field(default_factory=dict)  # its classes without a public name
    # what its top-level imports bind from its own package: name -> (module, name there; "": the module)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)

    def described(self, name: str) -> SdkName | None:
        return self.names.get(name) or self.private.get(name)

    def by_ref(self) -> dict[str, str]:
        """Object ref -> the public name that is its own (first such, in module order)."""
        own = {d.ref: n for n, d in reversed(self.names.items()) if d.ref and d.own}
        return own | {d.ref: n for n, d in reversed(self.names.items()) if d.ref and d.ref not in own}


def _parse(data: dict[str, Any], root: Path) -> Module:
    imported = {name: (source, original) for name, (source, original) in data.get("imported", {}).items()}
    names, private = _names(data["names"]), _names(data.get("private", {}))
    return Module(data["module"], Path(data["file"]), root, names, private, imported)


def _names(described: dict[str, Any]) -> dict[str, SdkName]:
    names = {}
    for name, d in described.items():
        fields = tuple(
            SdkField(
                f["attr"],
                f["wire"],
                f["required"],
                f["type"],
                f.get("default"),
                "default" in f or "factory" in f,
                f.get("null_absent", False),
            )
            for f in d.get("fields", ())
        )
        names[name] = SdkName(
            name=name,
            kind=d["kind"],
            ref=d.get("ref", ""),
            own=d.get("name_is_own", True),
            fields=fields,
            bases=tuple(d.get("bases", ())),
            mro=tuple(d.get("mro", ())),
            config=d.get("config", {}),
            members=tuple(d.get("members", ())),
            type=d.get("root", d.get("type")),
            enum_members=tuple((m[0], m[1]) for m in d.get("members", ()) if d["kind"] == "enum"),
        )
    return names


class Session:
    """A running reader: the description (read when first asked for, so that the caller
    works while the SDK's module imports), then one batch of corpus outcomes, then the
    imports of other modules."""

    def __init__(self, process: subprocess.Popen[str], errors: IO[str], root: Path, dotted: str) -> None:
        self.process, self.errors, self.root, self.dotted = process, errors, root, dotted
        self._module: Module | None = None

    @property
    def module(self) -> Module:
        if self._module is None:
            assert self.process.stdout is not None
            line = self.process.stdout.readline()
            if not line:
                self.process.wait()
                self.errors.seek(0)
                error = self.errors.read().strip().splitlines()
                last = error[-1] if error else f"exit {self.process.returncode}"
                raise AdoptError(f"{self.dotted}: cannot import it: {last}")
            self._module = _parse(json.loads(line), self.root)
        return self._module

    def outcomes(self, messages: Sequence[tuple[str, Any]]) -> list[list[Any]]:
        self.module  # noqa: B018 - the description comes first on the stream
        return list(self._ask(list(messages), "validating the corpus"))

    def imports(self, modules: Sequence[str]) -> dict[str, str]:
        """Each of ``modules`` that does not import beside the module, with the error."""
        return dict(self._ask(list(modules), f"importing {', '.join(modules)}"))

    def _ask(self, request: list[Any], doing: str) -> Any:
        """One JSON line to the reader, one back."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AdoptError(f"{self.dotted}: the reader stopped while {doing}")
        return json.loads(line)


@contextmanager
def reading(
    root: Path, dotted: str, python: str | None = None, names: Sequence[str] | None = None
) -> Iterator[Session]:
    """Import ``dotted`` from ``root`` in ``python`` (default: this interpreter); the
    session describes it (``names`` where given, else its public names) and stays up for
    ``Session.outcomes``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # stderr to a file: an import that writes much there cannot block on a full pipe.
    with package_data("acp_codegen.adopt") as here, tempfile.TemporaryFile("w+", encoding="utf-8") as errors:
        script = here / "reader.py"
        try:
            process = subprocess.Popen(
                [python or sys.executable, "-X", "utf8", str(script), str(root), dotted]
                + ([",".join(names)] if names is not None else []),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                encoding="utf-8",
                cwd=root,
                env=env,
            )
        except OSError as exc:
            raise AdoptError(f"--python {python}: cannot run it: {exc}") from None
        try:
            yield Session(process, errors, root, dotted)
        finally:
            if process.stdin:
                process.stdin.close()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
            if process.stdout:
                process.stdout.close()
