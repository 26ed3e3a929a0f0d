from .bmcs import BMC
from .events import LifecycleEvent
from .facts import Fact
from .grants import SiteRole
from .imports import ImportUpload
from .interfaces import NetworkInterface
from .nodes import Label, Node
from .operations import Operation
from .racks import Rack
from .sites import Site
from .workers import Worker

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
