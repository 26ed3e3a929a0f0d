"""Metrics settings (docs/metrics.md), read from the environment like the rest of
fleet.settings, which imports everything here."""

from __future__ import annotations

from core.clientaddr import LOOPBACK
from fleet.env import env
from fleet.settings_security import networks_setting

# Who may scrape /metrics: a client (core.clientaddr: behind a trusted proxy, the address
# it forwarded) in one of these networks, or one that bears CORRAL_METRICS_TOKEN as
# "Authorization: Bearer <token>". The default lets a Prometheus on the same host scrape.
CORRAL_METRICS_ALLOW = networks_setting("CORRAL_METRICS_ALLOW", ",".join(LOOPBACK))
CORRAL_METRICS_TOKEN = env.str("CORRAL_METRICS_TOKEN", default="")
# prometheus_client's own variable: the folder where every process of the deployment keeps
# its counters, so a scrape of one web process adds up all of them (core/metrics.py). Read
# here to be refused at start-up when it is not a folder; the library reads it itself.
PROMETHEUS_MULTIPROC_DIR = env.str("PROMETHEUS_MULTIPROC_DIR", default="")

# BMC sensors (provisioning.sensors): how long the per-node history behind the node page's
# chart is kept, and the GPU temperature over which the health policy is told (kind
# thermal, code gpu_over_temperature). 87 °C: NVIDIA's data-centre GPUs slow themselves
# down from about 90 °C (nvidia-smi -q's "GPU Slowdown Temp").
CORRAL_SENSOR_HISTORY_HOURS = env.float("CORRAL_SENSOR_HISTORY_HOURS", default=24.0)
CORRAL_SENSOR_PRUNE_SECONDS = env.float("CORRAL_SENSOR_PRUNE_SECONDS", default=3600.0)
CORRAL_GPU_TEMPERATURE_LIMIT_C = env.float("CORRAL_GPU_TEMPERATURE_LIMIT_C", default=87.0)
