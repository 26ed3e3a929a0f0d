from .bios import BiosRegistry
from .deployments import BootRequest, Deployment, DeploymentStatus
from .images import Image, ImageState
from .networks import Subnet

__all__ = [
    "BiosRegistry",
    "BootRequest",
    "Deployment",
    "DeploymentStatus",
    "Image",
    "ImageState",
    "Subnet",
]
