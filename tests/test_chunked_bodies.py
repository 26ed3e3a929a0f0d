"""A request body sent chunked (Transfer-Encoding, no Content-Length) is read, through the
production server (issue 36, finding 7: a chunked PATCH answered 200 and changed
nothing, because WSGI and DRF read a body without a length as empty)."""

from __future__ import annotations

import contextlib
import http.client
import json
from urllib.parse import urlsplit

import pytest

from inventory.models import Node

pytestmark = pytest.mark.django_db(transaction=True)


def chunked(url: str, method: str, token: str, parts: list[bytes]) -> tuple[int, dict]:
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        # A 413 may come before the whole body is sent: read that answer.
        with contextlib.suppress(BrokenPipeError):
            conn.request(
                method,
                where.path,
                body=iter(parts),
                headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
                encode_chunked=True,
            )
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_a_chunked_patch_changes_what_it_says(corral_web, node, users):
    from tests.conftest import token_for

    token = token_for(users["integration"])
    status, body = chunked(
        f"{corral_web}/api/v1/nodes/{node.pk}/", "PATCH", token, [b'{"model": ', b'"SYS-821GE"}']
    )
    assert status == 200, body
    assert body["model"] == "SYS-821GE"
    assert Node.objects.get(pk=node.pk).model == "SYS-821GE"


def test_a_chunked_body_past_the_limit_is_a_413_and_changes_nothing(corral_web, node, users):
    from django.conf import settings

    from tests.conftest import token_for

    token = token_for(users["integration"])
    before = Node.objects.get(pk=node.pk).model
    filler = b" " * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    status, body = chunked(
        f"{corral_web}/api/v1/nodes/{node.pk}/", "PATCH", token, [b'{"model": "x"', filler, b"}"]
    )
    assert status == 413
    assert "larger than" in body["detail"]
    assert Node.objects.get(pk=node.pk).model == before
