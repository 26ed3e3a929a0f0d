"""One signed POST to a receiver, and what came of it.

Signed with the `standardwebhooks` package (the reference implementation of the Standard
Webhooks spec, standardwebhooks.com) rather than a home-made HMAC scheme: receivers verify
with the same library in their language, or with any Svix-compatible verifier, and the
headers are the ones they already know: `webhook-id` (the event's msg id, the same on every
retry and redelivery, so receivers de-duplicate on it), `webhook-timestamp` (unix seconds of
this attempt; receivers refuse one more than 5 minutes off, which stops replays) and
`webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.

Where it goes is the egress policy's (core.egress): every connection is checked by the
address it connects to (core.egress_http), and a redirect is never followed: a receiver
answering 3xx has failed that attempt. A URL the policy refuses is not sent to at all.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

import requests
from standardwebhooks import Webhook

from core import egress, egress_http

USER_AGENT = "Corral-Webhooks/1"
_local = threading.local()


@dataclass(frozen=True)
class Outcome:
    """ok: 2xx. unreachable: no answer at all (refused, reset, timed out), which says the
    endpoint is down, not that this payload is unwelcome: the whole subscription backs off.
    refused: the egress policy refused the destination; nothing was sent."""

    ok: bool
    status_code: int | None
    latency_ms: int
    error: str
    unreachable: bool
    refused: bool = False


def signed_headers(signer: Webhook, msg_id: str, body: str, now: float | None = None) -> dict:
    ts = int(time.time() if now is None else now)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": signer.sign(msg_id, datetime.fromtimestamp(ts, tz=UTC), body),
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


def session() -> requests.Session:
    """One keep-alive session per worker thread: a pump's POSTs reuse their connection.

    It does not read the environment on every request (requests' default walks all of
    os.environ for proxy settings per call, a third of a POST's CPU); proxies() reads the
    proxy variables once per URL instead. Its connections keep to the egress policy."""
    s = getattr(_local, "session", None)
    if s is None:
        s = _local.session = egress_http.guarded_session(egress.WEBHOOK)
        s.trust_env = False
    return s


@lru_cache(maxsize=256)
def proxies(url: str) -> dict[str, str]:
    """HTTP(S)_PROXY / NO_PROXY as they apply to `url` (read once per URL)."""
    return requests.utils.get_environ_proxies(url)


def post(signer: Webhook, url: str, msg_id: str, body: str, timeout: float) -> Outcome:
    headers = signed_headers(signer, msg_id, body)
    started = time.monotonic()
    through = proxies(url)
    try:
        if through:  # the proxy resolves the name: check it here (direct: the connection)
            egress.check_url(url, egress.WEBHOOK)
        resp = session().post(
            url,
            data=body.encode(),
            headers=headers,
            timeout=timeout,
            allow_redirects=False,
            proxies=through,
        )
    except egress.Refused as exc:
        latency = int((time.monotonic() - started) * 1000)
        return Outcome(False, None, latency, f"not sent: {exc}"[:300], False, refused=True)
    except requests.Timeout:
        return _unreachable(started, f"timed out after {timeout:g} s")
    except requests.ConnectionError as exc:
        return _unreachable(started, f"connection failed: {_short(exc)}")
    except requests.RequestException as exc:
        return _unreachable(started, f"request failed: {_short(exc)}")
    latency = int((time.monotonic() - started) * 1000)
    if 200 <= resp.status_code < 300:
        return Outcome(True, resp.status_code, latency, "", False)
    text = resp.text[:120].strip().replace("\n", " ")
    return Outcome(
        False, resp.status_code, latency, f"HTTP {resp.status_code} {text}".strip(), False
    )


def _unreachable(started: float, error: str) -> Outcome:
    broken = getattr(_local, "session", None)
    _local.session = None  # a broken connection is not reused
    if broken is not None:
        broken.close()
    return Outcome(False, None, int((time.monotonic() - started) * 1000), error[:300], True)


def _short(exc: BaseException) -> str:
    """The innermost reason ("Connection refused"), not urllib3's nested repr."""
    text = str(exc)
    for marker in ("Connection refused", "Connection reset", "Name or service not known"):
        if marker in text:
            return marker
    return text[:200]
