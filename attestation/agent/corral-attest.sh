#!/bin/sh
# corral-attest.sh: Corral's node agent for "trust at join". It proves to Corral which
# TPM the node has and what it booted (a TPM2 quote over PCRs 0-9 plus the UEFI event
# log), then phones home. POSIX sh; written for busybox ash in an initramfs.
#
# Use: run it (`sh corral-attest.sh`, exit 0 = phone-home accepted) or source it and
# call corral_agent_main. It never powers the machine off: that is the caller's job.
# The network must be up first (DHCP done); the agent does not configure interfaces.
#
# What an image needs:
#   * busybox (sh, sed, awk, tr, base64, nc, mkfifo, timeout, wget for https:// only) or the
#     same tools from coreutils;
#   * tpm2-tools 5.x (`tpm2` or the tpm2_* links: createek createak readpublic nvread
#     startauthsession policysecret activatecredential flushcontext quote), its
#     shared libraries, and libtss2-tcti-device.so.0, which libtss2-tctildr dlopen()s
#     (ldd does not list it);
#   * a kernel with the TPM driver (tpm_tis/tpm_crb; built in on Debian) and
#     securityfs, for /sys/kernel/security/tpm0/binary_bios_measurements (the agent
#     mounts securityfs if it is not mounted);
#   * /dev/tpmrm0 (the kernel's resource manager). No /dev/tpmrm0 means no
#     attestation: the agent logs "CORRAL: no TPM" and phones home without the
#     "attestation" key. A TPM2TOOLS_TCTI set by the caller is used instead (tests
#     run the agent on a host against swtpm this way).
#
# Protocol (Corral's side lives in the attestation app):
#   Kernel command line: corral.callback=<URL ending /boot/callback> corral.token=<T>
#   [corral.hostname= corral.image= corral.version=]. Environment variables
#   CORRAL_CALLBACK, CORRAL_TOKEN, CORRAL_HOSTNAME, CORRAL_IMAGE, CORRAL_VERSION
#   override them; CORRAL_WORKDIR (default /tmp/corral-attest) holds the evidence;
#   CORRAL_TPM_DEVICE (default /dev/tpmrm0) names the TPM.
#   1. EK (RSA, default template), a fresh AK (RSA, restricted, rsassa-sha256) and
#      the EK certificate from NV 0x1c00002 (empty when the TPM has none).
#   2. POST <callback minus /callback>/attest, JSON
#        {"token", "ek_public", "ek_certificate", "ak_public"}
#      (base64 of the TPM2B_PUBLIC files tpm2-tools writes, and of the DER cert).
#      200 -> {"nonce": "<hex>", "credential": "<base64 tpm2_makecredential output>"}.
#      4xx -> logged, and the node phones home without attestation (Corral decides).
#   3. tpm2_activatecredential (proves the AK sits in the TPM holding that EK), then
#      tpm2_quote over sha256:0-9 with the nonce as qualifying data.
#   4. POST the callback: {"token", "hostname", "image", "version", "kernel",
#      "facts", "attestation": {"quote", "signature", "pcrs", "eventlog", "secret"}}
#      (all base64). Up to 5 tries, 2 s apart; a 4xx is final.
# HTTP is spoken with nc (HTTP/1.0, one request per connection), not busybox wget:
# wget throws away the body of an error answer, and the evidence (~100 KB with the
# event log) is posted from a file, since wget --post-data is one argv string and a
# NUL would end it. Console lines start with "CORRAL: "; their wording is stable
# (tests and operators grep them).

corral_log() { echo "CORRAL: $*"; }

# Seconds since boot, 10 ms resolution: the timings the agent reports.
corral_now() { cut -d' ' -f1 /proc/uptime; }
corral_since() { awk -v a="$1" -v b="$(corral_now)" 'BEGIN { printf "%.2f", b - a }'; }

# "corral.<name>=<value>" from the kernel command line.
corral_arg() {
    for word in $(cat /proc/cmdline); do
        case "$word" in
            "corral.$1="*) echo "${word#*=}"; return 0 ;;
        esac
    done
    return 1
}

# Minimal JSON string escaping: backslash, double quote, and control characters.
corral_json_str() {
    printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}

# A file as one line of base64 (busybox base64 wraps at 76 columns).
corral_b64() { base64 < "$1" | tr -d '\n'; }

corral_read_first() { [ -r "$1" ] && head -n1 "$1" 2>/dev/null; }

# A string field out of a flat JSON object (the challenge answer); empty if absent.
corral_json_field() {
    tr -d '\n\r' < "$2" | sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\([^\"]*\)\".*/\1/p"
}

# corral_http_post URL BODY_FILE OUT_FILE: POST a JSON file; the answer's body goes to
# OUT_FILE and its status to CORRAL_HTTP_STATUS. Returns 0 on 2xx, 4 on 4xx, 1 else.
corral_http_post() {
    CORRAL_HTTP_STATUS=""
    case "$1" in
        http://*) ;;
        *)  # https: busybox wget (with ssl_client); it keeps no body on an error
            if timeout 30 wget -q -O "$3" --header 'Content-Type: application/json' \
                    --post-file "$2" "$1" 2>"$3.err"; then
                CORRAL_HTTP_STATUS=200; return 0
            fi
            cat "$3.err" > "$3"
            CORRAL_HTTP_STATUS=$(sed -n 's/.*HTTP\/[0-9.]* \([0-9][0-9][0-9]\).*/\1/p' "$3.err")
            case "$CORRAL_HTTP_STATUS" in 4??) return 4 ;; esac
            return 1 ;;
    esac
    rest=${1#http://}
    hostport=${rest%%/*}
    path=${rest#"$hostport"}
    [ -n "$path" ] || path=/
    host=${hostport%:*}
    port=${hostport##*:}
    [ "$port" = "$hostport" ] && port=80
    length=$(wc -c < "$2" | tr -d ' ')
    # The request goes through a FIFO held open until nc exits (the server closed): on
    # stdin EOF busybox nc half-closes the socket, and some servers (granian, hence
    # Corral) then drop the connection without answering.
    rm -f "$3.fifo"
    mkfifo "$3.fifo" || return 1
    timeout 30 nc "$host" "$port" < "$3.fifo" > "$3.raw" 2>"$3.err" &
    nc_pid=$!
    exec 3>"$3.fifo"
    (
        printf 'POST %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: corral-attest/1\r\n' "$path" "$hostport"
        printf 'Content-Type: application/json\r\nContent-Length: %s\r\n' "$length"
        printf 'Connection: close\r\n\r\n'
        cat "$2"
    ) >&3 2>/dev/null  # a subshell: SIGPIPE (nc gone) must not end the agent
    wait "$nc_pid"
    exec 3>&-
    rm -f "$3.fifo"
    CORRAL_HTTP_STATUS=$(head -n1 "$3.raw" | sed -n 's/^HTTP\/[0-9.]* \([0-9][0-9][0-9]\).*/\1/p')
    awk 'b { print; next } { sub(/\r$/, "") } $0 == "" { b = 1 }' "$3.raw" > "$3"
    case "$CORRAL_HTTP_STATUS" in
        2??) return 0 ;;
        4??) return 4 ;;
        "") echo "no HTTP answer from $host:$port $(head -c 200 "$3.err")" > "$3"; return 1 ;;
    esac
    return 1
}

# One tpm2-tools command, quiet. On a caller's TCTI (maybe without a resource manager)
# transient objects are flushed after each, or they would pile up until
# TPM_RC_OBJECT_MEMORY; the context files saved by each command stay loadable.
# /dev/tpmrm0 flushes them itself, and each extra tpm2 run costs time.
corral_tpm() {
    "$@" >/dev/null
    rc=$?
    [ -n "$CORRAL_TPM_FLUSH" ] && tpm2_flushcontext -t >/dev/null 2>&1
    return $rc
}

# The TPM part (steps 1-3). Writes $CORRAL_WORKDIR/attestation.json, the value of the
# callback's "attestation" key, and returns 0; returns 1 (and logs why) otherwise.
corral_attest() {
    challenge_url=$1 token=$2
    # A TCTI set by the caller (tabrmd, swtpm in tests) is used as given; otherwise the
    # kernel's resource manager, and no /dev/tpmrm0 means no TPM.
    CORRAL_TPM_FLUSH=${TPM2TOOLS_TCTI:+1}
    if [ -z "$TPM2TOOLS_TCTI" ]; then
        if [ ! -c "${CORRAL_TPM_DEVICE:-/dev/tpmrm0}" ]; then
            corral_log "no TPM"
            return 1
        fi
        export TPM2TOOLS_TCTI="device:${CORRAL_TPM_DEVICE:-/dev/tpmrm0}"
        grep -q ' /sys/kernel/security ' /proc/mounts ||
            mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
    fi
    cd "$CORRAL_WORKDIR" || return 1
    t0=$(corral_now)
    corral_tpm tpm2_createek -c ek.ctx -G rsa -u ek.pub &&
        corral_tpm tpm2_createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa \
            -u ak.pub -n ak.name -f pem &&
        corral_tpm tpm2_readpublic -c ak.ctx -o ak.tpub ||
        { corral_log "attestation failed: could not create EK/AK"; return 1; }
    corral_tpm tpm2_nvread 0x1c00002 -o ekcert.der 2>/dev/null || : > ekcert.der
    corral_log "timing keys $(corral_since "$t0")"

    {
        printf '{"token": %s, "ek_public": "' "$(corral_json_str "$token")"
        corral_b64 ek.pub
        printf '", "ek_certificate": "'
        corral_b64 ekcert.der
        printf '", "ak_public": "'
        corral_b64 ak.tpub
        printf '"}\n'
    } > challenge.json
    t1=$(corral_now)
    n=0
    while :; do
        n=$((n + 1))
        corral_http_post "$challenge_url" challenge.json challenge.out
        rc=$?
        [ $rc = 0 ] && break
        if [ $rc = 4 ]; then
            corral_log "attestation challenge refused: $(head -c 500 challenge.out)"
            return 1
        fi
        corral_log "attestation challenge attempt $n failed: ${CORRAL_HTTP_STATUS:-no answer} $(head -c 300 challenge.out)"
        [ $n -ge 5 ] && return 1
        sleep 2
    done
    nonce=$(corral_json_field nonce challenge.out)
    corral_json_field credential challenge.out | base64 -d > cred.out 2>/dev/null
    if [ -z "$nonce" ] || [ ! -s cred.out ]; then
        corral_log "attestation failed: no nonce/credential in $(head -c 300 challenge.out)"
        return 1
    fi
    corral_log "timing challenge $(corral_since "$t1")"

    t2=$(corral_now)
    corral_tpm tpm2_startauthsession --policy-session -S s.ctx &&
        corral_tpm tpm2_policysecret -S s.ctx -c e &&
        corral_tpm tpm2_activatecredential -c ak.ctx -C ek.ctx -i cred.out -o secret.out \
            -P "session:s.ctx"
    rc=$?
    tpm2_flushcontext s.ctx >/dev/null 2>&1
    [ $rc = 0 ] || { corral_log "attestation failed: credential activation"; return 1; }
    corral_tpm tpm2_quote -c ak.ctx -l sha256:0,1,2,3,4,5,6,7,8,9 -q "$nonce" -g sha256 \
        -m quote.msg -s quote.sig -o quote.pcrs ||
        { corral_log "attestation failed: tpm2_quote"; return 1; }
    cat /sys/kernel/security/tpm0/binary_bios_measurements > eventlog.bin 2>/dev/null ||
        : > eventlog.bin
    {
        printf '{"quote": "'
        corral_b64 quote.msg
        printf '", "signature": "'
        corral_b64 quote.sig
        printf '", "pcrs": "'
        corral_b64 quote.pcrs
        printf '", "eventlog": "'
        corral_b64 eventlog.bin
        printf '", "secret": "'
        corral_b64 secret.out
        printf '"}'
    } > attestation.json
    corral_log "timing activate+quote $(corral_since "$t2")"
    corral_log "attestation quote made (eventlog $(wc -c < eventlog.bin | tr -d ' ') bytes)"
    return 0
}

# What the node reports about itself, as a JSON object (same keys as Corral's legacy
# test initramfs). The interface is the one holding the default route.
corral_facts() {
    iface=${CORRAL_IFACE:-$(ip route show default 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n1)}
    iface=${iface:-eth0}
    mac=$(corral_read_first "/sys/class/net/$iface/address")
    ipaddr=$(ip -4 -o addr show dev "$iface" 2>/dev/null | sed -n 's/.* inet \([0-9.]*\).*/\1/p' | head -n1)
    cpus=$(grep -c '^processor' /proc/cpuinfo)
    mem_kb=$(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)
    printf '{"mac": %s, "ip": %s' "$(corral_json_str "$mac")" "$(corral_json_str "$ipaddr")"
    printf ', "cpus": %s, "mem_kb": %s' "${cpus:-0}" "${mem_kb:-0}"
    printf ', "serial": %s' "$(corral_json_str "$(corral_read_first /sys/class/dmi/id/product_serial)")"
    printf ', "uuid": %s' "$(corral_json_str "$(corral_read_first /sys/class/dmi/id/product_uuid)")"
    printf ', "vendor": %s' "$(corral_json_str "$(corral_read_first /sys/class/dmi/id/sys_vendor)")"
    printf ', "product": %s' "$(corral_json_str "$(corral_read_first /sys/class/dmi/id/product_name)")"
    printf ', "cmdline": %s}' "$(corral_json_str "$(cat /proc/cmdline)")"
}

# Attest (when there is a TPM), then phone home. Returns 0 once the callback got a 2xx.
corral_agent_main() {
    CORRAL_WORKDIR=${CORRAL_WORKDIR:-/tmp/corral-attest}
    mkdir -p "$CORRAL_WORKDIR" || return 1
    start=$(corral_now)
    callback=${CORRAL_CALLBACK:-$(corral_arg callback)}
    token=${CORRAL_TOKEN:-$(corral_arg token)}
    if [ -z "$callback" ] || [ -z "$token" ]; then
        corral_log "no corral.callback/corral.token on the kernel command line"
        corral_log "phone-home failed"
        return 1
    fi
    hostname=${CORRAL_HOSTNAME:-$(corral_arg hostname || hostname)}
    image=${CORRAL_IMAGE:-$(corral_arg image)}
    version=${CORRAL_VERSION:-$(corral_arg version)}

    rm -f "$CORRAL_WORKDIR/attestation.json"
    # A subshell: the TPM steps cd into the work dir and set variables of their own.
    (corral_attest "${callback%/callback}/attest" "$token")
    (
        cd "$CORRAL_WORKDIR" || exit 1
        printf '{"token": %s, "hostname": %s' "$(corral_json_str "$token")" "$(corral_json_str "$hostname")"
        printf ', "image": %s, "version": %s' "$(corral_json_str "$image")" "$(corral_json_str "$version")"
        printf ', "kernel": %s, "facts": ' "$(corral_json_str "$(uname -r)")"
        corral_facts
        if [ -s attestation.json ]; then
            printf ', "attestation": '
            cat attestation.json
        fi
        printf '}\n'
    ) > "$CORRAL_WORKDIR/callback.json"

    corral_log "phoning home to $callback"
    n=0
    while [ $n -lt 5 ]; do
        n=$((n + 1))
        corral_http_post "$callback" "$CORRAL_WORKDIR/callback.json" "$CORRAL_WORKDIR/callback.out"
        rc=$?
        if [ $rc = 0 ]; then
            corral_log "callback response: $(head -c 300 "$CORRAL_WORKDIR/callback.out")"
            corral_log "timing agent $(corral_since "$start")"
            corral_log "phone-home ok"
            return 0
        fi
        corral_log "callback attempt $n failed: ${CORRAL_HTTP_STATUS:-no answer} $(head -c 300 "$CORRAL_WORKDIR/callback.out")"
        # A 4xx is the server's considered answer (bad or used token): do not hammer it.
        [ $rc = 4 ] && break
        sleep 2
    done
    corral_log "phone-home failed"
    return 1
}

# Executed (not sourced): run the agent. Sourcing only defines the functions.
case "$0" in
    *corral-attest.sh) corral_agent_main; exit $? ;;
esac
