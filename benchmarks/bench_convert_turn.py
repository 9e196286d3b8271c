"""R5: a whole realistic v1 turn converted to v2, message by message: the corpus's messages
(``benchmarks/corpus.py``: initialize, authenticate, session/new, the prompts, their
``session/update`` notifications, the permission round, the prompt's response, the cancel)
as JSON-RPC text, each converted by ``convert_message_json`` (text in, text out, with the caller's
``messageId``, ``planId`` and the rest supplied), against parsing and
emitting each message's params or result with the generated v1 models
(``model_validate_json`` + ``model_dump_json``). Both over the package generated over
upstream's 2026-08 pair (``schema.unstable.json``, the archive feature on).

The messages of methods v2 does not have (``fs/*``, ``terminal/*``, ``session/load``,
``session/set_mode``) are not part of the turn on either side; a message the conversion
refuses is left out of both sides too, and the row says how many and why.
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import SAMPLE_S, Ratio, compare
from benchmarks.corpus import FEATURES, ROOT, load
from tests.support.reference_data import missing
from tests.support.upstream_messages import PAIRS, RENAMED_METHODS, SUPPLY, body_of, load_schema, methods

PAIR = "2026-08"
PACKAGE = "acp_bench_turn"


def turn(
    corpus: list[tuple[str, str]], schema: dict[str, Any], v2_schema: dict[str, Any]
) -> list[tuple[str, str, str | None]]:
    """``(v1 type name, message JSON text, method of the request for a response)`` for each
    corpus message whose method v2 has too, ids numbered as a session would."""
    by_type = {name: key for key, name in methods(schema).items()}
    in_v2 = set(methods(v2_schema))
    out: list[tuple[str, str, str | None]] = []
    for number, (name, body) in enumerate(corpus, 1):
        method, kind = by_type[name]
        if (RENAMED_METHODS.get(method, method), kind) not in in_v2:
            continue
        if kind == "response":
            text = f'{{"jsonrpc":"2.0","id":{number},"result":{body}}}'
        elif kind == "request":
            text = f'{{"jsonrpc":"2.0","id":{number},"method":"{method}","params":{body}}}'
        else:
            text = f'{{"jsonrpc":"2.0","method":"{method}","params":{body}}}'
        out.append((name, text, method if kind == "response" else None))
    return out


def _package(out: Path) -> tuple[Any, Any]:
    """The convert module and the v1 models of the package generated over the pair."""
    from acp_codegen.generate.pipeline import generate
    from acp_codegen.resources import BUILTIN_FRAGMENTS, schema_location
    from acp_codegen.write.tree import write_tree

    v1, v2 = PAIRS[PAIR]
    # The fragments the installed tool ships (the checkout's schema/ in the bench session's
    # editable install), as `acp-codegen generate` takes them by default.
    with schema_location(BUILTIN_FRAGMENTS) as fragments:
        write_tree(out / PACKAGE, generate(fragments, FEATURES, ROOT, {1: v1, 2: v2}).files)
    sys.path.insert(0, str(out))
    return importlib.import_module(f"{PACKAGE}.convert"), importlib.import_module(f"{PACKAGE}.v1.models")


def run() -> list[Ratio]:
    v1_path, v2_path = PAIRS[PAIR]
    if not (v1_path.is_file() and v2_path.is_file()):
        print(f"R5   skipped: {missing(v1_path)}")
        return []
    corpus = load()
    messages = turn(corpus, load_schema(v1_path), load_schema(v2_path))
    with tempfile.TemporaryDirectory() as tmp:
        try:
            convert, models = _package(Path(tmp))
        except Exception as error:  # (a generation that fails is the row's result, not the run's end)
            print(f"R5   FAILED: generating over {PAIR}: {type(error).__name__}: {str(error)[:2000]}")
            return [Ratio("R5", "whole v1 turn -> v2: no package", float("inf"), 1.0, 2.0)]
        refused: list[str] = []
        kept: list[tuple[str, str, str | None]] = []
        for name, text, method in messages:
            try:
                convert.convert_message(json.loads(text), source=1, target=2, method=method, supply=SUPPLY)
            except convert.ConversionError as error:
                refused.append(f"{name} {error.pointer or '/'}: {error.reason}")
                continue
            kept.append((name, text, method))
        bodies = [(getattr(models, name), json.dumps(body_of(json.loads(text)))) for name, text, _ in kept]

        def subject() -> None:  # a line of the wire in, a line out, as a proxy converts them
            for _, text, method in kept:
                convert.convert_message_json(text, source=1, target=2, method=method, supply=SUPPLY)

        def baseline() -> None:
            for model, body in bodies:
                model.model_validate_json(body).model_dump_json(by_alias=True, exclude_unset=True)

        left_out = len(corpus) - len(messages)
        what = (
            f"a v1 turn of {len(kept)} corpus messages -> v2 by convert_message_json (parse, convert, emit)"
            f" vs model_validate_json + model_dump_json of each ({left_out} of methods v2 lacks left out"
            + (f", {len(refused)} refused: {'; '.join(refused)}" if refused else "")
            + ")"
        )
        return [compare("R5", what, subject, baseline, target=2.0, repeat=15, sample_s=SAMPLE_S)]
