"""Guest-side pieces of the QEMU network-boot peer (see tests/peers/qemu.py).

init.sh and udhcpc.script are copied verbatim into the test initramfs; artifacts.py
builds that initramfs next to Debian's kernel and serves both to the guest over HTTP.
"""
