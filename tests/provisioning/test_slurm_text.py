"""What scontrol and squeue print, read without a cluster. The lines were captured from
Slurm 22.05.8 (Debian bookworm's slurm-wlm) driving the test cluster of tests/peers/slurm.py."""

import pytest

from provisioning.schedulers import slurm_text as t

SHOW_NODE = (
    "NodeName=gpu001 Arch=x86_64 CoresPerSocket=1  CPUAlloc=1 CPUEfctv=4 CPUTot=4 "
    "CPULoad=0.69 AvailableFeatures=h100-sxm ActiveFeatures=h100-sxm Gres=gpu:h100-sxm:8 "
    "NodeAddr=127.0.0.1 NodeHostName=localhost Port=27001 Version=22.05.8 OS=Linux "
    "6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 AllocMem=100 FreeMem=21122 "
    "Sockets=4 Boards=1 State=MIXED+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=gpu  BootTime=2026-11-23T03:11:46 "
    "SlurmdStartTime=2026-11-23T03:16:24 LastBusyTime=2026-11-23T03:16:24 "
    "CfgTRES=cpu=4,mem=1000M,billing=4 AllocTRES=cpu=1,mem=100M CapWatts=n/a CurrentWatts=0 "
    "AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s "
    "Reason=corral: drain for RMA [root@2026-11-23T03:16:30]\n"
    "NodeName=gpu002 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=4 CPUTot=4 "
    "OS=Linux 6.18.44 #1 SMP  RealMemory=1000 State=IDLE ThreadsPerCore=1 Partitions=gpu\n"
    "Node gpu999 not found\n"
)


def test_show_node_reads_states_reasons_and_unknown_names():
    records, missing = t.parse_show_node(SHOW_NODE)
    assert records["gpu001"] == t.NodeRecord("gpu001", "MIXED+DRAIN", "corral: drain for RMA")
    assert records["gpu002"] == t.NodeRecord("gpu002", "IDLE", "")
    assert missing == ["gpu999"]


@pytest.mark.parametrize(
    "state, drained, schedulable",
    [
        ("IDLE", False, True),
        ("IDLE+DRAIN", True, False),
        ("DOWN+DRAIN", True, False),
        ("DOWN+DRAIN+NOT_RESPONDING", True, False),
        ("MIXED+DRAIN", False, False),
        ("ALLOCATED+DRAIN", False, False),
        ("IDLE+COMPLETING+DRAIN", False, False),
        ("IDLE+NOT_RESPONDING", False, False),  # for about a second after a RESUME
        ("UNKNOWN", False, False),  # slurmctld restarted, slurmd not registered yet
        ("MIXED", False, True),
        ("DOWN", False, False),
        ("IDLE*", False, False),
    ],
)
def test_drained_and_schedulable(state, drained, schedulable):
    assert t.is_drained(state) is drained
    assert t.is_schedulable(state) is schedulable


@pytest.mark.parametrize(
    "stderr, kind",
    [
        ("slurm_update error: Invalid node name specified", t.UNKNOWN_NODE),
        ("squeue: error: Invalid node name gpu999", t.UNKNOWN_NODE),
        ("slurm_update error: Unable to contact slurm controller (connect failure)", t.UNREACHABLE),
        ("slurm_load_node error: Socket timed out on send/recv operation", t.UNREACHABLE),
        ("slurm_update error: Invalid node state specified", t.INVALID_STATE),
        ("slurm_update error: Access/permission denied", t.REFUSED),
    ],
)
def test_errors_are_told_apart_by_slurm_s_words(stderr, kind):
    assert t.classify_error(stderr) == kind


def test_jobs_with_multi_node_hostlists():
    out = "17|gpu[001-002]\n18_3|gpu003\n19|\n"
    assert t.parse_jobs(out) == [
        ("17", ["gpu001", "gpu002"]),
        ("18_3", ["gpu003"]),
        ("19", []),
    ]


@pytest.mark.parametrize(
    "names, hostlist",
    [
        (["gpu001", "gpu002", "gpu003", "gpu007"], "gpu[001-003,007]"),
        (["gpu001"], "gpu001"),
        (["n9", "n10", "n11"], "n9,n[10-11]"),
        (["login", "gpu02", "gpu01"], "gpu[01-02],login"),
        (["dc1-r01", "dc1-r02", "dc2-r01"], "dc1-r[01-02],dc2-r01"),
    ],
)
def test_hostlists_compress_and_expand_back(names, hostlist):
    assert t.compress_hostlist(names) == hostlist
    assert sorted(t.expand_hostlist(hostlist)) == sorted(set(names))


def test_brief_keeps_one_line():
    assert t.brief("a\n  b\tc") == "a b c"
    assert len(t.brief("x" * 1000)) == 300
