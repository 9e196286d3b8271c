"""``python -m examples.archive_agent [--db PATH] [--page-size N] [--protocol 1|2]``: serve ACP on
stdin/stdout (installed: ``python -m acp_codegen.examples.archive_agent``)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sqlite3
import sys
from pathlib import Path

from . import DEFAULT_DB_NAME
from .agent import SUPPORTED_VERSIONS, ArchiveAgent
from .stdio import Peer, open_stdin, serve
from .store import Store


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.parent if __spec__ else 'examples.archive_agent'}",
        description="Reference ACP agent with session archive support (SQLite storage, JSON-RPC on stdio).",
    )
    parser.add_argument(
        "--db",
        type=Path,
        default=Path(DEFAULT_DB_NAME),
        help=f"SQLite database file, shared safely by several agent processes (default: ./{DEFAULT_DB_NAME})",
    )
    parser.add_argument("--page-size", type=_positive, default=50, help="sessions per session/list page (default: 50)")
    parser.add_argument(
        "--protocol",
        type=int,
        choices=SUPPORTED_VERSIONS,
        help="speak this protocol version only, as an agent written before v2 does (default: both, the client's"
        " choice); `acp-codegen polyfill` bridges a v2 client to it with --protocol 1",
    )
    return parser.parse_args(argv)


async def run(store: Store, page_size: int, versions: tuple[int, ...] = SUPPORTED_VERSIONS) -> None:
    agent = ArchiveAgent(store, Peer(sys.stdout.buffer), page_size, versions)
    watcher = asyncio.create_task(agent.watch())  # archives and deletes by other processes
    try:
        await serve(await open_stdin(), agent.peer, agent.handle)
    finally:
        watcher.cancel()
        await agent.shutdown()
        store.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # stdout carries the protocol; diagnostics go to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="archive-agent: %(levelname)s %(message)s")
    try:
        store = Store(args.db)
    except (sqlite3.Error, OSError, RuntimeError) as exc:
        print(f"archive-agent: cannot use database {args.db}: {exc}", file=sys.stderr)
        return 2
    asyncio.run(run(store, args.page_size, (args.protocol,) if args.protocol else SUPPORTED_VERSIONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
