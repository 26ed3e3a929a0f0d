"""Where a phone-home may come from (issue 36, finding 16).

The token proves the caller was given the node's boot script; the address is checked too,
so a token that leaked (a script read off the wire, a console log) cannot close the deploy
from another machine. The node's addresses are those Corral holds for its interfaces (the
DHCP reservations it exports, provisioning.dhcp): the installed OS phones home from one of
them. Not the addresses boot requests came from: anyone who knows a MAC can ask
/boot/ipxe for it, from anywhere.

- A node none of whose interfaces has an address (a dynamic DHCP pool) has nothing to
  compare with: its phone-home is taken, and the deployment keeps where it came from.
- A NAT or relay between the nodes and Corral: the phone-home comes from its address,
  which CORRAL_PHONE_HOME_RELAYS names; from there any node's is taken.
- The address is core.clientaddr's: behind a trusted proxy, the one that proxy saw.
"""

from __future__ import annotations

from django.conf import settings

from core.clientaddr import in_networks
from inventory.models import NetworkInterface, Node


def node_addresses(node: Node) -> list[str]:
    found = NetworkInterface.objects.filter(node=node, ip__isnull=False)
    return sorted(set(found.values_list("ip", flat=True)))


def refusal(node: Node, address: str | None) -> str | None:
    """Why a phone-home from `address` is refused for `node` (for the operator: it names
    the node and its addresses), or None when it is taken."""
    known = node_addresses(node)
    if not known or address in known:
        return None
    if in_networks(address, settings.CORRAL_PHONE_HOME_RELAYS):
        return None
    return (
        f"phone-home refused from {address or 'an unknown address'}: "
        f"not an address of {node.hostname} ({', '.join(known)})"
    )


def answer(address: str | None) -> str:
    """What the caller is told: the address it came from, nothing of the node."""
    return (
        f"Phone-home refused: {address or 'the address it came from'} is not an address of "
        "the node this token was issued for. A NAT or relay in between must be named in "
        "CORRAL_PHONE_HOME_RELAYS."
    )
