"""Slurm, driven through its own clients: `scontrol` to change a node, `scontrol show node`
and `squeue` to read it.

Why the command-line clients rather than slurmrestd: every Slurm site has them, they
authenticate with the munge key the host already holds, and their words ("Invalid node
name specified") are what a technician searches for. Each call is one subprocess with a
timeout and no shell; the Slurm NodeName is the Corral node's hostname.

What Corral does to a node (docs/scheduling.md):
- cordon: `State=DRAIN Reason="corral: <reason>"`; running jobs finish, nothing new starts;
- drained once Slurm says IDLE+DRAIN (or DOWN+DRAIN) and squeue lists no job there;
- admit: `State=RESUME`; a node already schedulable is fine (Slurm refuses the RESUME
  with "Invalid node state specified", so the state is read to tell the two apart);
- decommission: DRAIN then `State=DOWN Reason="corral: decommissioned"`. DOWN rather than
  FUTURE keeps the node and its reason visible in `sinfo -R` until it leaves slurm.conf
  (the exports leave decommissioned nodes out); the DRAIN first keeps it unschedulable
  even where ReturnToService=2 would return a DOWN node whose slurmd registers again.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NoReturn

from django.conf import settings

from inventory.models import Node

from . import slurm_text as text
from .base import DrainStatus, SchedulerFatalError, SchedulerTransientError

REASON_PREFIX = "corral: "
DECOMMISSIONED = f"{REASON_PREFIX}decommissioned"
# Slurm keeps reasons short in sinfo; a longer one is cut rather than refused.
MAX_REASON = 200
UNKNOWN_TO_SLURM = "unknown to Slurm"


class SlurmScheduler:
    """The SchedulerAdapter for Slurm (CORRAL_SCHEDULER=provisioning.schedulers.slurm.
    SlurmScheduler), configured by CORRAL_SLURM_CONF / _BIN_DIR / _TIMEOUT_SECONDS."""

    name = "slurm"

    def __init__(
        self,
        conf: str | None = None,
        bin_dir: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.conf = settings.CORRAL_SLURM_CONF if conf is None else conf
        self.bin_dir = settings.CORRAL_SLURM_BIN_DIR if bin_dir is None else bin_dir
        self.timeout = settings.CORRAL_SLURM_TIMEOUT_SECONDS if timeout is None else timeout

    # --- the four verbs -------------------------------------------------------------

    def cordon(self, node: Node, reason: str) -> None:
        self._update(node.hostname, "State=DRAIN", f"Reason={_reason(reason)}")

    def drain_status(self, node: Node) -> DrainStatus:
        records, missing = self._show([node.hostname])
        if missing:
            raise self._unknown(node.hostname, f"Node {node.hostname} not found")
        return self._statuses({node.pk: node.hostname}, records)[node.pk]

    def drain_statuses(self, nodes: Iterable[Node]) -> dict[int, DrainStatus]:
        """Two commands whatever the number of nodes: one `scontrol show node` for their
        states, one `squeue` for the jobs still on them. A node Slurm does not know does
        not stop the others: its status says so (the periodic re-check keeps going)."""
        hosts = {node.pk: node.hostname for node in nodes}
        if not hosts:
            return {}
        records, _missing = self._show(sorted(set(hosts.values())))
        return self._statuses(hosts, records)

    def admit(self, node: Node) -> None:
        """RESUME, then wait (at most the command timeout) until Slurm would start work
        there: a resumed node reads IDLE+NOT_RESPONDING until its slurmd answers the ping
        the resume sends (about a second), and a dead slurmd never does."""
        host = node.hostname
        try:
            self._update(host, "State=RESUME")
        except InvalidNodeState as refused:
            # Slurm refuses to RESUME a node that is not drained or down: read what it is.
            state = self._state(host)
            if text.is_schedulable(state):
                return  # already schedulable: what admit asks for
            if not _waiting_for_slurmd(state):
                raise SchedulerFatalError(
                    f"Slurm refused to resume {host} (state {state}): {refused.detail}"
                ) from refused
        deadline = time.monotonic() + self.timeout
        while not text.is_schedulable(state := self._state(host)):
            if not _waiting_for_slurmd(state) or time.monotonic() > deadline:
                raise SchedulerTransientError(
                    f"{host} is resumed but Slurm cannot schedule it yet (state {state}): "
                    "slurmd there has not answered slurmctld; is it running?"
                )
            time.sleep(0.2)

    def decommission(self, node: Node) -> None:
        """A node Slurm never knew (decommissioned before it was ever admitted) is already
        out of the scheduler: nothing to do."""
        try:
            self._update(node.hostname, "State=DRAIN", f"Reason={DECOMMISSIONED}")
        except UnknownNode:
            return
        self._update(node.hostname, "State=DOWN", f"Reason={DECOMMISSIONED}")

    # --- commands ---------------------------------------------------------------------

    def _statuses(
        self, hosts: dict[int, str], records: dict[str, text.NodeRecord]
    ) -> dict[int, DrainStatus]:
        known = sorted({h for h in hosts.values() if h in records})
        jobs_on: dict[str, list[str]] = {h: [] for h in known}
        if known:
            for job_id, job_nodes in self._jobs(known):
                for host in job_nodes:
                    if host in jobs_on and job_id not in jobs_on[host]:
                        jobs_on[host].append(job_id)
        statuses = {}
        for pk, host in hosts.items():
            record = records.get(host)
            if record is None:
                statuses[pk] = DrainStatus(
                    drained=False,
                    state=f"{UNKNOWN_TO_SLURM}: add {host} to slurm.conf (see export_slurm)",
                )
                continue
            jobs = tuple(jobs_on[host])
            drained = text.is_drained(record.state) and not jobs
            statuses[pk] = DrainStatus(drained=drained, jobs=jobs, state=record.state)
        return statuses

    def _show(self, hosts: Sequence[str]) -> tuple[dict[str, text.NodeRecord], list[str]]:
        result = self._run("scontrol", ["show", "node", "-o", ",".join(hosts)], check=False)
        records, missing = text.parse_show_node(result.stdout)
        if result.returncode != 0 and not (records or missing):
            self._raise(result, f"reading {', '.join(hosts)}")
        return records, missing

    def _state(self, host: str) -> str:
        records, missing = self._show([host])
        if missing or host not in records:
            raise self._unknown(host, f"Node {host} not found")
        return records[host].state

    def _jobs(self, hosts: Sequence[str]) -> list[tuple[str, list[str]]]:
        args = ["-h", "-t", text.HOLDING_STATES, "-w", ",".join(hosts), "-o", "%i|%N"]
        return text.parse_jobs(self._run("squeue", args, doing="listing jobs").stdout)

    def _update(self, host: str, *changes: str) -> None:
        args = ["update", f"NodeName={host}", *changes]
        self._run("scontrol", args, host=host, doing=" ".join(args[:3]))

    def _run(
        self,
        tool: str,
        args: list[str],
        *,
        check: bool = True,
        host: str = "",
        doing: str = "",
    ) -> subprocess.CompletedProcess[str]:
        command = [str(Path(self.bin_dir) / tool) if self.bin_dir else tool, *args]
        env = dict(os.environ)
        if self.conf:
            env["SLURM_CONF"] = self.conf
        try:
            result = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise SchedulerTransientError(
                f"{tool} did not answer within {self.timeout:g} s: is slurmctld "
                f"({self._controller()}) up and reachable?"
            ) from exc
        except OSError as exc:  # not installed where CORRAL_SLURM_BIN_DIR says
            raise SchedulerFatalError(
                f"cannot run {command[0]}: {exc.strerror}; install the Slurm client "
                "(slurm-client) or set CORRAL_SLURM_BIN_DIR"
            ) from exc
        if check and result.returncode != 0:
            self._raise(result, doing or " ".join(args), host=host)
        return result

    def _raise(
        self, result: subprocess.CompletedProcess[str], doing: str, host: str = ""
    ) -> NoReturn:
        said = text.brief(result.stderr or result.stdout) or f"exit status {result.returncode}"
        kind = text.classify_error(said)
        tool = Path(str(result.args[0])).name
        if kind == text.UNREACHABLE:
            raise SchedulerTransientError(
                f"the Slurm controller ({self._controller()}) is not answering; {tool} said: {said}"
            )
        if kind == text.UNKNOWN_NODE and host:
            raise self._unknown(host, said)
        if kind == text.INVALID_STATE:
            raise InvalidNodeState(f"Slurm refused {doing} for {host}: {said}", said)
        raise SchedulerFatalError(f"Slurm refused {doing}: {tool} said: {said}")

    def _unknown(self, host: str, said: str) -> UnknownNode:
        return UnknownNode(
            f"Slurm does not know node {host}: {said}; add it to slurm.conf "
            "(see export_slurm) and reconfigure slurmctld"
        )

    def _controller(self) -> str:
        """Where this conf says slurmctld is (SlurmctldHost), for the technician."""
        path = Path(self.conf or "/etc/slurm/slurm.conf")
        try:
            for line in path.read_text().splitlines():
                key, _, value = line.partition("=")
                if key.strip().lower() in ("slurmctldhost", "controlmachine"):
                    return f"{value.strip()} per {path}"
        except OSError:
            pass
        return f"SlurmctldHost in {path}"


class UnknownNode(SchedulerFatalError):
    """Slurm has no node by this name (it is not in slurm.conf)."""


class InvalidNodeState(SchedulerFatalError):
    """Slurm refused a state change the node's current state does not allow."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


def _waiting_for_slurmd(state: str) -> bool:
    """UNKNOWN (slurmctld has not heard from slurmd since it started) or up but not
    responding: states slurmd's next answer ends, not a refusal."""
    base, flags = text.split_state(state)
    return base == "UNKNOWN" or (base == "IDLE" and flags <= {"NOT_RESPONDING"})


def _reason(reason: str) -> str:
    """ "corral: <reason>" on one line: Slurm shows it in sinfo -R, a newline would not."""
    line = " ".join(reason.split()) or "cordoned"
    return (REASON_PREFIX + line)[:MAX_REASON]
