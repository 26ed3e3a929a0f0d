"""Boot-config rendering for Corral: iPXE, GRUB, cloud-init NoCloud, Kea and dnsmasq.

Pure rendering from plain dataclasses: no database access and no model imports, so the
same code serves the boot endpoints, the DHCP exports and the tests.
"""

from .checks import check_reservations
from .render import (
    CHAIN_SCRIPT_PATH,
    IPXE_SCRIPT_PATH,
    render_cmdline,
    render_dnsmasq,
    render_grub,
    render_ipxe_chain,
    render_ipxe_deploy,
    render_ipxe_local,
    render_ipxe_unknown,
    render_kea,
    render_meta_data,
    render_user_data,
)
from .types import (
    BootImage,
    BootLoaders,
    BootTarget,
    FabricAddress,
    PhoneHome,
    RenderError,
    Reservation,
    Subnet,
)

__all__ = [
    "CHAIN_SCRIPT_PATH",
    "IPXE_SCRIPT_PATH",
    "BootImage",
    "BootLoaders",
    "BootTarget",
    "FabricAddress",
    "PhoneHome",
    "RenderError",
    "Reservation",
    "Subnet",
    "check_reservations",
    "render_cmdline",
    "render_dnsmasq",
    "render_grub",
    "render_ipxe_chain",
    "render_ipxe_deploy",
    "render_ipxe_local",
    "render_ipxe_unknown",
    "render_kea",
    "render_meta_data",
    "render_user_data",
]
