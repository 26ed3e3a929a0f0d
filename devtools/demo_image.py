"""The demo's golden image: placeholder artifacts written under .demo/images/ and served
over HTTP on 127.0.0.1 by a child of the supervisor (Python's http.server: a static file
server is all an artifact host is), then published through the real path
(`create_image` + the publish task, which downloads each artifact and checks its sha256).

The bytes are never executed: the demo machines (devtools/demo_machines.py) only read
the kernel line Corral hands them. Their baseline is what the demo machines report (the
kernel in their phone-home, the driver the gates' nvidia-smi shows, the BMC firmware the
emulator shows), so the drift matrix is clean until something really changes.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

NAME = "demo-hgx"
VERSION = "2026.11.1"
KERNEL = "6.8.0-45-generic"  # what the demo machines report booting
BASELINE = {"kernel": KERNEL, "driver": "550.54.15", "firmware": {"BMC": "1.00"}}
ARTIFACTS = {"kernel": "vmlinuz", "initrd": "initrd.img"}


def write_artifacts(directory: Path) -> dict[str, str]:
    """A few KB of deterministic bytes per artifact; returns their sha256 by name."""
    directory.mkdir(parents=True, exist_ok=True)
    shas = {}
    for name, filename in ARTIFACTS.items():
        line = f"Corral demo {name} placeholder ({NAME} {VERSION}); never executed.\n"
        data = (line * (4096 // len(line) + 1)).encode()
        (directory / filename).write_bytes(data)
        shas[name] = hashlib.sha256(data).hexdigest()
    return shas


def server_argv(directory: Path, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "http.server",
        str(port),
        "--bind",
        "127.0.0.1",
        "--directory",
        str(directory),
    ]


def image_fields(base_url: str, shas: dict[str, str]) -> dict:
    base = base_url.rstrip("/")
    return {
        "name": NAME,
        "version": VERSION,
        "kernel_url": f"{base}/{ARTIFACTS['kernel']}",
        "initrd_url": f"{base}/{ARTIFACTS['initrd']}",
        "kernel_sha256": shas["kernel"],
        "initrd_sha256": shas["initrd"],
        "baseline": BASELINE,
    }
