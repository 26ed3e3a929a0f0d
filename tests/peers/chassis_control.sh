#!/bin/sh
# Chassis program for ipmi_sim: keeps power and boot device in files and logs calls.
# ipmi_sim runs it as:  chassis_control.sh <state dir> get power boot
#                       chassis_control.sh <state dir> set power 0|1 | set reset 1 |
#                                                      set boot pxe|default|... | set shutdown 1
# "get" prints one "name:value" line per requested item; "set" prints nothing.
dir="$1"; shift
op="$1"; shift
echo "$op $*" >> "$dir/chassis.log"
case "$op" in
  get)
    for item in "$@"; do
      case "$item" in
        power) echo "power:$(cat "$dir/power" 2>/dev/null || echo 0)" ;;
        boot)  echo "boot:$(cat "$dir/boot" 2>/dev/null || echo none)" ;;
      esac
    done ;;
  set)
    while [ $# -ge 2 ]; do
      case "$1" in
        power)    echo "$2" > "$dir/power" ;;
        boot)     echo "$2" > "$dir/boot" ;;
        shutdown) echo 0 > "$dir/power" ;;
        reset)    echo 1 > "$dir/power" ;;
      esac
      shift 2
    done ;;
esac
exit 0
