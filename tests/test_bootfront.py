"""fleet.bootfront: what both front doors read from a boot request, as Django would."""

import pytest


@pytest.mark.parametrize(
    "query",
    [
        "mac=52:54:00:12:34:56&arch=x86_64",
        "arch=arm64&mac=52:54:00:12:34:56",
        "mac=&arch=",
        "mac=52%3A54%3A00%3A12%3A34%3A56",
        "mac=a&mac=b",
        "mac=&mac=b",
        "arch=i386",
        "",
        "x&y=1",
        "mac=52-54-00-12-34-56+&arch=x86_64",
        "mac=52:54:00:12:34:56;arch=arm64",
    ],
)
def test_the_query_is_read_as_django_would(query):
    from urllib.parse import parse_qs

    from fleet.bootfront import parse

    expected = parse_qs(query)
    assert parse(query) == (expected.get("mac", [""])[0], expected.get("arch", ["x86_64"])[0])


def test_a_host_check_is_remembered_per_setting(settings):
    from fleet.bootfront import host_allowed

    assert host_allowed("127.0.0.1:8000")
    settings.ALLOWED_HOSTS = ["corral.example.net"]
    assert not host_allowed("127.0.0.1:8000")
    assert host_allowed("corral.example.net")
