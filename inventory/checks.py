"""System checks: production must not run on development secrets; the node actions the
apps register must agree with the lifecycle."""

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register


@register(Tags.security, deploy=True)
def encryption_key_configured(app_configs: object, **kwargs: object) -> list[CheckMessage]:
    if not settings.FIELD_ENCRYPTION_KEYS:
        return [
            Error(
                "FIELD_ENCRYPTION_KEYS is not set: BMC passwords would be encrypted with a "
                "key derived from SECRET_KEY.",
                hint="Set FIELD_ENCRYPTION_KEYS to a Fernet key (see README, Configuration).",
                id="corral.E001",
            )
        ]
    return []


@register()
def node_actions_agree_with_the_lifecycle(
    app_configs: object, **kwargs: object
) -> list[CheckMessage]:
    """The apps register the node actions (inventory/actions.py); the lifecycle and
    inventory's own lists name them. A start-up that finds them apart refuses, naming the
    gap, instead of a button that never shows or an event nothing can start."""
    return [
        Error(problem, hint="inventory/actions.py says how apps register actions.", id=code)
        for code, problem in registry_problems()
    ]


def registry_problems() -> list[tuple[str, str]]:
    from .actions import ACTIONS
    from .bulk_bar import BAR_ACTIONS
    from .cancelling import WHILE_WAITING
    from .lifecycle import EVENTS, REPORTED
    from .operations import STAGGERED

    problems = []
    started = {a.event for a in ACTIONS.values() if a.event}
    for event in sorted(EVENTS - REPORTED - started):
        problems.append(
            ("corral.E020", f"no registered node action starts the lifecycle event {event!r}")
        )
    for action in ACTIONS.values():
        if action.event and action.event not in EVENTS:
            problems.append(
                (
                    "corral.E021",
                    f"node action {action.name!r} names no lifecycle event: {action.event!r}",
                )
            )
        elif action.event in REPORTED:
            problems.append(
                (
                    "corral.E021",
                    f"node action {action.name!r} starts {action.event!r}, an "
                    "event only work reports (lifecycle.REPORTED)",
                )
            )
        if not action.allowed_states:
            problems.append(("corral.E022", f"node action {action.name!r} is allowed nowhere"))
        if action.task is not None and not isinstance(getattr(action.task, "name", None), str):
            problems.append(("corral.E023", f"node action {action.name!r}: task has no name"))
    relied_on = {*BAR_ACTIONS, *WHILE_WAITING, *STAGGERED}
    for name in sorted(relied_on - set(ACTIONS)):
        problems.append(
            ("corral.E024", f"inventory relies on a node action {name!r} no app registered")
        )
    return problems
