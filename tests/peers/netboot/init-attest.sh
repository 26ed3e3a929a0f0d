#!/bin/sh
# /init of the attested-boot test initramfs (inside a UKI; see uefi.py): bring up
# virtio-net by DHCP, then hand over to Corral's node agent
# (attestation/agent/corral-attest.sh, installed as /usr/lib/corral/corral-attest.sh),
# which attests with the TPM and phones home; then power off.
#
# Only platform bring-up lives here: the protocol (command line, facts, evidence,
# phone-home, console markers) is the agent's, exactly as an image would run it.

/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin /etc /run
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mount -t securityfs securityfs /sys/kernel/security
/bin/busybox mount -t tmpfs tmpfs /tmp
/bin/busybox --install -s
exec </dev/console >/dev/console 2>&1
export PATH=/bin:/sbin:/usr/bin:/usr/sbin LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu

log() { echo "CORRAL: $*"; }

shutdown_now() {
    log "powering off"
    sync
    poweroff -f
    sleep 5
    while :; do sleep 60; done  # never let init exit: that panics the kernel
}

log "init started, kernel $(uname -r), uptime $(cut -d' ' -f1 /proc/uptime)"

# Order matters: virtio.ko needs virtio_ring.ko first ("unknown symbol" otherwise).
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
         failover net_failover virtio_net; do
    insmod "/lib/modules/$m.ko" || log "insmod $m failed"
done
n=0
while [ ! -e /sys/class/net/eth0 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
ip link set lo up
ip link set eth0 up

ok=""
n=0
while [ $n -lt 5 ]; do
    n=$((n + 1))
    if udhcpc -i eth0 -n -q -t 5 -T 2 -s /etc/udhcpc.script; then ok=1; break; fi
    log "DHCP attempt $n failed"
done
if [ -z "$ok" ]; then
    log "no DHCP lease"
    log "phone-home failed"
    shutdown_now
fi
hostname "$(sed -n 's/.*corral\.hostname=\([^ ]*\).*/\1/p' /proc/cmdline)" 2>/dev/null

. /usr/lib/corral/corral-attest.sh
corral_agent_main
shutdown_now
