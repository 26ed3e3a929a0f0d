"""A bulk or chain parent as its children see it when they end (operations.refresh_parent):
its row, read once per process, whether to count the children again yet, and its summary.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from .models import Operation

# A parent's kind and params by id, read once per process: each of a 1,000-node action's
# children reads them when it ends. The kind never changes; a bulk parent's params (its
# nodes and stagger) are written with it, and the plan parents that rewrite theirs
# (inventory.starting, day2.recycle) have a listener, which is all they are read for.
_parents: dict[int, tuple[str | None, dict | None]] = {}


def row(parent_id: int) -> tuple[str | None, dict | None]:
    found = _parents.get(parent_id)
    if found is not None:
        return found
    read = Operation.objects.filter(pk=parent_id).values_list("kind", "params").first()
    if read is None:
        return None, None
    if len(_parents) > 10_000:
        _parents.clear()
    _parents[parent_id] = (read[0], read[1])
    return read[0], read[1]


# A bulk parent's children are counted again at most this often by one process while some
# still run. Each child's end counted all of them: a 13,500-node action read 182 million
# rows, and at 1,000 nodes the counting was a seventh of the worker's CPU. Its end is
# never late: the child that commits last finds none running, and counts.
PARENT_RECOUNT_SECONDS = 1.0
_recounted: dict[int, float] = {}


def recounted_lately(parent_id: int, finished: Sequence[str]) -> bool:
    """Whether this refresh may be left out: children still run, and this process counted
    them less than PARENT_RECOUNT_SECONDS ago (their progress shows a second late)."""
    running = Operation.objects.filter(parent_id=parent_id).exclude(status__in=finished)
    if not running.exists():
        _recounted.pop(parent_id, None)
        return False
    now = time.monotonic()
    if now - _recounted.get(parent_id, float("-inf")) < PARENT_RECOUNT_SECONDS:
        return True
    if len(_recounted) > 10_000:  # parents that ended in another process
        _recounted.clear()
    _recounted[parent_id] = now
    return False


def bulk_summary(succeeded: int, failed: int, skipped: int) -> str:
    """An ended bulk's one line: "2 succeeded, 1 skipped" (failed and skipped only when
    there are any), so a skipped node never reads as a failure."""
    parts = [f"{succeeded} succeeded"]
    if failed:
        parts.append(f"{failed} failed")
    if skipped:
        parts.append(f"{skipped} skipped")
    return ", ".join(parts)
