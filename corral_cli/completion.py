"""`corral completion bash`: a bash completion script, written from the parser itself, so
it lists every command and option there is. Load it with
`source <(corral completion bash)`, or save it under
~/.local/share/bash-completion/completions/corral."""

from __future__ import annotations

import argparse
from typing import Any

SCRIPT = """\
# bash completion for corral (corral completion bash)
_corral_words() {
    case "$1" in
%(cases)s
    esac
}
_corral() {
    local cur="${COMP_WORDS[COMP_CWORD]}" path="" word i
    local commands="|%(paths)s|"
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${COMP_WORDS[i]}"
        if [[ "$commands" == *"|${path:+$path }$word|"* ]]; then
            path="${path:+$path }$word"
        fi
    done
    local words
    words="$(_corral_words "$path")"
    local options="${words#*;}" children="${words%%%%;*}"
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    elif [[ -n "$children" ]]; then
        COMPREPLY=($(compgen -W "$children" -- "$cur"))
    else
        COMPREPLY=()  # a file, a hostname, a value: bash's own completion (-o default)
    fi
}
complete -o default -F _corral corral
"""


def add_parsers(commands: Any) -> None:
    completion = commands.add_parser(
        "completion", help="print a shell completion script", description=__doc__
    )
    completion.add_argument("shell", choices=["bash"])
    completion.set_defaults(run=completion_command)


def children(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def options(parser: argparse.ArgumentParser) -> list[str]:
    return [flag for action in parser._actions for flag in action.option_strings]


def choices(parser: argparse.ArgumentParser) -> list[str]:
    """The fixed values of its positional arguments (`completion bash`)."""
    return [
        str(choice)
        for action in parser._actions
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction)
        for choice in action.choices or []
    ]


def walk(parser: argparse.ArgumentParser, path: str = "") -> list[tuple[str, list, list]]:
    below = children(parser)
    found = [(path, sorted(below) or choices(parser), options(parser))]
    for name, sub in below.items():
        found += walk(sub, f"{path} {name}".strip())
    return found


def bash(parser: argparse.ArgumentParser) -> str:
    entries = walk(parser)
    cases = "\n".join(
        f'        "{path}") echo "{" ".join(kids)};{" ".join(flags)}" ;;'
        for path, kids, flags in entries
    )
    paths = "|".join(path for path, _, _ in entries)
    return SCRIPT % {"cases": cases, "paths": paths}


def completion_command(ctx: Any, args: argparse.Namespace) -> int:
    ctx.stdout.write(bash(args.parser))
    return 0
