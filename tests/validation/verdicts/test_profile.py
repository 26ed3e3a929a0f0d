"""Profile loading: the default profile's numbers, and every way a profile is refused."""

import pytest

from validation.verdicts import (
    JUDGES,
    ProfileError,
    effective_thresholds,
    load_profile,
    parse_profile,
)

from .support import PROFILE, check_data, profile_data


def refused(data) -> str:
    with pytest.raises(ProfileError) as raised:
        parse_profile(data, "test.json")
    return str(raised.value)


@pytest.mark.parametrize(
    ("check", "model", "fabric", "floor"),
    [
        ("nccl-allreduce-2node", "H100-SXM", "ib-400g", 430),
        ("nccl-allreduce-2node", "H100-SXM", "tcpxo", 300),
        ("nccl-allreduce-2node", "H200-SXM", "ib-400g", 430),
        ("nccl-allreduce-2node", "H200-SXM", "tcpxo", 300),
        ("nccl-allreduce-nvlink", "H100-SXM", "tcpxo", 350),
        ("nccl-allreduce-nvlink", "H200-SXM", "ib-400g", 350),
    ],
)
def test_default_profile_busbw_floors(check, model, fabric, floor):
    resolved = effective_thresholds(PROFILE.check(check), model, fabric)
    assert resolved["busbw_inplace_at_max_gbps"] == floor
    assert resolved["min_size_bytes"] == 8 << 30


def test_default_profile_numbers_all_carry_a_source():
    """Every numeric floor/ceiling says where it came from, on its leaf or an enclosing node."""

    def walk(node, sourced, path, out):
        if isinstance(node, dict):
            here = sourced or "source" in node
            for key, value in node.items():
                if key != "source":
                    walk(value, here, f"{path}.{key}", out)
        elif isinstance(node, int | float) and not isinstance(node, bool) and not sourced:
            out.append(path)

    missing = []
    for check in PROFILE.checks():
        for key, tree in check.thresholds.items():
            if key != "level":  # mirrors "-r 3" in the command, checked at load time
                walk(tree, False, f"{check.name}.{key}", missing)
    assert not missing


def test_default_profile_shape():
    assert PROFILE.gpu_models == ("H100-SXM", "H200-SXM")
    assert PROFILE.fabrics == ("ib-400g", "tcpxo")
    for check in PROFILE.checks():
        assert check.tool in JUDGES and check.timeout_s > 0 and check.command
    required = {c.name for c in PROFILE.checks() if c.required}
    assert {"gpu-query", "nvlink-topology"}.isdisjoint(required)


def test_negative_timeout_is_refused():
    data = profile_data()
    check_data(data, "gpu-health")["timeout_s"] = -5
    assert (
        "phase 'preflight' check 'gpu-health': 'timeout_s' must be a positive number of "
        "seconds, got -5"
    ) in refused(data)


def test_misspelt_gpu_model_is_refused_with_a_suggestion():
    data = profile_data()
    floors = check_data(data, "nccl-allreduce-nvlink")["thresholds"]["busbw_inplace_at_max_gbps"]
    floors["gpu_model"]["H100-SMX"] = floors["gpu_model"].pop("H100-SXM")
    message = refused(data)
    assert "gpu_model 'H100-SMX' is not declared" in message
    assert "(did you mean 'H100-SXM'?)" in message
    # ...and the declared model it was meant for now has no floor:
    assert "busbw_inplace_at_max_gbps: no value for H100-SXM on ib-400g" in message


def test_declared_pair_without_a_floor_is_refused():
    data = profile_data()
    floors = check_data(data, "nccl-allreduce-2node")["thresholds"]["busbw_inplace_at_max_gbps"]
    del floors["gpu_model"]["H200-SXM"]["fabric"]["tcpxo"]
    assert (
        "check 'nccl-allreduce-2node' thresholds.busbw_inplace_at_max_gbps: no value for "
        "H200-SXM on tcpxo"
    ) in refused(data)


def test_wrong_value_types_and_unknown_keys_are_refused():
    data = profile_data()
    check = check_data(data, "iperf3-host-network")
    check["thresholds"]["min_received_gbps"] = {"default": "forty"}
    check["requird"] = True
    check_data(data, "kernel-xid")["thresholds"]["fail_actions"] = ["investigate", "panic"]
    data["extra"] = 1
    message = refused(data)
    assert "thresholds.min_received_gbps.default: expected a number, got 'forty'" in message
    assert (
        "check 'iperf3-host-network': unknown key 'requird' (did you mean 'required'?)" in message
    )
    assert "thresholds.fail_actions: ['panic'] not among" in message
    assert "profile: unknown key 'extra'" in message
    assert "4 problem(s)" in message  # all reported at once


def test_soak_timeout_must_cover_the_duration():
    data = profile_data()
    data["phases"][-1]["soak"]["duration_s"] = 600
    assert "check 'gpu-burn': timeout_s 300 is shorter than the soak duration_s 600" in refused(
        data
    )
    data["phases"][-1]["soak"] = {"duration_s": 60, "repeat": 0}
    assert "phase 'burn-in'.soak.repeat: must be an integer >= 1, got 0" in refused(data)


def test_dcgm_level_must_run_the_required_tests():
    data = profile_data()
    check_data(data, "dcgm-diag-r3")["command"] = "dcgmi diag -r 2 -j"
    message = refused(data)
    assert "thresholds.level is 3 but the command runs -r 2" in message
    data = profile_data()
    dcgm = check_data(data, "dcgm-diag-r3")
    dcgm["command"] = "dcgmi diag -r medium -j"
    del dcgm["thresholds"]["level"]
    assert (
        "required test 'diagnostic' only runs at level 3 or above, but this check runs level 2"
    ) in refused(data)


def test_xid_action_lists_must_not_overlap():
    data = profile_data()
    check_data(data, "kernel-xid")["thresholds"]["degraded_actions"] = ["application", "reset"]
    assert "hardware_actions and degraded_actions both list ['reset']" in refused(data)


def test_duplicate_names_and_empty_phases_are_refused():
    data = profile_data()
    check_data(data, "gpu-query")["name"] = "gpu-health"
    data["phases"][1]["name"] = "preflight"
    message = refused(data)
    assert "check name 'gpu-health' is used more than once" in message
    assert "phase name 'preflight' is used more than once" in message
    data = profile_data()
    data["phases"][0]["checks"] = []
    assert "phase 'preflight': 'checks' must be a non-empty list" in refused(data)


def test_unreadable_or_invalid_files(tmp_path):
    with pytest.raises(ProfileError, match="cannot read the file"):
        load_profile(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",\n "phases": [}')
    with pytest.raises(ProfileError, match=r"not valid JSON: .* at line 2"):
        load_profile(broken)
    with pytest.raises(ProfileError, match="expected a JSON object"):
        parse_profile([], "list.json")
