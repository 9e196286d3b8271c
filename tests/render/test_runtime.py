"""The runtime modules (``codegen/runtime/``): copied into the output as they are, formatted
for the host's style, and referenced by the generated code instead of repeated in it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from acp_codegen.generate.pipeline import BRIDGE_FILES, RUNTIME_FILES, generate
from acp_codegen.protocol.ir import _excluded_tags
from acp_codegen.render.formatting import format_modules
from acp_codegen.render.runtime import render_runtime
from acp_codegen.resources import RUNTIME
from acp_codegen.style import DEFAULT_STYLE, Style
from acp_codegen.write.headers import Inputs, read_stamps, strip_header
from pydantic import AfterValidator, Field, StrictInt, TypeAdapter, ValidationError
from support import ROOT

from generated import _runtime, _shared
from generated.v1 import models as v1


def format_python(source: str, style: Style) -> str:
    return format_modules({"module.py": source}, style)["module.py"]


@pytest.mark.parametrize("name", RUNTIME_FILES)
def test_the_committed_runtime_files_are_the_source_modules_formatted(name: str) -> None:
    package = "generated_upstream" if name in BRIDGE_FILES else "generated"  # (the bridge's: over upstream)
    committed = (ROOT / package / name).read_text(encoding="utf-8")
    source = (ROOT / "codegen" / "runtime" / name).read_text(encoding="utf-8")
    assert strip_header(committed).lstrip("\n") == format_python(source, DEFAULT_STYLE)
    assert f"#   codegen/runtime/{name}\n" in committed


@pytest.mark.parametrize("name", RUNTIME_FILES)
def test_the_runtime_sources_are_kept_in_the_default_layout(name: str) -> None:
    # A run copies them as they are in the default style, so they must be what it would write.
    module = render_runtime(name, Inputs((), (), (), DEFAULT_STYLE, runtime=(name,)).header())
    assert format_python(module, DEFAULT_STYLE) == module, (
        f"codegen/runtime/{name} is not laid out as generated code is by default:"
        " run `black --line-length 88 --target-version py310 codegen/runtime`"
    )


def test_runtime_files_follow_the_style() -> None:
    narrow = Style("ruff", 60)
    files = generate(ROOT / "schema", frozenset(), ROOT, conversions=False, style=narrow).files
    default = (ROOT / "generated" / "_router.py").read_text(encoding="utf-8")
    assert format_python(files["_router.py"], narrow) == files["_router.py"]  # header and all
    assert strip_header(files["_router.py"]) != strip_header(default)
    assert read_stamps(files["_router.py"])[1]  # stamped as every other file


def test_a_runtime_file_digest_follows_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `check` must see an edited runtime module as a changed input.
    (tmp_path / "_runtime.py").write_bytes((RUNTIME / "_runtime.py").read_bytes())
    monkeypatch.setattr("acp_codegen.resources.RUNTIME", tmp_path)
    inputs = Inputs((), (), (), runtime=("_runtime.py",))
    before = inputs.digest()
    (tmp_path / "_runtime.py").write_text("# edited\n", encoding="utf-8")
    assert inputs.digest() != before


def test_one_wire_path_for_router_and_conversions() -> None:
    data = {"archived": "maybe", "items": [{"a": 1}, {"b": 2}]}
    # Union-member tags and indices past the end are not in the input: dropped.
    assert _runtime.wire_path(data, ("archived", "literal['only']")) == ("archived",)
    assert _runtime.wire_path(data, ("items", 1, "Variant", "b")) == ("items", 1, "b")
    assert _runtime.wire_path(data, ("items", 5, "a")) == ("items",)
    # A missing key is named only when the error says it is missing.
    assert _runtime.wire_path(data, ("items", 0, "c")) == ("items", 0)
    assert _runtime.wire_path(data, ("items", 0, "c"), missing=True) == ("items", 0, "c")
    assert not hasattr(_runtime, "_wire_path")


def test_models_reference_the_shared_annotations() -> None:
    # Not-null and the lenient markers are in the field's type, not validators of the class.
    for cls in (v1.SessionInfo, v1.ListSessionsResponse, v1.AgentCapabilities):
        cls.model_rebuild()  # (built on first use: resolve the annotations now)
    assert not v1.SessionInfo.__pydantic_decorators__.field_validators
    assert not v1.SessionInfo.__pydantic_decorators__.model_validators
    info = v1.SessionInfo.model_fields
    assert _runtime.NOT_NULL in info["additional_directories"].metadata
    assert _runtime.SKIP_INVALID_ITEMS_OR_ABSENT in info["additional_directories"].metadata
    assert _runtime.ABSENT_ON_ERROR in info["title"].metadata
    sessions = v1.ListSessionsResponse.model_fields["sessions"]  # required: skip only
    assert _runtime.SKIP_INVALID_ITEMS in sessions.metadata
    # A field whose default is not None carries it (a dropped value leaves that default).
    (own,) = [m for m in v1.AgentCapabilities.model_fields["load_session"].metadata if isinstance(m, _runtime.Lenient)]
    assert (own.absent_on_error, own.skip_invalid_items, own.default) == (True, False, False)
    source = (ROOT / "generated" / "v1" / "models.py").read_text(encoding="utf-8")
    assert "field_validator" not in source and "except ValidationError" not in source


def test_errors_have_one_home() -> None:
    # Defined in _runtime and imported from there; _shared holds only what the schema shapes.
    errors = {name for name, v in vars(_runtime).items() if isinstance(v, type) and issubclass(v, Exception)}
    codes = {name for name in vars(_runtime) if name.isupper() and isinstance(getattr(_runtime, name), int)}
    assert {"JsonRpcError", "ResourceNotFoundError"} <= errors and "INVALID_PARAMS" in codes
    assert not (errors | codes) & set(vars(_shared)), "the errors are re-exported by _shared"
    assert _shared.__all__ == ["MethodSpec"]


def test_not_null_drops_only_the_null_step_of_the_type() -> None:
    adapter = TypeAdapter(Annotated[list[StrictInt] | None, Field(min_length=1), _runtime.NOT_NULL])
    assert adapter.core_schema["type"] == "list"  # X | None without the nullable step, constraints kept
    assert adapter.validate_python([1]) == [1]
    for bad in (None, [], ["1"]):
        with pytest.raises(ValidationError):
            adapter.validate_python(bad)


def test_not_null_over_another_shape_still_rejects_null() -> None:
    # A schema that is not `nullable` (here a function around it) gets the check as a function.
    adapter = TypeAdapter(Annotated[StrictInt | None, AfterValidator(lambda v: v), _runtime.NOT_NULL])
    assert adapter.validate_python(3) == 3
    with pytest.raises(ValidationError, match="may be omitted, but not null"):
        adapter.validate_python(None)


def test_not_one_of_refuses_the_other_variants_tags() -> None:
    adapter = TypeAdapter(Annotated[Any, _runtime.NotOneOf("accept", 1)])
    for fine in ("_custom", "Accept", True, 1.5, None):
        assert adapter.validate_python(fine) == fine  # 1 is no True: JSON types differ
    for known in ("accept", 1):
        with pytest.raises(ValidationError, match="is another variant's tag, not this one's"):
            adapter.validate_python(known)
    assert repr(_runtime.NotOneOf("accept", 1)) == "NotOneOf('accept', 1)"


def _tagged(tag: str, value: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {tag: {"type": "string", "const": value}}, "required": [tag]}


def test_only_upstreams_spelling_of_a_catch_all_is_read() -> None:
    upstream = {"not": {"anyOf": [_tagged("action", "accept"), _tagged("action", "decline")]}}
    assert _excluded_tags(upstream) == {"action": ["accept", "decline"]}
    assert _excluded_tags({"not": {"anyOf": [_tagged("a", "x"), _tagged("b", "y")]}}) == {"a": ["x"], "b": ["y"]}
    for other in (
        {},
        {"not": {"const": "x"}},
        {"not": {"anyOf": []}},
        {"not": {"anyOf": [_tagged("a", "x")], "description": "more than anyOf"}},
        {"not": {"anyOf": [{**_tagged("a", "x"), "required": []}]}},  # an absent tag matches too
        {"not": {"anyOf": [{"properties": {"a": {"enum": ["x"]}}, "required": ["a"]}]}},
        {"not": {"anyOf": [{"properties": {"a": {"const": "x"}, "b": {"const": "y"}}, "required": ["a", "b"]}]}},
        {"not": {"anyOf": [{**_tagged("a", "x"), "minProperties": 2}]}},
    ):
        assert _excluded_tags(other) == {}, other
