"""Drift pages: the matrix with its CSV and reimage (matrix.py), the version skew chart
(skew.py), baselines (baselines.py) and the node page's panel (node.py). Roles are checked
here with inventory.views.require, never only in templates."""

from core.web import with_params
from inventory.web import require, require_somewhere

__all__ = ["require", "require_somewhere", "with_params"]
