"""Issue 58: the table of upstream's releases that ships in the tool
(``codegen/generate/sdk/releases.json``) is what the reference corpus says, derived again here;
how releases with the same files are told apart or merged; every base the tests generate over
is found in it (or, for a snapshot that no tag holds, named as what it is)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from acp_codegen.generate.sdk.methods import listed
from acp_codegen.generate.sdk.releases import TABLE, build, dumps, recognised
from support import SHARED_UPSTREAM, edit_json
from support.reference_data import require

SHIPPED = Path(__file__).resolve().parents[2] / "codegen" / "generate" / "sdk" / TABLE
V1_19 = SHARED_UPSTREAM / "schema-v1.19.0" / "v1"
V1_21 = SHARED_UPSTREAM / "schema-v1.21.0" / "v1"


def test_the_shipped_table_is_the_corpus_s() -> None:
    require(SHARED_UPSTREAM / "history" / "releases.tsv")
    assert dumps(build(SHARED_UPSTREAM)) == SHIPPED.read_text(encoding="utf-8"), (
        "stale: python -m acp_codegen.generate.sdk.releases ../shared/upstream"
    )


def test_every_history_tag_is_recognised() -> None:
    history = require(SHARED_UPSTREAM / "history")
    tags = [line.split("\t")[0] for line in (history / "releases.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    assert len(tags) > 90
    for tag in tags:
        release = recognised(history / tag / "schema.json")
        assert release is not None and tag in release.names, tag
    # the tag of schema-v1.19.0's commit: the corpus holds its stable meta, so it is known
    release = recognised(history / "v1.4.0" / "schema.json")
    assert release and release.stable == listed(json.loads((V1_19 / "meta.json").read_text(encoding="utf-8")))


def test_every_tag_with_a_stable_meta_is_known_by_it_in_each_version() -> None:
    """tags/ holds the stable meta of every tag that ships a stable/unstable pair: the tag's
    unstable pair (in tags/ for the schema-v* tags, v1 and v2, else in history/) is known with
    the methods that meta lists, whichever of the tags with the same pair the meta is of."""
    tags = require(SHARED_UPSTREAM / "tags")
    rows = [line.split("\t") for line in (tags / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    stable_metas = [(tag, version) for tag, _, _, version, file, _ in rows if file == "meta.json"]
    assert len({tag for tag, _ in stable_metas}) == 55 and ("schema-v1.16.0", "v2") in stable_metas
    for tag, version in stable_metas:
        folder = tags / tag / version
        unstable = folder / "schema.unstable.json"
        release = recognised(unstable if unstable.is_file() else SHARED_UPSTREAM / "history" / tag / "schema.json")
        assert release is not None and tag in release.names, (tag, version)
        assert release.stable == listed(json.loads((folder / "meta.json").read_text(encoding="utf-8"))), (tag, version)
    # the base of the official SDK 0.11.x: session/delete and logout are stable there
    release = recognised(tags / "schema-v1.16.0" / "v1" / "schema.unstable.json")
    assert release and {("agent", "session/delete"), ("agent", "logout")} <= (release.stable or set())


def corpus(at: Path) -> Path:
    """A corpus of its own: two folders with one unstable pair and different stable metas,
    one with another pair, and history tags holding those pairs (two tags the same)."""
    require(V1_19 / "meta.json")
    require(V1_21 / "meta.json")
    for name in ("a", "b", "c"):
        shutil.copytree(V1_19, at / name / "v1")
    for name in ("schema.json", "meta.json"):  # b: the stable files of another release
        shutil.copyfile(V1_21 / name, at / "b" / "v1" / name)
    edit_json(at / "c" / "v1" / "schema.unstable.json", lambda s: s["$defs"]["DeleteSessionRequest"].update(title="c"))
    rows = ["tag\tcommit\tdate\tschema\tmeta"]
    for tag, source in (("t1", "a"), ("t2", "c"), ("t3", "c")):
        (at / "history" / tag).mkdir(parents=True)
        shutil.copyfile(at / source / "v1" / "schema.unstable.json", at / "history" / tag / "schema.json")
        shutil.copyfile(at / source / "v1" / "meta.unstable.json", at / "history" / tag / "meta.json")
        rows.append(f"{tag}\t0\t2026-01-01\tschema/schema.unstable.json\tschema/meta.unstable.json")
    (at / "history" / "releases.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return at


def test_one_pair_with_two_stable_listings_is_ambiguous_and_tags_merge(tmp_path: Path) -> None:
    releases = {tuple(r["releases"]): r["stable"] for r in build(corpus(tmp_path))["releases"]}
    assert set(releases) == {("a", "b", "t1"), ("c", "t2", "t3")}
    assert releases["a", "b", "t1"] is None  # a and b disagree: not known
    stable = json.loads((V1_19 / "meta.json").read_text(encoding="utf-8"))
    assert releases["c", "t2", "t3"] == {
        side: sorted(stable[f"{side}Methods"].values()) for side in ("agent", "client", "protocol")
    }
