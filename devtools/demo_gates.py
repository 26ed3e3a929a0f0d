"""The demo's gates: one real OpenSSH server on the demo nodes' loopback boot addresses,
and stand-in tools that print recorded outputs, as the machine at that address would.

The worker runs every gate check over SSH to the node's boot address (validation/ssh.py).
The demo nodes' boot addresses are 127.20.<rack>.<10 + slot> (inventory/demo.py), all
loopback on Linux; sshd listens on exactly those addresses (never 0.0.0.0), on
CORRAL_DEMO_SSH_PORT. A stand-in tells the machines apart by the address the connection
came in on (the third field of $SSH_CONNECTION), so gpu-r02-08 prints a faulty gpu-burn
and the others a clean one. The outputs are constructed from the recordings in
tests/fixtures/tool_outputs (the 8xH100 nvidia-smi query and gpu-burn's OK and FAULTY
runs) with each node's own GPU serials and UUIDs, the ones its BMC shows too.

Nothing here needs Django: run.py and the test call it before or beside the server.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from inventory.demo import FAULTY_GPU, FAULTY_NODE, GPUS_PER_NODE, DemoNode, demo_nodes
from tests.peers.sshd import sshd_config
from validation.parsers.gpu_burn import parse_gpu_burn

SSHD = Path("/usr/sbin/sshd")
ROOT = Path(__file__).resolve().parent.parent
RECORDINGS = ROOT / "tests" / "fixtures" / "tool_outputs"
STAND_IN_PREFIX = "corral-demo-"
TOOLS = ("smi-csv", "kernel-log", "gpu-burn")
# The soak: seconds, not the hours a real burn-in takes.
SOAK_SECONDS = 2
SOAK_REPEAT = 2


@dataclass(frozen=True)
class DemoSSH:
    """Where the demo's sshd listens and what the worker logs in with."""

    workdir: Path
    port: int

    @property
    def client_key(self) -> Path:
        return self.workdir / "client"

    @property
    def username(self) -> str:
        return getpass.getuser()

    def tool(self, name: str) -> str:
        return str(self.workdir / "bin" / f"{STAND_IN_PREFIX}{name}")

    def worker_env(self) -> dict[str, str]:
        """What the worker needs to reach the demo machines' sshd."""
        return {
            "CORRAL_SSH_PORT": str(self.port),
            "CORRAL_SSH_USER": self.username,
            "CORRAL_SSH_KEY_PATH": str(self.client_key),
        }


def sshd_available() -> bool:
    return os.access(SSHD, os.X_OK)


def _keygen(path: Path) -> None:
    """Made once and kept: the gates pin each node's host key after first contact."""
    if path.exists():
        return
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "corral-demo", "-f", str(path)],
        check=True,
        capture_output=True,
    )


def prepare(workdir: Path, port: int) -> tuple[DemoSSH, list[str]]:
    """Keys, sshd_config, recorded outputs and stand-ins; returns the sshd command line."""
    ssh = DemoSSH(workdir, port)
    (workdir / "bin").mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(PermissionError):  # privilege separation dir (as root)
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    _keygen(workdir / "hostkey")
    _keygen(ssh.client_key)
    (workdir / "authorized_keys").write_text(Path(f"{ssh.client_key}.pub").read_text())
    config = sshd_config(workdir, port, listen=tuple(n.ip for n in demo_nodes()))
    write_outputs(workdir / "outputs")
    for tool in TOOLS:
        write_stand_in(Path(ssh.tool(tool)), workdir / "outputs" / tool)
    return ssh, [str(SSHD), "-D", "-e", "-f", str(config)]


def write_stand_in(path: Path, outputs: Path) -> None:
    """Print the output recorded for the address the connection came in on."""
    out = shlex.quote(str(outputs))
    path.write_text(
        "#!/bin/sh\n"
        "# Corral demo stand-in: the output of the machine at the address SSH reached.\n"
        "set -- $SSH_CONNECTION\n"
        f'out={out}/"$3"\n'
        f'[ -f "$out" ] || out={out}/default\n'
        'cat "$out"\n'
    )
    path.chmod(0o755)


def smi_csv(node: DemoNode) -> str:
    """The 8xH100 query recording, GPUs renamed to this node's, ECC clean."""
    lines = (RECORDINGS / "nvidia-smi-query-gpu-8xH100-constructed.csv").read_text().splitlines()
    header = [h.strip() for h in lines[0].split(",")]
    col = {name: header.index(name) for name in header}
    rows = []
    for index, line in enumerate(lines[1 : GPUS_PER_NODE + 1]):
        row = [c.strip() for c in line.split(",")]
        row[col["name"]] = node.gpu_name
        row[col["uuid"]] = node.gpu_uuid(index)
        row[col["serial"]] = node.gpu_serial(index)
        row[col["ecc.errors.uncorrected.volatile.total"]] = "0"
        if node.gpu_model.startswith("H200"):
            row[col["memory.total [MiB]"]] = "143771 MiB"
        rows.append(row)
    return "\n".join(", ".join(r) for r in [header, *rows]) + "\n"


def gpu_burn(node: DemoNode, faulty_gpu: int | None) -> str:
    """gpu-burn on all eight GPUs: each GPU's figures from the OK recording, the faulty
    GPU's from the FAULTY one (its Gflop/s, computation errors and temperature)."""
    ok = parse_gpu_burn((RECORDINGS / "gpu-burn-h100-ok.txt").read_text())
    bad = parse_gpu_burn((RECORDINGS / "gpu-burn-faulty.txt").read_text())

    def figures(gpu: int) -> tuple[float, int, int]:
        source = bad if gpu == faulty_gpu else ok
        return source.gflops[0], source.errors_total[0], source.temps_c.get(0, 60)

    gpus = range(GPUS_PER_NODE)
    lines = [f"GPU {g}: {node.gpu_name} (UUID: {node.gpu_uuid(g)})" for g in gpus]
    lines += ["Using compare file: compare.ptx", "Burning for 120 seconds."]
    for percent in ("50.0", "100.0"):
        done = " - ".join(f"5600 ({figures(g)[0]:.0f} Gflop/s)" for g in gpus)
        errors = " - ".join(
            f"{figures(g)[1] // 2}" + ("  (WARNING!)" if figures(g)[1] else "") for g in gpus
        )
        temps = " - ".join(f"{figures(g)[2]} C" for g in gpus)
        lines.append(f"{percent}%  proc'd: {done}   errors: {errors}   temps: {temps}")
    lines += ["Killing processes with SIGTERM (soft kill)", "done", ""]
    lines.append(f"Tested {GPUS_PER_NODE} GPUs:")
    lines += [f"\tGPU {g}: {'FAULTY' if g == faulty_gpu else 'OK'}" for g in gpus]
    return "\n".join(lines) + "\n"


def write_outputs(outputs: Path) -> None:
    for tool in TOOLS:
        (outputs / tool).mkdir(parents=True, exist_ok=True)
    (outputs / "kernel-log" / "default").write_text("")  # no XID in the kernel log
    for node in demo_nodes():
        faulty = FAULTY_GPU if node.hostname == FAULTY_NODE else None
        (outputs / "smi-csv" / node.ip).write_text(smi_csv(node))
        (outputs / "gpu-burn" / node.ip).write_text(gpu_burn(node, faulty))


def profile_spec(ssh: DemoSSH) -> dict:
    """The demo's default gate profile: the shape of the HGX profile, stand-in commands,
    a soak of seconds."""
    return {
        "name": "demo-hgx",
        "title": "Demo HGX acceptance (stand-in tools, short soak)",
        "version": 1,
        "description": "make run's gates: every check runs over SSH on the node's boot "
        "address; the tools are stand-ins printing recorded outputs (devtools/demo_gates.py).",
        "gpu_models": ["H100-SXM", "H200-SXM"],
        "fabrics": ["ib-400g"],
        "phases": [
            {
                "name": "preflight",
                "checks": [
                    {
                        "name": "gpu-health",
                        "tool": "nvidia-smi-csv",
                        "command": ssh.tool("smi-csv"),
                        "timeout_s": 30,
                        "required": True,
                        "hardware_evidence": True,
                        "thresholds": {"check_driver": True, "ecc_uncorrectable_volatile_max": 0},
                    },
                    {
                        "name": "kernel-xid",
                        "tool": "xid",
                        "command": ssh.tool("kernel-log"),
                        "timeout_s": 30,
                        "required": True,
                        "hardware_evidence": True,
                    },
                ],
            },
            {
                "name": "burn-in",
                "soak": {"duration_s": SOAK_SECONDS, "repeat": SOAK_REPEAT},
                "checks": [
                    {
                        "name": "gpu-burn",
                        "tool": "gpu-burn",
                        "command": ssh.tool("gpu-burn"),
                        "timeout_s": 30,
                        "required": True,
                        "hardware_evidence": True,
                    }
                ],
            },
        ],
    }
