"""User actions on a node, declared once (MAAS-style): the API endpoint, the dashboard
buttons, the bulk bar and the role table all read this registry, so a button is shown
exactly when the API would accept it.

Each app registers its own actions from its `AppConfig.ready()` (NetBox's registry), with
real callables: the Celery task that talks to the hardware, the function that checks the
parameters, the effect another app needs in the starting transaction. So inventory names
no app above it, and adding an action touches only the app that owns it. `checks.py`
refuses to start when the registry and the lifecycle disagree (an event nobody can start,
an action on an unknown event, a name inventory relies on that no app registered).

A lifecycle action names its event; the states where it is allowed come from the
transition table, never from a second list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured

from .lifecycle import states_accepting
from .permissions import ACT


class Task(Protocol):
    """What an action needs of a Celery task: its registered name (stored on the operation,
    so a resend or a republish after a restart finds it)."""

    name: str


# (node, actor, reason) in the transaction that starts the action, after its transition.
Effect = Callable[..., None]


@dataclass(frozen=True)
class Action:
    name: str
    label: str
    order: int  # where its button sits among the others (and in lists of actions)
    event: str | None = None  # lifecycle event applied when the action starts
    states: frozenset[str] = field(default_factory=frozenset)  # for non-lifecycle actions
    task: Task | None = None
    capability: str = ACT
    style: str = "primary"
    confirm: str = ""
    needs_reason: bool = False
    help: str = ""
    # function(params) -> params: checks and normalises the action's parameters before
    # anything changes (raises ValidationError).
    params_validator: Callable[[dict], dict] | None = None
    # (parameter name, function() -> [(value, label)]) for a chooser the dashboard renders
    # next to the button.
    choice_param: tuple[str, Callable[[], list]] | None = None
    # The label of an empty first choice, when the parameter may be left out (recycle:
    # the node's golden image); empty: a choice is required.
    choice_default: str = ""
    # What other apps do when the action starts, in its transaction (the `rma` app opens or
    # closes a case): function(node=, actor=, reason=). Added with `add_effect`.
    effects: tuple[Effect, ...] = ()
    # function(operation, actor) that cancels a running operation of this action
    # (POST /api/v1/operations/{id}/cancel/); without it the action cannot be.
    cancel: Callable[[Any, str], Any] | None = None
    # The node roles it applies to (empty: every role). Imaging, gates and the scheduler
    # are for machines that run jobs (choices.HOST_ROLES), not a rack's power shelves.
    roles: frozenset[str] = frozenset()

    @property
    def allowed_states(self) -> frozenset[str]:
        return states_accepting(self.event) if self.event else self.states

    def fits(self, role: str | None) -> bool:
        return not self.roles or role is None or role in self.roles

    def allows(self, node: Any) -> bool:
        """Whether it may start on `node` as it is: its state, and its role."""
        return node.state in self.allowed_states and self.fits(node.role)

    @property
    def task_name(self) -> str:
        return self.task.name if self.task is not None else ""


# name -> Action, in button order; filled by the apps' ready().
ACTIONS: dict[str, Action] = {}


def register(*actions: Action) -> None:
    """Add an app's actions (from its `ready()`); a name taken twice is a start-up error."""
    for action in actions:
        if action.name in ACTIONS and ACTIONS[action.name] is not action:
            raise ImproperlyConfigured(f"the node action {action.name!r} is registered twice")
        ACTIONS[action.name] = action
    ordered = sorted(ACTIONS.values(), key=lambda a: (a.order, a.name))
    ACTIONS.clear()
    ACTIONS.update((a.name, a) for a in ordered)


def add_effect(name: str, effect: Effect) -> None:
    """Run `effect` when another app's action starts (rma closes a case on decommission)."""
    action = ACTIONS.get(name)
    if action is None:
        raise ImproperlyConfigured(f"no node action {name!r} to add an effect to")
    if effect not in action.effects:
        ACTIONS[name] = replace(action, effects=(*action.effects, effect))


def get_action(name: str) -> Action | None:
    return ACTIONS.get(name)


def label_of(kind: str) -> str:
    """What a person reads for an operation's kind (messages and pages; the API, webhooks,
    filters and URLs keep the kind itself): the action's label, "Power on (bulk)" for a
    bulk or rack action, and another operation's kind (import_nodes, publish_image, admit)
    said in words."""
    action = ACTIONS.get(kind)
    if action is not None:
        return action.label
    bulk_of = kind.removeprefix("bulk_")  # inventory.bulk's aggregate: bulk_<action>
    if bulk_of != kind and bulk_of in ACTIONS:
        return f"{ACTIONS[bulk_of].label} (bulk)"
    return kind.replace("_", " ").capitalize()


def available_actions(state: str, role: str | None = None) -> list[Action]:
    """The actions allowed in `state` (for a node of `role`, when given)."""
    return [a for a in ACTIONS.values() if state in a.allowed_states and a.fits(role)]
