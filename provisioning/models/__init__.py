from .deployments import BootRequest, Deployment, DeploymentStatus
from .images import Image
from .networks import Subnet

__all__ = ["BootRequest", "Deployment", "DeploymentStatus", "Image", "Subnet"]
