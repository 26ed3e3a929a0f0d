"""A gate run resumes where its worker died: the worker running its second step is
killed outright; a new worker (with beat) finds the step's heartbeat stopped, sends that
step again and the run passes, without running the finished first step a second time.

Real processes only: the production web server, Celery workers, the real sshd the checks
run over (its tools count how often each ran), a redis-server of the test's own.
"""

import signal
import stat

import pytest

from inventory.models import Node
from tests.e2e.test_gates import failed_node, profile_spec, use_profile  # noqa: F401
from tests.factories import api_token
from tests.faults.helpers import act, assert_invariants
from tests.peers.util import wait_until
from tests.workers import start_worker, stop_worker, wait_operation
from validation.models import GateRun

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def counting_tool(sshd, name: str, wrapped: str, wait_for: str = "") -> tuple[str, object]:
    """A tool that notes each run in <name>.runs, waits for `wait_for` to exist if given,
    then does what the recorded stand-in `wrapped` does."""
    runs = sshd.workdir / f"{name}.runs"
    path = sshd.bin_dir / f"corral-standin-{name}"
    wait = f"while [ ! -e {wait_for} ]; do sleep 0.1; done\n" if wait_for else ""
    path.write_text(f"#!/bin/sh\necho run >> {runs}\n{wait}exec {wrapped}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path), lambda: len(runs.read_text().splitlines()) if runs.exists() else 0


def test_a_gate_run_resumes_at_the_step_its_worker_died_in_without_repeating_the_first(
    corral_web,
    users,
    sshd,
    failed_node,  # noqa: F811  (the fixture imported from tests.e2e.test_gates)
    worker_env,
    tmp_path,
):
    spec = profile_spec(sshd, "gpu-burn-h100-ok.txt", soak_repeat=1)
    preflight, burn = spec["phases"][0]["checks"][0], spec["phases"][1]["checks"][0]
    go = sshd.workdir / "go"
    preflight["command"], preflight_runs = counting_tool(sshd, "smi-counted", preflight["command"])
    burn["command"], burn_runs = counting_tool(sshd, "burn-counted", burn["command"], str(go))
    use_profile(spec)
    env = {
        **worker_env,
        "CORRAL_SSH_PORT": str(sshd.port),
        "CORRAL_SSH_USER": sshd.username,
        "CORRAL_SSH_KEY_PATH": str(sshd.client_key_path),
    }
    token = api_token(users["technician"])
    first = start_worker(env, tmp_path / "first.log")
    op_id = act(corral_web, token, failed_node, "validate")
    wait_until(lambda: burn_runs() == 1, timeout=60, what="the second step to be running")
    run = GateRun.objects.get(operation_id=op_id)
    assert (run.steps_done, preflight_runs()) == (1, 1)

    first.process.send_signal(signal.SIGKILL)  # mid-step, no goodbye
    first.process.wait(timeout=10)
    go.touch()  # the tool would now answer at once
    second = start_worker(env, tmp_path / "second.log", "-B")
    try:
        op = wait_operation(op_id, timeout=90)
        assert_invariants(second)
    finally:
        stop_worker(second)
    run.refresh_from_db()
    assert op.status == "succeeded", f"{op.error}\n{second.output()[-3000:]}"
    assert (run.status, run.steps_done) == ("passed", 2)
    assert preflight_runs() == 1  # the finished step was not run again
    assert burn_runs() == 2  # the step the worker died in ran again, once
    assert Node.objects.get(pk=failed_node.pk).state == "in_service"
