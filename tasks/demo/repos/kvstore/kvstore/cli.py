"""Command line interface: ``kv [--db PATH] COMMAND ...``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .errors import KVError
from .store import Store


def parse_value(text: str, raw: bool = False) -> Any:
    """Values are JSON when they parse as JSON, plain strings otherwise."""
    if raw:
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def format_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kv", description="A tiny key-value store.")
    parser.add_argument(
        "--db",
        default=os.environ.get("KV_DB", "kv.log"),
        help="path of the store's log file (default: $KV_DB or kv.log)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    get = sub.add_parser("get", help="print the value of a key")
    get.add_argument("key")

    set_ = sub.add_parser("set", help="set a key")
    set_.add_argument("key")
    set_.add_argument("value")
    set_.add_argument("-s", "--string", action="store_true", help="store VALUE as a string")

    delete = sub.add_parser("del", help="delete a key")
    delete.add_argument("key")

    keys = sub.add_parser("keys", help="list keys")
    keys.add_argument("--prefix", default="")

    sub.add_parser("dump", help="print every key and value as a JSON object")
    sub.add_parser("compact", help="rewrite the log without dead records")
    return parser


def run(args: argparse.Namespace, store: Store) -> int:
    if args.command == "get":
        if args.key not in store:
            print(f"kv: key not found: {args.key}", file=sys.stderr)
            return 1
        print(format_value(store[args.key]))
    elif args.command == "set":
        store.set(args.key, parse_value(args.value, raw=args.string))
    elif args.command == "del":
        if not store.delete(args.key):
            print(f"kv: key not found: {args.key}", file=sys.stderr)
            return 1
    elif args.command == "keys":
        for key in store.keys(args.prefix):
            print(key)
    elif args.command == "dump":
        print(json.dumps(dict(store.items()), indent=2, sort_keys=True, ensure_ascii=False))
    elif args.command == "compact":
        print(f"dropped {store.compact()} records")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with Store(args.db) as store:
            return run(args, store)
    except KVError as exc:
        print(f"kv: error: {exc}", file=sys.stderr)
        return 1
