from pathlib import Path

from codegen.pipeline import generate

ROOT = Path(__file__).resolve().parent.parent


def test_committed_package_matches_a_fresh_generation() -> None:
    result = generate(ROOT / "schema", frozenset({"unstable_session_archive"}), ROOT)
    for rel, text in result.files.items():
        assert (ROOT / "generated" / rel).read_text(encoding="utf-8") == text, rel
