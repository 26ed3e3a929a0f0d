"""RMA pages: the queue (queue.py) and a case with its writes (case.py). Permission is
checked in the views (inventory.views.require, as every page does), never only in
templates."""

from inventory.views import page_links, require, require_somewhere, with_params

__all__ = ["page_links", "require", "require_somewhere", "with_params"]
