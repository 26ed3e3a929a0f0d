#!/bin/sh
# /init of the Corral test initramfs: bring up e1000 by DHCP, phone home once, power off.
#
# The kernel command line (from Corral's iPXE script) carries
#   corral.callback=<URL> corral.token=<TOKEN>
# and optionally corral.image=, corral.version=, corral.hostname=.
# Markers on the serial console ("CORRAL: ...") are what the test harness reads;
# keep their wording stable.

/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin /etc /run
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox --install -s
# The kernel found no /dev/console in the archive, so init started without stdio.
exec </dev/console >/dev/console 2>&1

log() { echo "CORRAL: $*"; }

shutdown_now() {
    log "powering off"
    sync
    poweroff -f
    sleep 5
    # Never let init exit: that panics the kernel and the VM would hang until killed.
    while :; do sleep 60; done
}

# Pull "corral.<name>=<value>" out of the kernel command line.
arg() {
    for word in $(cat /proc/cmdline); do
        case "$word" in
            "corral.$1="*) echo "${word#*=}"; return 0 ;;
        esac
    done
    return 1
}

# Minimal JSON string escaping: backslash, double quote, and control characters.
json_str() {
    printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}

read_first() { [ -r "$1" ] && head -n1 "$1" 2>/dev/null; }

log "init started, kernel $(uname -r)"
# The second stage of a stateless boot: this same script, as the root image's /init.
stage2=""
[ -e /etc/corral-root ] && stage2=1 && log "running from the root image: $(cat /etc/corral-root)"

callback=$(arg callback)
token=$(arg token)
if [ -z "$callback" ] || [ -z "$token" ]; then
    log "no corral.callback/corral.token on the kernel command line"
    log "phone-home failed"
    shutdown_now
fi
image=$(arg image || echo "corral-netboot-test")
version=$(arg version || echo "0")
hostname=$(arg hostname || echo "corral-netboot")
hostname "$hostname"

module=$(find /lib/modules -name e1000.ko | head -n1)
[ -z "$stage2" ] && { insmod "$module" || log "insmod $module failed"; }
n=0
while [ ! -e /sys/class/net/eth0 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
ip link set lo up
ip link set eth0 up

# A static address where the command line gives one in the kernel's own form (Corral's
# virtual-media ISO on a network with no DHCP): ip=<client>::<gateway>:<netmask>:<host>::off[:<dns0>[:<dns1>]]
static=""
for word in $(cat /proc/cmdline); do
    case "$word" in ip=*:*) static="${word#ip=}" ;; esac
done
ok=""
[ -n "$stage2" ] && ok=1  # the network the first stage brought up is still up
if [ -z "$ok" ] && [ -n "$static" ]; then
    client=$(echo "$static" | cut -d: -f1)
    gateway=$(echo "$static" | cut -d: -f3)
    netmask=$(echo "$static" | cut -d: -f4)
    dns=$(echo "$static" | cut -d: -f8)
    if [ -n "$client" ] && ifconfig eth0 "$client" netmask "$netmask" up; then
        [ -n "$gateway" ] && route add default gw "$gateway"
        [ -n "$dns" ] && echo "nameserver $dns" > /etc/resolv.conf
        log "static address $client (ip=), no DHCP"
        ok=1
    fi
fi
n=0
while [ -z "$ok" ] && [ $n -lt 5 ]; do
    n=$((n + 1))
    if udhcpc -i eth0 -n -q -t 5 -T 2 -s /etc/udhcpc.script; then ok=1; break; fi
    log "DHCP attempt $n failed"
done
if [ -z "$ok" ]; then
    log "no DHCP lease"
    log "phone-home failed"
    shutdown_now
fi

# The boot cannot go on: say so on the console and to Corral (the deploy fails with it).
report_failure() {
    log "$1"
    body="{\"token\": $(json_str "$token"), \"hostname\": $(json_str "$hostname")"
    body="$body, \"failed\": $(json_str "$1")}"
    timeout 15 wget -q -O /tmp/response --header 'Content-Type: application/json' \
        --post-data "$body" "$callback" && log "failure reported: $(head -c 200 /tmp/response)"
    log "phone-home failed"
    shutdown_now
}

# A stateless image: fetch the root image, check it, run it from RAM (stateless.py).
root_url=$(arg root || true)
if [ -n "$root_url" ] && [ -z "$stage2" ]; then
    want=$(arg root_sha256 || true)
    log "fetching the root image $root_url"
    if ! wget -q -O /run/root.squashfs "$root_url"; then
        report_failure "root image download failed: $root_url"
    fi
    got=$(sha256sum /run/root.squashfs | cut -d' ' -f1)
    if [ "$got" != "$want" ]; then
        report_failure "root image sha256 mismatch: got $got, want $want"
    fi
    for m in loop squashfs overlay; do
        insmod "$(find /lib/modules -name "$m.ko" | head -n1)" || log "insmod $m failed"
    done
    mkdir -p /run/ro /run/rw /newroot
    mount -t squashfs -o loop,ro /run/root.squashfs /run/ro \
        && mount -t tmpfs -o size=64m tmpfs /run/rw \
        && mkdir -p /run/rw/upper /run/rw/work \
        && mount -t overlay overlay \
            -o lowerdir=/run/ro,upperdir=/run/rw/upper,workdir=/run/rw/work /newroot \
        || report_failure "root image could not be mounted"
    # The node's own files (its name, where it phones home), rendered by Corral for it.
    body="{\"token\": $(json_str "$token")}"
    if timeout 15 wget -q -O /run/node.tgz --header 'Content-Type: application/json' \
            --post-data "$body" "${callback%/callback}/overlay" \
            && tar -xzf /run/node.tgz -C /newroot; then
        log "node overlay laid over the root image"
    else
        report_failure "the node overlay could not be fetched"
    fi
    log "root image $got mounted under an overlay on tmpfs; switching to it"
    exec switch_root /newroot /init
fi

mac=$(read_first /sys/class/net/eth0/address)
ipaddr=$(ip -4 -o addr show dev eth0 | sed -n 's/.* inet \([0-9.]*\).*/\1/p' | head -n1)
cpus=$(grep -c '^processor' /proc/cpuinfo)
mem_kb=$(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)
facts="{\"mac\": $(json_str "$mac"), \"ip\": $(json_str "$ipaddr")"
facts="$facts, \"cpus\": ${cpus:-0}, \"mem_kb\": ${mem_kb:-0}"
facts="$facts, \"serial\": $(json_str "$(read_first /sys/class/dmi/id/product_serial)")"
facts="$facts, \"uuid\": $(json_str "$(read_first /sys/class/dmi/id/product_uuid)")"
facts="$facts, \"vendor\": $(json_str "$(read_first /sys/class/dmi/id/sys_vendor)")"
facts="$facts, \"product\": $(json_str "$(read_first /sys/class/dmi/id/product_name)")"
facts="$facts, \"etc_hostname\": $(json_str "$(read_first /etc/hostname)")"
facts="$facts, \"root\": $(json_str "$(awk '$2 == "/" {fs = $3} END {print fs}' /proc/mounts)")"
facts="$facts, \"disks\": $(json_str "$(ls /sys/block | grep -v -e '^loop' -e '^ram' | tr '\n' ' ')")"
facts="$facts, \"cmdline\": $(json_str "$(cat /proc/cmdline)")}"

body="{\"token\": $(json_str "$token"), \"hostname\": $(json_str "$hostname")"
body="$body, \"image\": $(json_str "$image"), \"version\": $(json_str "$version")"
body="$body, \"kernel\": $(json_str "$(uname -r)"), \"facts\": $facts}"

log "phoning home to $callback"
n=0
while [ $n -lt 5 ]; do
    n=$((n + 1))
    if timeout 15 wget -q -O /tmp/response --header 'Content-Type: application/json' \
            --post-data "$body" "$callback" 2>/tmp/wget.err; then
        log "callback response: $(head -c 300 /tmp/response)"
        log "phone-home ok"
        shutdown_now
    fi
    cat /tmp/wget.err
    log "callback attempt $n failed"
    # A 4xx is the server's considered answer (bad or used token): do not hammer it.
    if grep -q 'HTTP/1\.[01] 4[0-9][0-9]' /tmp/wget.err; then break; fi
    sleep 2
done
log "phone-home failed"
shutdown_now
