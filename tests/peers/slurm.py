"""A real Slurm cluster on loopback: munged, slurmctld and one slurmd per node, all on
127.0.0.1 with ports of their own, for the Slurm adapter and the exports.

The NodeName lines, topology.conf and gres.conf are Corral's own exports (the pure
renderers in provisioning.slurm_export), with only each slurmd's port and, where Corral
wrote no NodeAddr, 127.0.0.1 added, so every run also proves slurmctld accepts what
Corral writes. Fake GPUs are character devices
(gres.conf refuses plain files); munged runs with its own key and socket, which slurm.conf
names in AuthInfo. The session's cluster is reset between tests (jobs cancelled, nodes
resumed) rather than restarted; `running_slurm` starts a separate one on other files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from provisioning.slurm_export import (
    DEVICE_PREFIX,
    SlurmNode,
    render_gres,
    render_nodes,
    render_topology,
)
from tests.peers.util import LOOPBACK, free_port, stop_process_group, wait_until

SLURMCTLD = "/usr/sbin/slurmctld"
SLURMD = "/usr/sbin/slurmd"
MUNGED = "/usr/sbin/munged"
# The session's three nodes: two racks in one site, as factory nodes would be.
SESSION_NODES = tuple(
    SlurmNode(
        hostname=f"gpu00{i}",
        gpu_model="H100-SXM",
        gpu_count=8,
        cpus=4,
        memory_mb=4096,
        labels=("ib",),
        site="dc1",
        rack="r01" if i < 3 else "r02",
    )
    for i in (1, 2, 3)
)

CONF = """\
ClusterName=corral-test
SlurmctldHost=localhost({host})
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd-%n.pid
SlurmctldLogFile={dir}/log/slurmctld.log
SlurmdLogFile={dir}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
DefMemPerCPU=100
SlurmdParameters=config_overrides
TopologyPlugin=topology/tree
GresTypes=gpu
# A client gives up on an absent controller after ~2 s instead of ~9 (the outage test).
MessageTimeout=3
"""


@dataclass
class SlurmCluster:
    """Handle on a running cluster: its conf, the env its clients need, and helpers."""

    workdir: Path
    conf: Path
    nodes: tuple[str, ...]
    env: dict[str, str]
    controller: subprocess.Popen | None = None
    daemons: dict[str, subprocess.Popen] = field(default_factory=dict)

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            command, capture_output=True, text=True, env=self.env, cwd=self.workdir, timeout=30
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}: {result.stderr or result.stdout}")
        return result

    def sbatch(self, node: str, command: str, wait: bool = True) -> str:
        """Submit `command` on `node`; returns the job id once it runs (wait=True)."""
        job = self.run(
            "sbatch", "--parsable", "-w", node, "-o", "/dev/null", "--wrap", command
        ).stdout.strip()
        if wait:
            wait_until(lambda: self.job_state(job) == "RUNNING", timeout=20, what=f"job {job}")
        return job

    def job_state(self, job: str) -> str:
        return self.run("squeue", "-h", "-j", job, "-o", "%T", check=False).stdout.strip()

    def jobs(self) -> list[str]:
        return self.run("squeue", "-h", "-o", "%i").stdout.split()

    def scancel(self, *jobs: str) -> None:
        if jobs:
            self.run("scancel", *jobs)
            wait_until(lambda: not set(jobs) & set(self.jobs()), timeout=20, what="jobs gone")

    def node_state(self, node: str) -> str:
        out = self.run("scontrol", "show", "node", "-o", node).stdout
        return out.split(" State=", 1)[1].split()[0]

    def states(self) -> dict[str, str]:
        return {node: self.node_state(node) for node in self.nodes}

    def reset(self) -> None:
        """Back to every node IDLE with no job, without restarting anything."""
        self.scancel(*self.jobs())

        def settled() -> bool:
            states = self.states()
            for node, state in states.items():
                # A node UNKNOWN (slurmctld just restarted) waits for its slurmd to register.
                if state != "IDLE" and not state.startswith("UNKNOWN"):
                    self.run("scontrol", "update", f"NodeName={node}", "State=RESUME", check=False)
            return set(states.values()) == {"IDLE"}

        wait_until(settled, timeout=30, interval=0.3, what="every node idle")

    def start_slurmd(self, node: str) -> None:
        log = (self.workdir / "log" / f"slurmd-{node}.out").open("a")
        self.daemons[node] = subprocess.Popen(
            [SLURMD, "-D", "-f", str(self.conf), "-N", node],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self.workdir,
        )
        log.close()

    def restart_slurmd(self, node: str) -> None:
        """Stop and start one node's slurmd (a rebooted machine registering again)."""
        stop_process_group(self.daemons[node])
        self.start_slurmd(node)

    def stop_controller(self) -> None:
        assert self.controller is not None
        stop_process_group(self.controller)
        self.controller = None

    def start_controller(self) -> None:
        log = (self.workdir / "log" / "slurmctld.out").open("a")
        self.controller = subprocess.Popen(
            [SLURMCTLD, "-D", "-f", str(self.conf)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self.workdir,
        )
        log.close()
        wait_until(
            lambda: "is UP" in self.run("scontrol", "ping", check=False).stdout,
            timeout=20,
            what="slurmctld answering",
        )


def _fake_devices(directory: Path, count: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        path = directory / f"nvidia{i}"
        if not path.exists():
            os.mknod(path, 0o666 | 0o020000, os.makedev(1, 3))  # a char device, like /dev/null


def _munged(stack: ExitStack) -> Path:
    """munged with its own key; its socket's directory must be reachable by everyone,
    which pytest's private tmp dirs are not, so it lives in a directory of its own."""
    home = Path(tempfile.mkdtemp(prefix="corral-munge-"))
    stack.callback(shutil.rmtree, home, ignore_errors=True)
    home.chmod(0o755)
    key = home / "munge.key"
    subprocess.run(["mungekey", "-c", "-k", str(key)], check=True, capture_output=True)
    socket = home / "munge.socket"
    proc = subprocess.Popen(
        [
            MUNGED,
            "-F",
            f"--socket={socket}",
            f"--key-file={key}",
            f"--pid-file={home / 'munged.pid'}",
            f"--log-file={home / 'munged.log'}",
            f"--seed-file={home / 'munged.seed'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    stack.callback(stop_process_group, proc)
    wait_until(socket.exists, timeout=10, what="munged socket")
    return socket


def loopback_node_lines(nodes_part: str, ports: dict[str, int]) -> str:
    """Corral's NodeName lines with where each slurmd listens on this host added: its
    port, and 127.0.0.1 where Corral wrote no NodeAddr (one it wrote is kept, so a test
    that gives a node a loopback address sees slurmctld reach the slurmd there)."""
    lines = []
    for line in nodes_part.splitlines():
        if line.startswith("NodeName="):
            name = line.split()[0].removeprefix("NodeName=")
            line += " NodeHostname=localhost"
            if " NodeAddr=" not in line:
                line += f" NodeAddr={LOOPBACK}"
            line += f" Port={ports[name]}"
        lines.append(line)
    return "\n".join(lines) + "\n"


@contextmanager
def running_slurm(
    workdir: Path, nodes_part: str, topology: str, gres: str, names: Sequence[str]
) -> Iterator[SlurmCluster]:
    """Start munged, slurmctld and a slurmd per name on these exports; wait until every
    node is idle; stop only the processes started here, however the block ends."""
    for tool in (SLURMCTLD, SLURMD, MUNGED):
        if not os.access(tool, os.X_OK):
            pytest.fail(f"{tool} not installed: apt-get install slurm-wlm munge (.ci/run does)")
    for sub in ("state", "log", *(f"spool/{n}" for n in names)):
        (workdir / sub).mkdir(parents=True, exist_ok=True)
    devices = workdir / "dev"
    _fake_devices(devices, 64)
    with ExitStack() as stack:
        munge_socket = _munged(stack)
        ports = {name: free_port() for name in names}
        conf = workdir / "slurm.conf"
        conf.write_text(
            CONF.format(
                host=LOOPBACK,
                ctld_port=free_port(),
                slurmd_port=free_port(),
                munge_socket=munge_socket,
                dir=workdir,
            )
            + loopback_node_lines(nodes_part, ports)
            + "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"
        )
        (workdir / "topology.conf").write_text(topology)
        (workdir / "gres.conf").write_text(gres.replace(DEVICE_PREFIX, f"{devices}/nvidia"))
        env = {**os.environ, "SLURM_CONF": str(conf)}
        cluster = SlurmCluster(workdir=workdir, conf=conf, nodes=tuple(names), env=env)
        cluster.start_controller()
        stack.callback(lambda: cluster.controller and stop_process_group(cluster.controller))
        stack.callback(lambda: [stop_process_group(p) for p in cluster.daemons.values()])
        for name in names:
            cluster.start_slurmd(name)
        try:
            wait_until(
                lambda: set(cluster.states().values()) == {"IDLE"},
                timeout=30,
                interval=0.2,
                what="every slurmd registered",
            )
        except TimeoutError:
            log = (workdir / "log" / "slurmctld.log").read_text()[-3000:]
            raise RuntimeError(f"Slurm nodes did not come up: {cluster.states()}\n{log}") from None
        try:
            yield cluster
        finally:
            # Jobs' processes belong to slurmstepd, outside the daemons' groups.
            if cluster.controller is not None and (jobs := cluster.jobs()):
                cluster.run("scancel", *jobs, check=False)


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """One cluster for the session: gpu001-gpu003 in racks r01 (two) and r02 (one)."""
    names = [n.hostname for n in SESSION_NODES]
    with running_slurm(
        tmp_path_factory.mktemp("slurm"),
        render_nodes(SESSION_NODES),
        render_topology(SESSION_NODES),
        render_gres(SESSION_NODES),
        names,
    ) as cluster:
        yield cluster


@pytest.fixture
def slurm_cluster(slurm: SlurmCluster) -> Iterator[SlurmCluster]:
    """The session's cluster, reset (no jobs, every node idle) before and after a test."""
    if slurm.controller is None:
        slurm.start_controller()
    slurm.reset()
    yield slurm
    if slurm.controller is None:
        slurm.start_controller()
    slurm.reset()
