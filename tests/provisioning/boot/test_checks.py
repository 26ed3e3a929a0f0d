import pytest

from provisioning.boot import (
    RenderError,
    Reservation,
    Subnet,
    check_reservations,
    render_dnsmasq,
    render_kea,
)


def res(name, mac_tail, ip):
    return Reservation(hostname=name, mac=f"52:54:00:aa:00:{mac_tail}", ip=ip)


def test_clean_input_has_no_problems(subnets, reservations):
    assert check_reservations(reservations, subnets) == []


def test_duplicate_mac(subnets):
    problems = check_reservations(
        [res("gpu001", "01", "10.0.0.11"), res("gpu002", "01", "10.0.0.12")], subnets
    )
    assert problems == ["duplicate MAC 52:54:00:aa:00:01: gpu001 and gpu002"]


def test_duplicate_ip(subnets):
    problems = check_reservations(
        [res("gpu001", "01", "10.0.0.11"), res("gpu002", "02", "10.0.0.11")], subnets
    )
    assert problems == ["duplicate IP 10.0.0.11: gpu001 and gpu002"]


def test_duplicate_hostname_names_both_by_mac(subnets):
    problems = check_reservations(
        [res("gpu001", "01", "10.0.0.11"), res("GPU001", "02", "10.0.0.12")], subnets
    )
    assert problems == [
        "duplicate hostname GPU001: gpu001 (52:54:00:aa:00:01) and GPU001 (52:54:00:aa:00:02)"
    ]


def test_outside_every_subnet(subnets):
    assert check_reservations([res("gpu007", "07", "192.168.9.9")], subnets) == [
        "gpu007 (192.168.9.9) is outside every subnet"
    ]


def test_inside_dynamic_pool(subnets):
    assert check_reservations([res("gpu008", "08", "10.0.0.150")], subnets) == [
        "gpu008 (10.0.0.150) is inside the dynamic pool 10.0.0.100-10.0.0.199 of 10.0.0.0/24"
    ]


@pytest.mark.parametrize(
    "ip, why",
    [
        ("10.0.0.0", "is the network or broadcast address of 10.0.0.0/24"),
        ("10.0.0.255", "is the network or broadcast address of 10.0.0.0/24"),
        ("10.0.0.1", "is the gateway of 10.0.0.0/24"),
        ("10.0.0.5", "is the boot server of 10.0.0.0/24"),
    ],
)
def test_reserved_addresses(subnets, ip, why):
    assert check_reservations([res("gpu010", "10", ip)], subnets) == [f"gpu010 ({ip}) {why}"]


def test_overlapping_subnets():
    a = Subnet(cidr="10.0.0.0/16", gateway="10.0.0.1", boot_base_url="http://10.0.0.5")
    b = Subnet(cidr="10.0.4.0/24", gateway="10.0.4.1", boot_base_url="http://10.0.0.5")
    assert check_reservations([], [a, b]) == ["subnets 10.0.0.0/16 and 10.0.4.0/24 overlap"]


def test_three_way_duplicate_reports_each_against_first(subnets):
    problems = check_reservations(
        [res("a", "01", "10.0.0.11"), res("b", "02", "10.0.0.11"), res("c", "03", "10.0.0.11")],
        subnets,
    )
    assert problems == ["duplicate IP 10.0.0.11: a and b", "duplicate IP 10.0.0.11: a and c"]


@pytest.mark.parametrize("render", [render_kea, render_dnsmasq])
def test_exports_refuse_and_list_every_problem(render, subnets):
    bad = [
        res("gpu001", "01", "10.0.0.11"),
        res("gpu002", "01", "10.0.0.11"),
        res("gpu003", "03", "172.16.0.1"),
    ]
    with pytest.raises(RenderError) as err:
        render(subnets, bad)
    message = str(err.value)
    assert "duplicate MAC 52:54:00:aa:00:01: gpu001 and gpu002" in message
    assert "duplicate IP 10.0.0.11: gpu001 and gpu002" in message
    assert "gpu003 (172.16.0.1) is outside every subnet" in message


@pytest.mark.parametrize("render", [render_kea, render_dnsmasq])
def test_exports_need_a_subnet(render):
    with pytest.raises(RenderError, match="no subnets"):
        render([], [])
