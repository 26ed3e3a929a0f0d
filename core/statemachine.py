"""One small table-driven state machine, for every table of states Corral keeps: the node
lifecycle (inventory/lifecycle.py), RMA cases (rma/workflow.py) and campaigns
(day2/campaign_flow.py). Each module writes its table as rows a person reviews on one
screen and keeps its own writer; this answers the questions every writer and page asks of
a table, the same way, and does the one write that makes racing callers safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import Model

Row = tuple[str, Iterable[str], str]  # (event, the states it leaves, the state it enters)


class Machine:
    def __init__(self, rows: Iterable[Row]):
        self.rows: tuple[tuple[str, tuple[str, ...], str], ...] = tuple(
            (str(event), tuple(str(s) for s in sources), str(target))
            for event, sources, target in rows
        )
        # (from state, event) -> to state
        self.transitions: dict[tuple[str, str], str] = {
            (source, event): target for event, sources, target in self.rows for source in sources
        }
        self.events: tuple[str, ...] = tuple(dict.fromkeys(event for event, _, _ in self.rows))

    def target(self, state: str, event: str) -> str | None:
        return self.transitions.get((state, event))

    def allowed(self, state: str) -> list[str]:
        """The events `state` accepts, in the table's order."""
        return [event for event in self.events if (state, event) in self.transitions]

    def accepting(self, event: str) -> frozenset[str]:
        """The states that accept `event`."""
        return frozenset(src for (src, ev) in self.transitions if ev == event)

    def markdown(self, headers: tuple[str, str, str] = ("event", "from", "to")) -> str:
        """The table as docs show it, in the order it is declared."""
        rows = [f"| {' | '.join(headers)} |", "|---|---|---|"]
        rows += [f"| {e} | {', '.join(sources)} | {t} |" for e, sources, t in self.rows]
        return "\n".join(rows) + "\n"


def write(model: type[Model], pk: Any, field: str, current: str, fields: Mapping[str, Any]) -> bool:
    """The conditional UPDATE ... WHERE <field> = <current> that moves one row: of two
    callers racing from the same state only one moves it, the other gets False and
    refuses (its caller raises its illegal-transition error) instead of overwriting."""
    return bool(model._default_manager.filter(pk=pk, **{field: current}).update(**fields))
