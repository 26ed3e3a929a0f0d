"""The Slurm adapter against a real slurmctld and three slurmd (tests/peers/slurm.py).

Nothing is stubbed: cordon, drain, admit and decommission go through scontrol to the
controller, jobs are real `sbatch --wrap 'sleep …'` jobs. The counting bin dir holds
wrappers that log each call and exec the real client, to show how many commands a batch
question costs.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from provisioning.schedulers import SchedulerFatalError, SchedulerTransientError, get_scheduler
from provisioning.schedulers.slurm import SlurmScheduler
from tests.factories import NodeFactory
from tests.peers.util import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def hosts(slurm_cluster):
    return {name: NodeFactory(hostname=name) for name in slurm_cluster.nodes}


@pytest.fixture
def scheduler(slurm_cluster) -> SlurmScheduler:
    return SlurmScheduler(conf=str(slurm_cluster.conf), bin_dir="", timeout=10)


def reason(cluster, node: str) -> str:
    out = cluster.run("sinfo", "-h", "-N", "-n", node, "-o", "%E").stdout
    return out.splitlines()[0].strip()


def test_cordon_of_an_idle_node_is_drained_at_once(slurm_cluster, scheduler, hosts):
    scheduler.cordon(hosts["gpu001"], "reimage to 2024.06\nfor drift")
    status = scheduler.drain_status(hosts["gpu001"])
    assert status.drained and status.jobs == () and status.state == "IDLE+DRAIN"
    assert reason(slurm_cluster, "gpu001") == "corral: reimage to 2024.06 for drift"
    assert slurm_cluster.node_state("gpu002") == "IDLE"


def test_a_running_job_keeps_the_node_draining_until_it_ends(slurm_cluster, scheduler, hosts):
    job = slurm_cluster.sbatch("gpu001", "sleep 60")
    neighbour = slurm_cluster.sbatch("gpu002", "sleep 60")

    scheduler.cordon(hosts["gpu001"], "drain for RMA")
    status = scheduler.drain_status(hosts["gpu001"])
    assert not status.drained
    assert status.jobs == (job,)
    assert status.state in ("MIXED+DRAIN", "ALLOCATED+DRAIN")
    assert status.describe() == f"1 job running: {job}"
    assert slurm_cluster.job_state(job) == "RUNNING"  # cordon lets it finish

    slurm_cluster.scancel(job)
    status = scheduler.drain_status(hosts["gpu001"])
    assert status.drained and status.state == "IDLE+DRAIN"

    scheduler.admit(hosts["gpu001"])
    assert slurm_cluster.node_state("gpu001") == "IDLE"
    # The other node's job never noticed any of it.
    assert slurm_cluster.job_state(neighbour) == "RUNNING"
    assert slurm_cluster.node_state("gpu002") in ("MIXED", "ALLOCATED")


def test_admitted_node_takes_new_work(slurm_cluster, scheduler, hosts):
    scheduler.cordon(hosts["gpu003"], "validate")
    scheduler.admit(hosts["gpu003"])
    job = slurm_cluster.sbatch("gpu003", "sleep 30")
    assert slurm_cluster.job_state(job) == "RUNNING"


def test_admit_of_a_node_already_schedulable_is_success(slurm_cluster, scheduler, hosts):
    # What Slurm itself answers, which the adapter has to see through:
    raw = slurm_cluster.run("scontrol", "update", "NodeName=gpu002", "State=RESUME", check=False)
    assert raw.returncode == 1 and "Invalid node state specified" in raw.stderr
    scheduler.admit(hosts["gpu002"])
    assert slurm_cluster.node_state("gpu002") == "IDLE"


def test_drain_statuses_asks_about_every_node_in_two_commands(slurm_cluster, hosts, tmp_path):
    calls = tmp_path / "calls"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("scontrol", "squeue"):
        wrapper = bin_dir / tool
        wrapper.write_text(f'#!/bin/sh\necho "{tool} $*" >> {calls}\nexec /usr/bin/{tool} "$@"\n')
        wrapper.chmod(0o755)
    scheduler = SlurmScheduler(conf=str(slurm_cluster.conf), bin_dir=str(bin_dir), timeout=10)
    job = slurm_cluster.sbatch("gpu002", "sleep 60")
    for node in hosts.values():
        scheduler.cordon(node, "rolling reimage")
    calls.unlink()

    statuses = scheduler.drain_statuses(hosts.values())

    assert len(calls.read_text().splitlines()) == 2, calls.read_text()
    by_host = {name: statuses[node.pk] for name, node in hosts.items()}
    assert by_host["gpu001"].drained and by_host["gpu003"].drained
    assert not by_host["gpu002"].drained and by_host["gpu002"].jobs == (job,)


def test_a_node_slurm_does_not_know_is_a_fatal_error_saying_what_to_do(
    slurm_cluster, scheduler, hosts
):
    stranger = NodeFactory(hostname="gpu009")
    with pytest.raises(SchedulerFatalError) as cordon:
        scheduler.cordon(stranger, "drain")
    message = str(cordon.value)
    assert message.startswith("Slurm does not know node gpu009: ")
    assert "Invalid node name specified" in message and "export_slurm" in message
    assert not cordon.value.retryable
    with pytest.raises(SchedulerFatalError, match="Slurm does not know node gpu009"):
        scheduler.drain_status(stranger)
    with pytest.raises(SchedulerFatalError, match="Slurm does not know node gpu009"):
        scheduler.admit(stranger)
    # In a batch it does not hide the others.
    statuses = scheduler.drain_statuses([stranger, hosts["gpu001"]])
    assert statuses[stranger.pk].state.startswith("unknown to Slurm: add gpu009 to slurm.conf")
    assert statuses[hosts["gpu001"].pk].state == "IDLE"
    # Decommissioning a node Slurm never had leaves nothing to do.
    scheduler.decommission(stranger)


def test_controller_down_is_transient_and_names_the_controller(slurm_cluster, scheduler, hosts):
    slurm_cluster.stop_controller()
    with pytest.raises(SchedulerTransientError) as down:
        scheduler.cordon(hosts["gpu001"], "drain")
    message = str(down.value)
    assert "Slurm controller (localhost(127.0.0.1) per " in message
    assert "Unable to contact slurm controller" in message and down.value.retryable
    with pytest.raises(SchedulerTransientError):
        scheduler.drain_statuses(hosts.values())
    slurm_cluster.start_controller()


def test_a_command_that_does_not_answer_in_time_is_transient(slurm_cluster, hosts):
    slow = SlurmScheduler(conf=str(slurm_cluster.conf), bin_dir="", timeout=0.001)
    with pytest.raises(SchedulerTransientError, match="did not answer within 0.001 s"):
        slow.drain_status(hosts["gpu001"])


def test_missing_client_is_fatal_naming_the_setting(slurm_cluster, hosts, tmp_path):
    nowhere = SlurmScheduler(conf=str(slurm_cluster.conf), bin_dir=str(tmp_path), timeout=5)
    with pytest.raises(SchedulerFatalError, match="set CORRAL_SLURM_BIN_DIR"):
        nowhere.cordon(hosts["gpu001"], "drain")


def test_any_other_refusal_is_fatal_quoting_scontrol(slurm_cluster, hosts):
    """Run scontrol as `nobody` (no Slurm operator rights): slurmctld refuses the update.
    `nobody` must read the conf, which pytest's private tmp dirs do not allow."""
    public = Path(tempfile.mkdtemp(prefix="corral-slurm-"))
    public.chmod(0o755)
    try:
        conf = public / "slurm.conf"
        shutil.copy(slurm_cluster.conf, conf)
        conf.chmod(0o644)
        (public / "scontrol").write_text(
            "#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups "
            '/usr/bin/scontrol "$@"\n'
        )
        (public / "scontrol").chmod(0o755)
        unprivileged = SlurmScheduler(conf=str(conf), bin_dir=str(public), timeout=10)
        with pytest.raises(SchedulerFatalError) as refused:
            unprivileged.cordon(hosts["gpu001"], "drain")
    finally:
        shutil.rmtree(public)
    assert str(refused.value) == (
        "Slurm refused update NodeName=gpu001 State=DRAIN: scontrol said: "
        "slurm_update error: Invalid user id"
    )
    assert slurm_cluster.node_state("gpu001") == "IDLE"


def test_decommission_leaves_the_node_down_with_corral_s_reason(slurm_cluster, scheduler, hosts):
    scheduler.decommission(hosts["gpu003"])
    assert slurm_cluster.node_state("gpu003") == "DOWN+DRAIN"
    assert reason(slurm_cluster, "gpu003") == "corral: decommissioned"
    assert scheduler.drain_status(hosts["gpu003"]).drained


def test_a_decommissioned_node_stays_out_when_its_slurmd_registers_again(
    slurm_cluster, scheduler, hosts
):
    """ReturnToService=2 returns a plain DOWN node to IDLE when slurmd registers (seen:
    DOWN -> IDLE); the DRAIN decommission sets first keeps it out (DOWN+DRAIN ->
    IDLE+DRAIN)."""
    scheduler.decommission(hosts["gpu003"])
    assert slurm_cluster.node_state("gpu003") == "DOWN+DRAIN"
    slurm_cluster.restart_slurmd("gpu003")
    wait_until(
        lambda: slurm_cluster.node_state("gpu003") == "IDLE+DRAIN",
        timeout=20,
        what="gpu003 registered again",
    )
    assert reason(slurm_cluster, "gpu003") == "corral: decommissioned"


def test_chosen_by_settings(slurm_cluster, settings, hosts):
    settings.CORRAL_SCHEDULER = "provisioning.schedulers.slurm.SlurmScheduler"
    settings.CORRAL_SLURM_CONF = str(slurm_cluster.conf)
    settings.CORRAL_SLURM_BIN_DIR = "/usr/bin"
    scheduler = get_scheduler()
    assert scheduler.name == "slurm"
    scheduler.cordon(hosts["gpu002"], "from settings")
    assert slurm_cluster.node_state("gpu002") == "IDLE+DRAIN"
