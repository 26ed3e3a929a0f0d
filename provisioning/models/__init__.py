from .deployments import BootRequest, Deployment
from .images import Image
from .networks import Subnet

__all__ = ["BootRequest", "Deployment", "Image", "Subnet"]
