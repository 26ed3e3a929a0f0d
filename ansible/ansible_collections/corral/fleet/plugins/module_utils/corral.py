"""Corral's REST API (/api/v1/) for the corral.fleet modules and inventory plugin: a token in
every request, JSON both ways, pages followed, operations waited for, errors turned into
CorralError / ApiError (the server's `detail` and what else its answer says).

It behaves as the `corral` command line's client does (corral_cli/client.py, errors.py,
ops.py), with Ansible's own HTTP code (open_url) instead of requests: redirects are not
followed (a token must not go to another address), a `next` page is asked of the
configured URL, a passing outage while an operation is watched is asked again a few times,
and the token is never put into a message."""

from __future__ import annotations

import json
import re
import time
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode, urlsplit, urlunsplit

from ansible.module_utils.basic import env_fallback
from ansible.module_utils.urls import open_url

API = "/api/v1"
VERSION = "1.0.0"
PAGE_SIZE = 1000  # the most the API serves in one page
ENDED = ("succeeded", "failed", "cancelled", "skipped")
# A restart or failover of Corral while an operation is watched is waited out this many
# times in a row (502, 503, 504, a refused connection), as `corral ops watch` does.
TRANSIENT_STATUSES = (502, 503, 504)
TRANSIENT_TRIES = 5
ERRNO = re.compile(r"\[Errno -?\d+\] [^'\")]+")
HEX = re.compile(r"^[0-9a-f]{12}$")


def corral_argument_spec():
    """The options every corral.fleet module takes (doc fragment corral.fleet.corral)."""
    return {
        "url": {"type": "str", "required": True, "fallback": (env_fallback, ["CORRAL_URL"])},
        "token": {
            "type": "str",
            "required": True,
            "no_log": True,
            "fallback": (env_fallback, ["CORRAL_TOKEN"]),
        },
        "validate_certs": {"type": "bool", "default": True},
        "ca_path": {"type": "path"},
        "request_timeout": {"type": "float", "default": 60},
    }


class CorralError(Exception):
    """A task cannot go on; the message says why and, where it can, what to do."""


class ApiError(CorralError):
    """Corral answered with an HTTP error: its `detail`, and what else the body says."""

    def __init__(self, status, method, url, body):
        self.status, self.method, self.url, self.body = status, method, url, body
        super().__init__("\n".join(self.lines()))

    @property
    def detail(self):
        if isinstance(self.body, dict) and isinstance(self.body.get("detail"), str):
            return self.body["detail"]
        return ""

    def lines(self):
        body = self.body
        head = self.detail or f"Corral answered HTTP {self.status} to {self.method} {self.url}"
        if self.status == 401:
            head += " (the token was refused: give a valid API token)"
        found = [head]
        if not isinstance(body, dict):
            if isinstance(body, list):  # DRF's answer to a ValidationError of a list
                found += [f"  {item}" for item in body]
            elif body and not self.detail:
                found.append(f"  (not JSON: {str(body)[:200]!r})")
            return found
        for problem in body.get("problems") or []:
            found.append(flatten(problem))
        if body.get("allowed") is not None:
            found.append(f"allowed now: {', '.join(body['allowed']) or 'none'}")
        if not self.detail:  # a 400 naming fields: {"reason": ["..."]}
            found += [f"{key}: {flatten(value)}" for key, value in body.items()]
        return found


def flatten(value):
    if isinstance(value, list):
        return " ".join(flatten(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {flatten(v)}" for k, v in value.items())
    return str(value)


def normalise_url(url):
    """The Corral's base URL: scheme and host (and a prefix it is served under), without a
    trailing slash or the API's own path, so `https://corral/api/v1/` works too."""
    url = (url or "").strip().rstrip("/")
    if url.endswith(API):
        url = url[: -len(API)]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CorralError(f"{url!r} is not a Corral URL: give http(s)://host[:port]")
    if parts.query or parts.fragment:
        raise CorralError(f"{url!r}: give the Corral's URL without a query or fragment")
    return url


def reason(exc):
    """The words of a connection error (refused, name unknown), not urllib's repr."""
    text = str(getattr(exc, "reason", exc))
    found = ERRNO.search(text)
    if found:
        return found.group(0).strip()
    for words in ("Name or service not known", "certificate verify failed", "Connection refused"):
        if words in text:
            return words
    return text or exc.__class__.__name__


def decode(raw):
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class Client:
    def __init__(self, url, token, validate_certs=True, timeout=60, ca_path=None):
        self.url = normalise_url(url)
        if not (token or "").strip():
            raise CorralError("No API token: give `token` or set CORRAL_TOKEN.")
        self.headers = {
            "Authorization": f"Token {token.strip()}",
            "Accept": "application/json",
        }
        self.validate_certs = validate_certs
        self.timeout = timeout
        self.ca_path = ca_path

    def address(self, path, params=None):
        """`nodes/` under the configured URL (with any prefix it has), with its query; a
        whole URL (a page's `next`, rebuilt on the configured URL) as it is."""
        if path.startswith(("http://", "https://")):
            url = path
        else:
            url = self.url + (path if path.startswith("/") else f"{API}/{path}")
        if params:
            url += "?" + urlencode(params, doseq=True)
        return url

    def call(self, method, path, params=None, body=None, headers=None):
        """(data, headers) of the answer; an HTTP error is ApiError, no answer CorralError."""
        url = self.address(path, params)
        shown = url.split("?", 1)[0]
        sent = dict(self.headers, **(headers or {}))
        data = None
        if body is not None:
            data = json.dumps(body)
            sent["Content-Type"] = "application/json"
        try:
            response = open_url(
                url,
                data=data,
                headers=sent,
                method=method,
                timeout=self.timeout,
                validate_certs=self.validate_certs,
                ca_path=self.ca_path,
                follow_redirects="none",  # a redirect elsewhere must not take the token with it
                http_agent=f"corral-ansible/{VERSION}",
                use_netrc=False,  # ~/.netrc must not replace the token with a password
                use_proxy=True,
            )
            return decode(response.read()), dict(response.headers)
        except HTTPError as exc:
            if 300 <= exc.code < 400:
                where = exc.headers.get("Location", "") if exc.headers else ""
                raise CorralError(
                    f"{method} {shown}: Corral redirected to {where or 'elsewhere'}; give that "
                    "address as the URL"
                ) from None
            try:
                raw = exc.read()
            except Exception:  # the body is a courtesy; the status says enough
                raw = b""
            raise ApiError(exc.code, method, shown, decode(raw)) from None
        except TimeoutError:
            raise CorralError(f"No answer from Corral at {shown} in time (timed out).") from None
        except URLError as exc:
            words = reason(exc)
            if "CERTIFICATE" in words.upper() or "SSL" in str(exc.reason).upper():
                raise CorralError(f"TLS failed with Corral at {shown}: {words}") from None
            raise CorralError(f"Cannot reach Corral at {shown}: {words}") from None
        except OSError as exc:  # a connection reset or refused past urllib's handling
            raise CorralError(f"Cannot reach Corral at {shown}: {reason(exc)}") from None

    def get(self, path, params=None):
        return self.call("GET", path, params)[0]

    def post(self, path, body):
        return self.call("POST", path, body=body)[0]

    def patch(self, path, body, etag=None):
        """A partial update; with `etag` (from the read it is based on) Corral refuses it
        with 412 if someone else changed the object meanwhile."""
        return self.call("PATCH", path, body=body, headers={"If-Match": etag} if etag else None)[0]

    def delete(self, path):
        return self.call("DELETE", path)[0]

    def pages(self, path, params=None):
        """Every item of a paginated list, following `next` (asked of the configured URL:
        a `next` naming another host, as a proxy's answer may, gets no token)."""
        data = self.get(path, dict(params or {}, page_size=PAGE_SIZE))
        while True:
            if isinstance(data, list):  # an unpaginated list
                yield from data
                return
            yield from (data or {}).get("results") or []
            following = (data or {}).get("next")
            if not following:
                return
            parts = urlsplit(following)
            base = urlsplit(self.url)
            data = self.get(urlunsplit((base.scheme, base.netloc, parts.path, parts.query, "")))

    # --- objects -----------------------------------------------------------------------

    def find_node(self, name):
        """The node whose hostname is `name` (or, failing that, whose serial is), or None."""
        wanted = (name or "").strip()
        if not wanted:
            raise CorralError("Give a node's hostname or serial.")
        for key in ("hostname", "serial"):  # whole values, any case (the API's filters)
            exact = list(self.pages("nodes/", {key: wanted}))
            if len(exact) == 1:
                return exact[0]
        return None

    def node(self, node_id):
        """(node, etag): one node as it reads now, with the ETag an update names."""
        data, headers = self.call("GET", f"nodes/{node_id}/")
        etag = next((v for k, v in headers.items() if k.lower() == "etag"), None)
        return data, etag

    # --- operations --------------------------------------------------------------------

    def operation(self, op_id, interval, sleep=time.sleep):
        """The operation now; a passing outage of Corral is asked again a few times."""
        for attempt in range(1, TRANSIENT_TRIES + 1):
            try:
                return self.get(f"operations/{op_id}/")
            except ApiError as exc:
                if exc.status not in TRANSIENT_STATUSES or attempt == TRANSIENT_TRIES:
                    raise
            except CorralError as exc:
                if attempt == TRANSIENT_TRIES or "Cannot reach" not in str(exc):
                    raise
            sleep(interval)
        raise CorralError(f"operation {op_id}: no answer")  # not reached

    def wait(self, op, timeout, interval=2.0, sleep=time.sleep, clock=time.monotonic):
        """Ask for the operation every `interval` seconds until it ends; (op, ended).
        Not ended after `timeout` seconds: the operation goes on, and `ended` is False."""
        started = clock()
        while op.get("status") not in ENDED:
            if timeout is not None and clock() - started >= timeout:
                return op, False
            sleep(interval)
            op = self.operation(op["id"], interval, sleep)
        return op, True


def outcome(op):
    """None if the operation succeeded, else why not (as `corral ops watch` says it)."""
    status = op.get("status")
    if status == "succeeded":
        return None
    why = op.get("error") or op.get("message") or "no reason given"
    return f"Operation {op.get('id')} ({op.get('kind')}) {status}: {why}"


def normalise_mac(value):
    """A MAC in Corral's form (52:54:00:ab:cd:ef) from any notation; as given if it is none."""
    digits = re.sub(r"[:\-.\s]", "", str(value or "").lower())
    if not HEX.match(digits):
        return str(value or "")
    return ":".join(digits[i : i + 2] for i in range(0, 12, 2))


def client_of(module):
    """A Client from a module's url/token/validate_certs/ca_path/request_timeout."""
    p = module.params
    try:
        return Client(
            p["url"],
            p["token"],
            validate_certs=p["validate_certs"],
            timeout=p["request_timeout"],
            ca_path=p.get("ca_path"),
        )
    except CorralError as exc:
        module.fail_json(msg=str(exc))


def fail(module, exc, **result):
    """End the task with Corral's answer: its words, and the HTTP status and body."""
    if isinstance(exc, ApiError):
        result.update(status=exc.status, body=exc.body)
    module.fail_json(msg=str(exc), **result)
