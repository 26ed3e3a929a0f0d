from .bios import BiosRegistry
from .deployments import BootRequest, Deployment, DeploymentStatus
from .hostkeys import NodeHostKey
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
    "NodeHostKey",
    "NodeSensors",
    "SensorSample",
    "Subnet",
]
