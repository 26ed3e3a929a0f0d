"""`corral`: Corral's operator command line, a client of its REST API (docs/cli.md).

Exit status, for scripts: 0 done (`fleet plan`: nothing to change), 1 an error (a refusal,
a problem in the files, a usage error, an operation that did not succeed), 2 `fleet plan`
has changes to apply.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn, TextIO

from . import __version__, completion, console, fleet, login, nodes, ops
from .context import Context
from .errors import CorralError, UsageError

OK, FAILED = 0, 1
INTERRUPTED = 130

EPILOG = """\
configuration: `corral login --url URL --token TOKEN`, or CORRAL_URL and CORRAL_TOKEN
exit status: 0 done, 1 error, 2 `fleet plan` has changes
documentation: docs/cli.md"""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is an exception (exit 1, not argparse's 2, which here
    means "the plan has changes") and names the command it is about."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}\n{self.format_usage().rstrip()}")


def build_parser() -> Parser:
    parser = Parser(
        prog="corral",
        description="Corral's operator command line: the fleet as code, nodes, operations. "
        "It talks to Corral's REST API only.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"corral {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (login, fleet, nodes, console, ops, completion):
        module.add_parsers(commands)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run one command; its exit status. The streams and environment default to the
    process's (tests give their own)."""
    ctx = Context(
        stdin=stdin or sys.stdin,
        stdout=stdout or sys.stdout,
        stderr=stderr or sys.stderr,
        environ=os.environ if environ is None else environ,
    )
    parser = build_parser()
    try:
        # --help and --version print through sys.stdout: the command's own stream.
        with contextlib.redirect_stdout(ctx.stdout), contextlib.redirect_stderr(ctx.stderr):
            args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else OK
    except UsageError as exc:
        ctx.note(str(exc))
        return FAILED
    args.parser = parser
    try:
        return args.run(ctx, args)
    except CorralError as exc:
        for line in exc.lines():
            ctx.note(line)
        return FAILED
    except KeyboardInterrupt:
        ctx.note("Interrupted.")
        return INTERRUPTED
    except BrokenPipeError:  # `corral nodes list | head`: the reader has gone
        if ctx.stdout is sys.stdout:
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return FAILED
