"""Upstream's published releases, recognised by their files, and the stable methods of each:
what the unstable gate follows where a base is one of them and its stable ``meta.json`` is
not at hand (``gates.stable_methods``).

An SDK keeps a release's unstable pair only (the official Python SDK: ``schema/schema.json``
and ``schema/meta.json``), so a release is recognised by that pair: the sha256 of each
file's JSON with its keys sorted and no spaces (a copy reformatted, or checked out with other
line endings, is still the release). ``releases.json`` beside this module holds those digests
and, per side, the names of the release's stable methods: facts, not upstream's files. It is
derived from the reference corpus (``../shared/upstream``, see tests/support) by

    python -m acp_codegen.generate.sdk.releases ../shared/upstream

and tests/generate/test_release_table.py derives it again and compares. The stable listing is a
release's stable ``meta.json``, else the ``x-method`` markers of its stable ``schema.json``.
The corpus's ``history/`` keeps every tag's unstable v1 pair; ``tags/`` the stable ``meta.json``
of every tag that ships a stable/unstable pair, and the ``schema-v*`` tags' unstable pairs of
both versions (its ``index.tsv`` names them). A tag published as one schema alone (before
``v0.7.0``) is recognised, its stable methods not known: it lists none apart. Releases with
the same pair and different stable listings would be ambiguous: their stable methods are then
unknown too.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import importlib.resources
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...protocol.overlay import load_base, meta_path
from .methods import listed

TABLE = "releases.json"
# The corpus's folders that are no release tag, by what they are.
SNAPSHOTS = {".": "main at b7f00054 (2026-08-22)", "2026-11": "@agentclientprotocol/sdk 2.4.0 (npm)"}
_NOT_RELEASES = {"history", "tags", "docs"}
ABOUT = (
    "Derived from the reference corpus by python -m acp_codegen.generate.sdk.releases; not edited by hand."
    " schema, meta: sha256 of a release's unstable schema and meta as JSON, keys sorted, no spaces"
    " (meta null: the release has none); stable: its stable methods by side, null where not known."
)

Key = tuple[str, str | None]  # digests of the schema and of its meta (None: the release has none)


@dataclass(frozen=True)
class Release:
    names: tuple[str, ...]  # the tags (or snapshots) whose unstable pair this is
    stable: frozenset[tuple[str, str]] | None  # (side, wire name); None where not known

    @property
    def label(self) -> str:
        return " = ".join(self.names)


def digest(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _key(schema: Path) -> Key:
    meta = meta_path(schema)
    return digest(schema), digest(meta) if meta.is_file() else None


@functools.cache
def _shipped() -> dict[Key, Release]:
    data = json.loads(importlib.resources.files(__package__).joinpath(TABLE).read_text(encoding="utf-8"))
    return {
        (r["schema"], r["meta"]): Release(
            tuple(r["releases"]),
            None if r["stable"] is None else frozenset((s, w) for s, ws in r["stable"].items() for w in ws),
        )
        for r in data["releases"]
    }


def recognised(base: Path) -> Release | None:
    """The release whose unstable pair the base (and the meta beside it) is, if any."""
    try:
        return _shipped().get(_key(base))
    except (OSError, ValueError):
        return None


# -- deriving the table from the corpus ----------------------------------------------------


def _folders(upstream: Path) -> list[tuple[str, Path, int]]:
    """(name, folder, protocol version) of every corpus folder with a release's stable and
    unstable files side by side."""
    out = []
    for top in sorted(p for p in [upstream, *upstream.iterdir()] if p.is_dir() and p.name not in _NOT_RELEASES):
        name = SNAPSHOTS.get("." if top == upstream else top.name, top.name)
        for folder in sorted(top.glob("v[0-9]*")):
            if (folder / "schema.json").is_file() and (folder / "schema.unstable.json").is_file():
                out.append((name, folder, int(folder.name[1:])))
    return out


def _rows(index: Path) -> list[dict[str, str]]:
    with open(index, encoding="utf-8", newline="") as rows:
        return list(csv.DictReader(rows, delimiter="\t"))


def _tagged(upstream: Path) -> list[tuple[str, Path]]:
    """(tag, folder) of every stable ``meta.json`` in ``tags/`` (``<tag>/v<N>/``): its unstable
    pair is beside it (the ``schema-v*`` tags) or in ``history/<tag>/`` (v1)."""
    index = upstream / "tags" / "index.tsv"
    if not index.is_file():
        return []
    return [
        (row["tag"], upstream / "tags" / row["tag"] / row["version"])
        for row in _rows(index)
        if row["file"] == "meta.json"
    ]


def build(upstream: Path) -> dict[str, Any]:
    """The table, from the corpus at ``upstream``."""
    found: dict[Key, list[tuple[str, frozenset[tuple[str, str]] | None]]] = {}
    for name, folder, version in _folders(upstream):
        stable = listed(load_base(folder / "schema.json", version).meta.data)
        found.setdefault(_key(folder / "schema.unstable.json"), []).append((name, stable))
    history = upstream / "history"
    for tag, folder in _tagged(upstream):
        stable = listed(json.loads((folder / "meta.json").read_text(encoding="utf-8")))
        unstable = folder / "schema.unstable.json"
        found.setdefault(_key(unstable if unstable.is_file() else history / tag / "schema.json"), []).append(
            (tag, stable)
        )
    for row in _rows(history / "releases.tsv"):
        found.setdefault(_key(history / row["tag"] / "schema.json"), []).append((row["tag"], None))
    releases = []
    for (schema, meta), seen in found.items():
        known = {listing for _, listing in seen if listing is not None}
        agreed = known.pop() if len(known) == 1 else None  # none, or two that differ: not known
        releases.append({
            "releases": list(dict.fromkeys(name for name, _ in seen)),
            "schema": schema,
            "meta": meta,
            "stable": None if agreed is None else {
                side: sorted(w for s, w in agreed if s == side) for side in sorted({s for s, _ in agreed})
            },
        })  # fmt: skip
    return {"about": ABOUT, "releases": releases}


def dumps(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1) + "\n"


if __name__ == "__main__":
    out = Path(__file__).with_name(TABLE)
    out.write_text(dumps(build(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/upstream"))), encoding="utf-8")
    print(f"wrote {out}")
