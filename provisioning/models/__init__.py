from .bios import BiosRegistry
from .deployments import BootRequest, Deployment, DeploymentStatus
from .images import Image, ImageState
from .networks import Subnet
from .sensors import NodeSensors, SensorSample

__all__ = [
    "BiosRegistry",
    "BootRequest",
    "Deployment",
    "DeploymentStatus",
    "Image",
    "ImageState",
    "NodeSensors",
    "SensorSample",
    "Subnet",
]
