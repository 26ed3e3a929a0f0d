"""Kernel-log lines that convict a GPU without an Xid line of their own (issue 28).

Real samples from tests/corpus/tools/kernel-log; the Xid 45 cause case is synthetic
(no published log naming the cause was found) and says so.
"""

from validation.parsers.xid import parse_xid
from validation.verdicts import judge

from ..verdicts.support import node, spec
from .helpers import corpus


def test_rm_fallen_off_the_bus_line_without_xid_is_xid_79s_condition():
    result = parse_xid(corpus("kernel-log/dmesg-arm64-fallen-off-bus-no-xid-oops.txt"))
    assert [(e.code, e.pci, e.action, e.source) for e in result.xids] == [
        (79, "0018:06:00", "reboot", "nvrm")
    ]
    assert result.worst_action == "reboot"
    assert result.codes == {79: 1}


def test_probe_time_three_line_message_names_the_gpu():
    result = parse_xid(corpus("kernel-log/console-guest-probe-fallen-off-bus-multiline.txt"))
    assert [(e.code, e.pci, e.line) for e in result.xids] == [(79, "0000:02:00", 3)]


def test_xid_79_and_its_rm_companion_line_are_one_event():
    result = parse_xid(corpus("kernel-log/journal-vfio-xid79-and-rm-fallen-off-bus-xid44.txt"))
    assert sorted((e.code, e.source) for e in result.xids) == [(44, "xid"), (79, "xid")]


def test_rm_init_adapter_failed_for_a_gpu_counts():
    result = parse_xid(corpus("kernel-log/dmesg-pi5-rminitadapter-failed-gsp.txt"))
    assert [(e.code, e.pci, e.mnemonic, e.action) for e in result.xids] == [
        (None, "0000:01:00", "RM_INIT_ADAPTER_FAILED", "reset")
    ]
    assert result.codes == {}
    assert result.gpus == ["0000:01:00"]


def test_old_rm_init_adapter_failed_names_no_gpu_but_still_counts():
    result = parse_xid(corpus("kernel-log/kernlog-285-rminitadapter-failed-no-gpu-id.txt"))
    assert [(e.pci, e.action, e.line) for e in result.xids] == [("", "reset", 6)]
    assert result.gpus == []


def test_judge_fails_a_gpu_that_did_not_initialise():
    result = parse_xid(corpus("kernel-log/dmesg-pi5-rminitadapter-failed-gsp.txt"))
    verdict = judge(spec("xid"), result, node())
    assert verdict.status == "fail" and verdict.hardware_fault
    assert "RmInitAdapter failed" in verdict.reason and "0000:01:00" in verdict.reason


def test_xid_45_takes_the_class_of_the_xid_it_names_as_its_cause():
    # Synthetic: the shape of an Xid 45 message that names its cause.
    text = (
        "NVRM: Xid (PCI:0000:1b:00): 45, pid=4242, name=python3, Ch 00000008, "
        "Preemptive Cleanup, caused by previous Xid 149/145\n"
    )
    (event,) = parse_xid(text).xids
    assert event.code == 45
    assert event.caused_by == [149, 145]
    assert event.action == "rma"  # 149 and 145 are NVLink5 workflow Xids
    assert parse_xid(text).worst_action == "rma"


def test_a_solo_xid_45_stays_informational():
    result = parse_xid(corpus("kernel-log/dmesg-xid62-then-xid45-channel.txt"))
    by_code = {e.code: e for e in result.xids}
    assert by_code[45].action == "informational" and by_code[45].caused_by == []
    assert by_code[62].action == "reset"
