"""``generated/`` works when copied into another project under another name."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pydantic
from support import ROOT

SCRIPT = r"""
import importlib.util, json, sys
assert importlib.util.find_spec("acp_codegen") is None, "acp_codegen must not be importable here"
from vendored_acp import FEATURES
from vendored_acp.v1.models import ListSessionsRequest, SessionInfo
from vendored_acp.v2.methods import AGENT_METHODS
info = SessionInfo.model_validate({"sessionId": "s", "cwd": "/w", "archived": True})
print(json.dumps({
    "features": sorted(FEATURES),
    "wire": info.model_dump(mode="json", by_alias=True, exclude_unset=True),
    "methods": sorted(AGENT_METHODS),
    "params": AGENT_METHODS["session/archive"].params.__name__,
    "module": ListSessionsRequest.__module__,
}))
"""


def test_vendored_copy_imports_in_a_fresh_interpreter(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "generated", tmp_path / "vendored_acp", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # -I -S: isolated, and no site hooks (the editable install of codegen is one). The
    # interpreter sees only the temp dir and the directory pydantic is installed in.
    site = str(Path(pydantic.__file__).parent.parent)
    prelude = f"import sys; sys.path[:0] = [{str(tmp_path)!r}, {site!r}]"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"{prelude}\n{SCRIPT}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    result = json.loads(proc.stdout)
    assert result == {
        "features": ["unstable_session_archive"],
        "wire": {"sessionId": "s", "cwd": "/w", "archived": True},
        "methods": ["session/archive", "session/list", "session/unarchive"],
        "params": "ArchiveSessionRequest",
        "module": "vendored_acp.v1.models",
    }


def test_generated_code_imports_nothing_but_pydantic_and_itself() -> None:
    # The standard library, pydantic and what pydantic itself requires.
    allowed = set(sys.stdlib_module_names) | {"typing_extensions", "pydantic", "pydantic_core"}
    seen = set()
    for path in sorted((ROOT / "generated").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):  # (local imports too)
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                modules = [node.module or ""]
            else:
                continue
            for module in modules:
                seen.add(module.split(".")[0])
                assert module.split(".")[0] in allowed, f"{path.relative_to(ROOT)} imports {module}"
    assert {"pydantic", "typing"} <= seen
