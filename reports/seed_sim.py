"""One node's synthetic life, simulated in memory: no database, no Django models.

seed_history needs a year of plausible history for thousands of nodes. Each node is
walked through inventory.lifecycle.TRANSITIONS from `enrolled` by a small state machine
(`NodeSim.run`): every move is looked up in that table, so the simulation can only
produce histories transition() could have written. Times are Unix seconds (floats) until
the writer turns them into datetimes; nothing happens at or after `now`, where the walk
simply stops and leaves the node mid-flight.

Every node draws from its own `random.Random`, so a node's history does not depend on how
many nodes are simulated before it or in what batches.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from inventory.choices import TRANSITIONAL_STATES
from inventory.lifecycle import TRANSITIONS

MINUTE = 60.0
HOUR = 60 * MINUTE
DAY = 24 * HOUR

SYSTEM = "system"
SEEDER = "user:seed"

# Acceptance checks in the order a run executes them: (name, phase, tool, command). The
# names are those of the `seed-burn-in` profile (reports.seed_profile).
CHECKS: tuple[tuple[str, str, str, str], ...] = (
    ("dcgm-diag", "gpu", "dcgmi-json", "dcgmi diag -r 3 -j"),
    ("nvbandwidth", "nvlink", "nvbandwidth", "nvbandwidth -t device_to_device_memcpy_write_ce"),
    ("nccl-allreduce", "nvlink", "nccl", "all_reduce_perf -b 8 -e 8G -f 2 -g 8"),
    ("gpu-burn", "burn-in", "gpu-burn", "gpu_burn -tc 120"),
)
# Which check fails a failing run: Pareto-like, the GPU diagnostic catches most.
FAILING_CHECK_WEIGHTS = {"dcgm-diag": 58, "gpu-burn": 22, "nccl-allreduce": 13, "nvbandwidth": 7}

# First-pass gate failure rate per GPU model, nudged per vendor: yield differs by both.
GATE_FAIL_BY_GPU = {"H100-SXM": 0.08, "H200-SXM": 0.095, "B200": 0.115}
GATE_FAIL_BY_VENDOR = {
    "Dell XE9680": -0.005,
    "Supermicro SYS-821GE-TNHR": 0.01,
    "HPE Cray XD670": 0.0,
}
# A node that already passed once (a maintenance reimage) fails its burn-in less often.
KNOWN_GOOD_FACTOR = 0.4
HARDWARE_FAULT_SHARE = 0.25  # of gate failures, convicted straight to RMA


@dataclass(slots=True)
class Step:
    """One lifecycle event."""

    at: float
    event: str
    src: str
    dst: str
    actor: str
    reason: str


@dataclass(slots=True)
class Burn:
    """One validating period: a gate run. `finished` is None while it still runs."""

    started: float
    finished: float | None = None
    status: str = "running"
    failed_check: str = ""
    reason: str = ""


@dataclass(slots=True)
class Repair:
    """One RMA period: a case. `closed` is None while the node is still in RMA."""

    opened: float
    reason: str
    actor: str
    closed: float | None = None
    resolution: str = ""


@dataclass
class History:
    steps: list[Step] = field(default_factory=list)
    burns: list[Burn] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)
    final: str = "enrolled"


class _Now(Exception):
    """The next move would happen at or after `now`: the history ends here."""


def _gpu_reason(rng: random.Random) -> str:
    gpu = rng.randrange(8)
    return rng.choice(
        (
            f"GPU {gpu} XID 79 (fell off the bus)",
            f"XID 48: double-bit ECC error on GPU {gpu}",
            f"XID 74: NVLink error on GPU {gpu}",
            f"XID 94: contained ECC error on GPU {gpu}",
            f"GPU {gpu} row remap failure pending",
        )
    )


def check_reason(check: str, rng: random.Random) -> str:
    """A realistic one-line verdict for a failed `check`."""
    gpu = rng.randrange(8)
    if check == "dcgm-diag":
        return rng.choice(
            (
                f"level 3: GPU {gpu} XID 79",
                f"level 3: memory: GPU {gpu} 2 uncorrectable ECC errors",
                f"level 3: pcie: GPU {gpu} link trained x8 (expected x16)",
                f"level 3: targeted_power: GPU {gpu} held 540 W (expected 700 W)",
                f"level 3: diagnostic: GPU {gpu} SM stress mismatch",
            )
        )
    if check == "gpu-burn":
        return rng.choice(
            (
                f"GPU {gpu} FAULTY: {rng.randint(1, 40)} errors in 120 s",
                f"GPU {gpu} throttled at {rng.randint(86, 92)} C (HW slowdown)",
            )
        )
    if check == "nccl-allreduce":
        return f"busbw {rng.uniform(250, 340):.1f} GB/s below 360 GB/s at 8 GiB"
    peer = (gpu + rng.randint(1, 7)) % 8
    return f"device_to_device GPU {gpu}->{peer} {rng.uniform(300, 600):.1f} GB/s below 700"


def _fault_reason(rng: random.Random) -> str:
    """Why an in-service node was drained for a fault."""
    r = rng.random()
    if r < 0.7:
        return _gpu_reason(rng)
    return rng.choice(
        (
            f"PSU {rng.randint(1, 6)} failed (BMC SEL)",
            f"InfiniBand port mlx5_{rng.randrange(8)} flapping",
            "kernel panic: node stopped answering the scheduler",
            f"NVMe nvme{rng.randrange(4)}n1 media errors",
            "BMC reports fan 3 failed, inlet 41 C",
        )
    )


class NodeSim:
    """Walks one node from `enrolled` until `now` (see the module docstring)."""

    def __init__(
        self,
        rng: random.Random,
        start: float,
        now: float,
        gate_fail: float,
        mtbf_days: float,
        maint_per_month: float,
    ) -> None:
        self.rng = rng
        self.t = start
        self.now = now
        self.gate_fail = gate_fail
        self.fault_rate = 1 / (mtbf_days * DAY)
        self.maint_rate = maint_per_month / (30 * DAY)
        self.state = "enrolled"
        self.known_good = False  # passed a burn-in since delivery or the last repair
        self.drain_cause = ""  # "fault" or "maintenance"
        self.fault = ""
        self.last_failure = ("", "")  # (failed_step, reason) of the latest fail
        self.history = History()

    # --- moving -------------------------------------------------------------------------

    def wait(self, low: float, high: float) -> None:
        self.t += self.rng.uniform(low, high)

    def go(self, event: str, actor: str = SYSTEM, reason: str = "", verdict: str = "") -> None:
        """Apply `event` now (at self.t) as transition() would, with its gate run or case
        bookkeeping; `verdict` is the failing check of a validating period that fails."""
        if self.t >= self.now:
            raise _Now
        src = self.state
        dst = TRANSITIONS[(src, event)]  # a KeyError here is a bug in the walk
        h = self.history
        if src == "validating":
            burn = h.burns[-1]
            burn.finished = self.t
            burn.status = {"admit": "passed", "hardware_fault": "rma"}.get(event, "failed")
            burn.failed_check = verdict
            burn.reason = reason
        if src == "rma":
            repair = h.repairs[-1]
            repair.closed = self.t
            repair.resolution = "repaired" if event == "repaired" else "replaced_node"
        if dst == "validating":
            h.burns.append(Burn(started=self.t))
        if dst == "rma":
            h.repairs.append(Repair(opened=self.t, reason=reason, actor=actor))
        if dst == "failed":
            self.last_failure = (src, reason)
        h.steps.append(Step(self.t, event, src, dst, actor, reason))
        self.state = dst

    def run(self) -> History:
        handlers = {
            "enrolled": self._enrolled,
            "inspecting": self._inspecting,
            "ready": self._ready,
            "deploying": self._deploying,
            "validating": self._validating,
            "in_service": self._in_service,
            "draining": self._draining,
            "drained": self._drained,
            "failed": self._failed,
            "rma": self._rma,
        }
        try:
            while self.state != "decommissioned":
                handlers[self.state]()
        except _Now:
            self._rest()
        self.history.final = self.state
        return self.history

    def _rest(self) -> None:
        """End the history in the last state a node rests in. A seeded node left mid-way
        (validating, deploying, ...) looked like live work on the overview, with a gate
        run at 0 % and actions that fail for want of a BMC; seeded history never does."""
        steps = self.history.steps
        while steps and steps[-1].dst in TRANSITIONAL_STATES:
            steps.pop()
        self.state = steps[-1].dst if steps else "enrolled"
        cut = steps[-1].at if steps else float("-inf")
        history = self.history
        history.burns = [b for b in history.burns if b.finished is not None and b.started <= cut]
        history.repairs = [r for r in history.repairs if r.opened <= cut]
        for repair in history.repairs:
            if repair.closed is not None and repair.closed > cut:
                repair.closed, repair.resolution = None, ""

    # --- one handler per state: how long the node stays, and where it goes next --------

    def _enrolled(self) -> None:
        self.wait(2 * HOUR, 3 * DAY)  # unpacked, cabled, BMC on the network
        self.go("inspect", SEEDER)

    def _inspecting(self) -> None:
        self.wait(8 * MINUTE, 40 * MINUTE)
        if self.rng.random() < 0.01:
            reason = self.rng.choice(
                (
                    "GPU check: BMC reports 7 GPUs, the node was enrolled with 8",
                    "Redfish: connection timed out after 4 retries",
                )
            )
            self.go("fail", reason=reason)
        else:
            self.go("inspected")

    def _ready(self) -> None:
        self.wait(1 * HOUR, 2 * DAY)
        self.go("deploy", SEEDER)

    def _deploying(self) -> None:
        self.wait(12 * MINUTE, 40 * MINUTE)
        if self.rng.random() < 0.015:
            self.go("fail", reason="no phone-home within 45 min")
        else:
            self.go("booted")

    def _validating(self) -> None:
        self.wait(12 * HOUR, 72 * HOUR)  # burn-in
        rate = self.gate_fail * (KNOWN_GOOD_FACTOR if self.known_good else 1.0)
        if self.rng.random() >= rate:
            self.go("admit", reason=f"gates passed: all {len(CHECKS)} checks passed")
            self.known_good = True
            return
        names = list(FAILING_CHECK_WEIGHTS)
        check = self.rng.choices(names, weights=list(FAILING_CHECK_WEIGHTS.values()))[0]
        named = f"{check}: {check_reason(check, self.rng)}"
        if self.rng.random() < HARDWARE_FAULT_SHARE:
            self.go("hardware_fault", reason=named, verdict=check)
        else:
            self.go("fail", reason=f"gate failed: {named}", verdict=check)

    def _in_service(self) -> None:
        to_fault = self.rng.expovariate(self.fault_rate)
        to_maint = self.rng.expovariate(self.maint_rate) if self.maint_rate else float("inf")
        if to_fault < to_maint and int(to_fault) % 60 == 0:
            # One fault in sixty is a power loss of a node that runs from RAM: it boots
            # on its own, and that boot is a deploy of its image again (no draw of its own,
            # so every other node's history stays what it was).
            self.t += to_fault
            self.go(
                "rebooted", SYSTEM, "booted on its own: a stateless node's every boot is a deploy"
            )
        elif to_fault < to_maint:
            self.t += to_fault
            self.drain_cause, self.fault = "fault", _fault_reason(self.rng)
            self.go("drain", SYSTEM, self.fault)
        else:
            self.t += to_maint
            self.drain_cause = "maintenance"
            self.go("drain", SEEDER, "planned maintenance: rolling reimage")

    def _draining(self) -> None:
        if self.drain_cause == "fault":
            self.wait(5 * MINUTE, 1 * HOUR)
        else:
            self.wait(10 * MINUTE, 6 * HOUR)
        if self.rng.random() < 0.01:
            self.go("fail", reason="drain timed out: 2 jobs still running after 12 h")
        else:
            self.go("drained")

    def _drained(self) -> None:
        if self.drain_cause == "maintenance":
            self.wait(10 * MINUTE, 4 * HOUR)
            if self.rng.random() < 0.05:  # the window was called off: back without a reimage
                self.go("undrain", SEEDER, "maintenance called off")
                return
            self.go("deploy", SEEDER)
            return
        self.wait(30 * MINUTE, 2 * DAY)
        r = self.rng.random()
        if r < 0.55:
            self.go("rma", SEEDER, self.fault)
        elif r < 0.995:
            self.go("deploy", SEEDER, f"reimage after: {self.fault}")
        else:
            self.go("decommission", SEEDER, "end of life: repeated faults")

    def _failed(self) -> None:
        self.wait(1 * HOUR, 2 * DAY)  # someone looks at it
        step, reason = self.last_failure
        r = self.rng.random()
        if step == "inspecting":
            if r < 0.8:
                self.go("inspect", SEEDER)
            else:
                self.go("rma", SEEDER, reason)
        elif step == "deploying":
            self.go("deploy", SEEDER)
        elif step == "validating":
            if r < 0.55:
                self.go("validate", SEEDER)
            elif r < 0.99:
                self.go("rma", SEEDER, reason)
            else:
                self.go("decommission", SEEDER, f"not worth repairing: {reason}")
        else:  # draining
            if r < 0.5:
                self.go("drain", SEEDER)
            else:
                self.go("rma", SEEDER, reason)

    def _rma(self) -> None:
        self.t += 3 * DAY + min(self.rng.expovariate(1 / (7 * DAY)), 40 * DAY)
        if self.rng.random() < 0.99:
            self.known_good = False
            self.go("repaired", SEEDER, "RMA case closed: repaired")
        else:
            self.go("decommission", SEEDER, "RMA case closed: replaced_node")


def burn_checks(burn: Burn, now: float) -> list[tuple[str, str, str, str, float, str, str, float]]:
    """The check results of a gate run: (name, phase, tool, command, at, status, reason,
    duration_s), in order. A failed run stops at its failing check; a running run has
    only the checks that finished before `now`."""
    end = burn.finished if burn.finished is not None else burn.started + 72 * HOUR
    span = (end - burn.started) / len(CHECKS)
    results = []
    for i, (name, phase, tool, command) in enumerate(CHECKS):
        at = burn.started + span * (i + 1)
        if burn.failed_check == name:
            reason = burn.reason.split(f"{name}: ", 1)[-1]
            results.append((name, phase, tool, command, end, "fail", reason, span))
            break
        if at >= now or (burn.finished is None and at >= end):
            break
        results.append((name, phase, tool, command, at, "pass", "within thresholds", span))
    return results
