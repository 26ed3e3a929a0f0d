"""RMA pages: the queue (queue.py) and a case with its writes (case.py). Permission is
checked in the views (inventory.web.require, as every page does), never only in
templates."""

from inventory.web import require, require_somewhere

__all__ = ["require", "require_somewhere"]
