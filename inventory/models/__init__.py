# Operations and workers are the engine's (engine/models.py); named here for this app's
# callers, which read them with the nodes they act on.
from engine.models import Operation, Worker

from .bmcs import BMC
from .events import LifecycleEvent
from .facts import Fact
from .grants import SiteRole
from .imports import ImportUpload
from .interfaces import NetworkInterface
from .nodes import Label, Node
from .racks import Rack
from .sites import Site

__all__ = [
    "BMC",
    "Fact",
    "ImportUpload",
    "Label",
    "LifecycleEvent",
    "NetworkInterface",
    "Node",
    "Operation",
    "Rack",
    "Site",
    "SiteRole",
    "Worker",
]
