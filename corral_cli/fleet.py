"""`corral fleet plan|apply|export`: the fleet as code through the API (docs/cli.md,
docs/fleet-as-code.md). Plan exits 0 with nothing to change and 2 with changes, so a CI
job can tell; apply applies the revision it showed, and Corral refuses it (409) if the
fleet or the files changed in between."""

from __future__ import annotations

import argparse
import json
from pathlib import Path, PurePosixPath
from typing import Any

from . import fleetfiles
from .context import Context
from .errors import ApiError, CorralError

OK, FAILED, CHANGES = 0, 1, 2
SIGNS = {"create": "+", "update": "~", "delete": "-", "decommission": "-"}
PASSWORD_MARKS = ("(stored)", "(given)", "(changed)")


def add_parsers(commands: Any) -> None:
    fleet = commands.add_parser(
        "fleet", help="plan, apply or export the fleet as files", description=__doc__
    )
    verbs = fleet.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, helped in (
        ("plan", "what applying the files would change (exit 0: nothing, 2: changes)"),
        ("apply", "plan, show it, ask, then apply exactly that plan"),
    ):
        one = verbs.add_parser(verb, help=helped, description=helped)
        one.add_argument(
            "-f",
            "--file",
            dest="paths",
            action="append",
            required=True,
            metavar="PATH",
            help="a fleet file, or a folder of them (every .yaml/.yml/.json under it); repeatable",
        )
        one.add_argument(
            "--prune", action="store_true", help="delete (or decommission) what the files omit"
        )
        one.add_argument("--json", action="store_true", help="print Corral's answer as JSON")
        one.set_defaults(run=plan if verb == "plan" else apply)
    applier = verbs.choices["apply"]
    applier.add_argument(
        "--allow-destructive",
        action="store_true",
        help="allow deletes, decommissions and changes to many in-service nodes",
    )
    applier.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    applier.add_argument(
        "--revision",
        default="",
        help="apply only if the plan is still this one (a reviewed plan's revision)",
    )
    applier.add_argument("--commit", default="", help="the commit the files came from")
    applier.add_argument("--path", default="", help="where the files are in the repository")
    exporter = verbs.add_parser(
        "export", help="write today's fleet as files into DIR", description="Today's fleet "
        "as files (sites.yaml, racks.yaml, nodes.yaml), from which a plan changes nothing."
    )  # fmt: skip
    exporter.add_argument("dir", metavar="DIR", help="the folder to write (made if missing)")
    exporter.set_defaults(run=export)


def request_body(ctx: Context, args: argparse.Namespace) -> dict[str, Any]:
    files = fleetfiles.read_files(args.paths)
    secrets = fleetfiles.secrets_for(files, ctx.environ)
    return {"files": files, "secrets": secrets, "prune": bool(args.prune)}


def post(ctx: Context, verb: str, body: dict[str, Any], nothing: str) -> dict[str, Any]:
    """POST /fleet/{verb}/; a refusal's message says that nothing was written."""
    try:
        return ctx.client().post(f"fleet/{verb}/", body)
    except ApiError as exc:
        if exc.status in (400, 409):
            raise FleetRefused(exc, nothing) from None
        raise


class FleetRefused(CorralError):
    def __init__(self, error: ApiError, nothing: str) -> None:
        self.error, self.nothing = error, nothing
        super().__init__(error.detail)

    def lines(self) -> list[str]:
        found = self.error.lines()
        if "nothing was written" not in found[0]:
            found[0] = f"{found[0]} ({self.nothing})"
        return found


def plan(ctx: Context, args: argparse.Namespace) -> int:
    found = post(ctx, "plan", request_body(ctx, args), "nothing was planned")
    ctx.out(json.dumps(found, indent=2) if args.json else plan_text(found))
    return CHANGES if found.get("changes") else OK


def apply(ctx: Context, args: argparse.Namespace) -> int:
    body = request_body(ctx, args)
    found = post(ctx, "plan", body, "nothing was applied")
    if not found.get("changes"):
        if args.json:
            ctx.out(json.dumps({**found, "applied": False, "apply": None}, indent=2))
        else:
            ctx.out(plan_text(found))
            ctx.out("Nothing to change.")
        return OK
    # The plan is shown before anything else: on stdout, or with --json on stderr (stdout
    # is then Corral's answer alone); a script's `--json --yes` shows it only if refused.
    shown = ctx.stderr if args.json else ctx.stdout
    refused = refusal(ctx, args, found)
    if refused or not (args.json and args.yes):
        shown.write(plan_text(found) + "\n")
        shown.flush()
    if refused:
        raise CorralError(f"Nothing was applied: {refused}")
    if not args.yes and not ctx.confirm("Apply?"):
        ctx.note("Nothing was applied.")
        return FAILED
    body.update(
        revision=found["revision"],
        allow_destructive=bool(args.allow_destructive),
        commit=args.commit,
        path=args.path,
    )
    done = post(ctx, "apply", body, "nothing was applied")
    if args.json:
        ctx.out(json.dumps(done, indent=2))
    elif done.get("applied"):
        ctx.out(f"Applied: {counts(done.get('summary') or {})}.")
        ctx.out(f"Revision {done.get('revision')}, recorded as apply {done.get('apply')}.")
    else:
        ctx.out("Nothing to change.")
    return OK


def refusal(ctx: Context, args: argparse.Namespace, found: dict[str, Any]) -> str:
    """Why this plan is not applied without asking Corral (which would refuse it too), or
    the question not asked: "" when it may go on."""
    if args.revision and args.revision != found.get("revision"):
        return (
            f"the plan is now revision {found.get('revision')}, not {args.revision}: the "
            "fleet or the files changed since; review the plan again."
        )
    if found.get("refusals"):
        return "it is refused (the ! refused lines)."
    if found.get("destructive") and not args.allow_destructive:
        return "it is destructive (the ! destructive lines): review it, add --allow-destructive."
    if not args.yes and not ctx.interactive():
        return "no terminal to ask on; review the plan and add --yes."
    return ""


def export(ctx: Context, args: argparse.Namespace) -> int:
    answer = ctx.client().get("fleet/export/")
    folder = Path(args.dir)
    files = answer.get("files") if isinstance(answer, dict) else None
    if not isinstance(files, list):
        raise CorralError("Corral's export answer has no files.")
    for file in files:
        name = PurePosixPath(file["name"])
        if name.is_absolute() or ".." in name.parts or not name.parts:
            raise CorralError(f"Corral sent a file name outside the folder: {file['name']!r}")
        path = folder.joinpath(*name.parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(file["content"], encoding="utf-8")
        except OSError as exc:
            raise CorralError(f"{path}: cannot be written ({exc.strerror or exc})") from None
        ctx.out(str(path))
    return OK


def shown(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str) and value in PASSWORD_MARKS:
        return value
    return json.dumps(value, ensure_ascii=False)


def counts(summary: dict[str, int]) -> str:
    return (
        f"{summary.get('create', 0)} to create, {summary.get('update', 0)} to update, "
        f"{summary.get('delete', 0)} to delete, {summary.get('decommission', 0)} to "
        f"decommission, {summary.get('unchanged', 0)} unchanged"
    )


def plan_text(found: dict[str, Any]) -> str:
    """One line per object (`+` create, `~` update, `-` delete or decommission, with where
    it is in the files), one per changed field of an update, then the summary: the lines
    `manage.py fleet plan` prints."""
    lines = []
    for change in found.get("changes") or []:
        action = change.get("action", "")
        where = f"  ({change['where']})" if change.get("where") else ""
        verb = ": decommission" if action == "decommission" else ""
        lines.append(f"{SIGNS.get(action, '?')} {change.get('object')}{verb}{where}")
        for field in change.get("fields") or [] if action == "update" else []:
            lines.append(f"    {field['name']}: {shown(field['old'])} -> {shown(field['new'])}")
    lines += [f"! kept: {why}" for why in found.get("kept") or []]
    lines += [f"! refused: {why}" for why in found.get("refusals") or []]
    lines += [f"! destructive: {why}" for why in found.get("destructive") or []]
    lines += [
        f"> starts: {work.get('text') or work.get('kind')}" for work in found.get("work") or []
    ]
    lines += [f"> waits: {why}" for why in found.get("waits") or []]
    summary = found.get("summary") or {}
    lines.append(f"Plan: {counts(summary)}. Revision {found.get('revision')}.")
    return "\n".join(lines)
