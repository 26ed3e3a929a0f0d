#!/bin/bash
# One prepared run on a lent GPU machine (Corral's field-truth recordings): build the probe,
# run each mode, keep dmesg's new lines after each. Output under $OUT/rec.
set -u
export PATH=$PATH:/usr/local/cuda/bin
R=$OUT/rec; mkdir -p $R
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,pci.bus_id,vbios_version --format=csv; which nvcc; nvcc --version | tail -n 2; } > $R/env.txt 2>&1
cd "$(dirname "$0")" || exit 1
timeout 120 nvcc -O2 -arch=sm_90 -o /tmp/xidprobe xidprobe.cu > $R/nvcc.txt 2>&1; echo "nvcc exit $?" >> $R/nvcc.txt
dmesg > $R/dmesg-0-before.txt 2>&1
n0=$(wc -l < $R/dmesg-0-before.txt)
i=1
for mode in saxpy null-write misaligned trap far-read saxpy; do
  timeout 60 /tmp/xidprobe $mode > $R/run-$i-$mode.stdout 2> $R/run-$i-$mode.stderr; echo $? > $R/run-$i-$mode.exit
  sleep 2
  dmesg > $R/dmesg-full.txt 2>&1
  tail -n +$((n0+1)) $R/dmesg-full.txt > $R/dmesg-$i-after-$mode.txt
  n0=$(wc -l < $R/dmesg-full.txt)
  i=$((i+1))
done
dmesg -T > $R/dmesg-T-final.txt 2>&1
nvidia-smi -q -x > $R/nvidia-smi-q-x-after-faults.xml 2>&1
nvidia-smi -q > $R/nvidia-smi-q-after-faults.txt 2>&1
ls -la $R
