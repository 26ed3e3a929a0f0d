"""Command line entry: ``python -m validation.parsers.cli TOOL FILE``.

Prints the parsed result as JSON on stdout (exit 0). A ParseError prints
``error: <message>`` on stderr and exits 1 without a traceback, because the reader is
an operator looking at a failed acceptance step, not a developer. An unknown tool
exits 2 with the list of valid tools. A Django management command wraps this later.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import PARSERS, ParseError, parse


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code instead of exiting, for testability."""
    parser = argparse.ArgumentParser(
        prog="python -m validation.parsers.cli",
        description="Parse a GPU acceptance tool's output and print it as JSON.",
    )
    parser.add_argument("tool", help=f"one of: {', '.join(PARSERS)}")
    parser.add_argument("file", help="captured output ('-' for stdin)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else 2
    if args.tool not in PARSERS:
        print(
            f"error: unknown tool {args.tool!r}; valid tools: {', '.join(PARSERS)}",
            file=sys.stderr,
        )
        return 2
    try:
        text = _read(args.file)
    except OSError as exc:
        print(f"error: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    try:
        result = parse(args.tool, text)
    except ParseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    json.dump(result.to_dict(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
