"""Drift pages: the matrix with its CSV and reimage (matrix.py), the version skew chart
(skew.py), baselines (baselines.py) and the node page's panel (node.py). Roles are checked
here with inventory.views.require, never only in templates."""

from inventory.views import page_links, require, require_somewhere, with_params

__all__ = ["page_links", "require", "require_somewhere", "with_params"]
