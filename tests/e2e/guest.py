"""What the tests that boot a QEMU machine against Corral's production server share: how
the guest reaches the server, and the server's environment for it."""

from __future__ import annotations

from tests.peers.qemu import GUEST_APP_URL

GUEST_APP = GUEST_APP_URL  # how the VM reaches the web server (slirp's guestfwd)


def guest_web_env(**extra: str) -> dict[str, str]:
    """The web server's environment for a guest: its address allowed, /boot/ URLs given
    with it, no gates after phone-home (test_gates.py proves them), and `extra`."""
    return {
        "ALLOWED_HOSTS": "127.0.0.1,localhost,10.0.2.100",
        "CORRAL_BOOT_BASE_URL": GUEST_APP,
        "CORRAL_GATE_ON_PHONE_HOME": "false",
        **extra,
    }
