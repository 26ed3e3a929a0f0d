"""One Redfish connection through sushy, and the translation of sushy's errors.

sushy's defaults suit a patient operator, not a fleet: ten 3-second retries per
failed GET and three connection attempts 2 s apart. Here a GET answered 5xx is retried
once after half a second, a connection is attempted once, and every request has an
explicit timeout; anything longer is the caller's backoff to decide.

Every answer's body is read here, not by requests, so that a hostile or broken BMC cannot
make one GET unbounded: at most MAX_DOCUMENT_BYTES are read, and the whole body must have
arrived within the timeout (a BMC that drips a byte a second never trips a per-read
timeout). A document must be JSON in UTF-8 (DSP0266); see get_json.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import requests
import sushy
from sushy import auth as sushy_auth
from sushy import connector as sushy_connector
from sushy import exceptions as sushy_exc

from provisioning.drivers.base import (
    BMCAuthError,
    BMCError,
    BMCFatalError,
    BMCResponseError,
    BMCSettingsError,
    BMCTransientError,
    BMCUnsupportedError,
    no_answer,
    scrub,
)
from provisioning.drivers.redfish import bodies, gate, sessions
from provisioning.drivers.redfish.bodies import (  # noqa: F401  (their home until now)
    MAX_DOCUMENT_BYTES,
    DocumentTooLarge,
)
from provisioning.drivers.redfish.sushy_log import quiet_sushy
from provisioning.drivers.redfish.systems import system_paths, systems_collection
from provisioning.drivers.settings import BMCSettings

LOG = logging.getLogger(__name__)
quiet_sushy()  # its lines repeat, at ERROR, what to_bmc_error turns into a BMCError

# One retry of a GET answered 5xx; 0 would make sushy fall back to 3 connection attempts.
SERVER_SIDE_RETRIES = 1
SERVER_SIDE_RETRIES_DELAY = 0.5
ROOT_PREFIX = "/redfish/v1/"
CONNECTING = "connecting"  # reading the service root: no Redfish answer yet

# How long a request waits for a place among its BMC's requests in flight (gate.py), in
# BMC timeouts: long enough for the requests ahead of it to finish or time out.
GATE_WAIT_TIMEOUTS = 3


def base_url(settings: BMCSettings) -> str:
    """scheme://host[:port] from an address that may be a bare host or a URL."""
    address = settings.address.strip()
    if "://" in address:
        parts = urlsplit(address)
        scheme, host, port = parts.scheme, parts.hostname or "", parts.port
    else:
        scheme, host, port = "https", address, None
    port = settings.port or port
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{scheme}://{host}" + (f":{port}" if port else "")


def display_address(settings: BMCSettings) -> str:
    """How messages name the BMC: its host, plus the port when it is not the default."""
    parts = urlsplit(base_url(settings))
    default = {"https": 443, "http": 80}[parts.scheme]
    host = parts.hostname or settings.address
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


class RedfishClient:
    """Lazily connected sushy root plus the resolved system path.

    Connecting lazily keeps ``get_driver`` free of network I/O, so building a driver
    never fails for reasons a retry would fix.
    """

    def __init__(self, settings: BMCSettings) -> None:
        self.settings = settings
        self.address = display_address(settings)
        self._root: sushy.Sushy | None = None
        self._kept: sessions.Kept | None = None
        self._key = sessions.key(base_url(settings), settings)
        self._rejected = False  # the BMC rejected the credentials: log out, keep nothing
        self._system_path: str | None = None
        self.gets = 0  # GETs through get_json: what a walk's budget counts (reader.py)

    # -- connection ---------------------------------------------------------------
    @property
    def root(self) -> sushy.Sushy:
        """The BMC's logged-in root: one this process kept (sessions.py), or a new one."""
        if self._root is None:
            kept = sessions.take(self._key)
            if kept is None:
                with self.translate(CONNECTING):
                    kept = self._connect()
            self._kept = kept
            self._root = kept.root
        return self._root

    def _connect(self) -> sessions.Kept:
        auth = sushy_auth.SessionOrBasicAuth(
            username=self.settings.username, password=self.settings.password
        )
        connector = sushy_connector.Connector(
            base_url(self.settings),
            verify=self.settings.verify_tls,
            server_side_retries=SERVER_SIDE_RETRIES,
            server_side_retries_delay=SERVER_SIDE_RETRIES_DELAY,
            default_request_timeout=self.settings.timeout,
            connect_timeout=min(self.settings.timeout, 5.0),
        )
        # Never the environment's proxies or .netrc: a worker's HTTPS_PROXY would send
        # BMC credentials through that proxy (and reading the environment on every
        # request was a fifth of an inspection's CPU).
        connector._session.trust_env = False
        # Every body, sushy's own reads too, through the bounded reader; the place the
        # request held at its BMC (gate.py) is given back once it ran.
        timeout, address = self.settings.timeout, self.address

        def read_body(response: requests.Response, **kwargs: Any) -> requests.Response:
            try:
                return bodies.read_whole(response, timeout, address)
            finally:
                gate.release(response)

        connector._session.hooks["response"].append(read_body)
        # Every request through the BMC's gate (gate.py), then the caller's egress policy,
        # if any, on every connection, redirect hops too.
        gated = gate.GatedAdapter(
            gate.gate_for(base_url(self.settings), self.settings.max_in_flight),
            wait=GATE_WAIT_TIMEOUTS * self.settings.timeout,
            inner=self.settings.http_adapter,
        )
        for prefix in ("http://", "https://"):
            connector._session.mount(prefix, gated)
        root = sushy.Sushy(
            base_url(self.settings), auth=auth, root_prefix=ROOT_PREFIX, connector=connector
        )
        return sessions.Kept(root=root, logout=lambda: self._logout(root, auth))

    def close(self) -> None:
        """Give the logged-in root back for the next operation on this BMC (sessions.py),
        or log it out when the BMC rejected its credentials."""
        kept, self._kept, self._root = self._kept, None, None
        if kept is None:
            return
        if self._rejected:
            kept.logout()
        else:
            sessions.give_back(self._key, kept, most=self.settings.max_in_flight)

    def _logout(self, root: sushy.Sushy, auth: sushy_auth.SessionOrBasicAuth) -> None:
        """Log out of the Redfish session, if one was opened, and drop the socket."""
        try:
            auth.close()
        except Exception as exc:  # never the caller's error; the BMC times the session out
            LOG.info(
                "Could not close Redfish session on BMC at %s: %s",
                self.address,
                scrub(str(exc), [self.settings.password]),
            )
        finally:
            # sushy's __del__ would try to log out again.
            root._auth = None
            root._conn.close()

    @property
    def expands(self) -> bool:
        """Whether the service root says it expands a collection's members one level deep
        (ProtocolFeaturesSupported.ExpandQuery: Levels, MaxLevels >= 1), as the bmcweb of
        a GB200 tray, a BlueField-3 and Dell's iDRAC do."""
        features = (self.root.json or {}).get("ProtocolFeaturesSupported") or {}
        expand = features.get("ExpandQuery") or {}
        levels = expand.get("MaxLevels")
        return expand.get("Levels") is True and isinstance(levels, int) and levels >= 1

    # -- resources ----------------------------------------------------------------
    def get_json(self, path: str) -> dict[str, Any]:
        """GET a resource as a dict, through sushy's connector (auth, retries, timeout).

        Redfish documents are UTF-8 (DSP0266), and this reads them strictly so: a body with
        bytes that are not UTF-8 is refused (BMCResponseError naming the first bad byte),
        never decoded with replacement characters or a guessed codec, because what a
        document says (a serial, a model) is stored and compared, and a guessed value is
        worse than a missing one. A UTF-8 byte order mark is allowed. A body larger than
        MAX_DOCUMENT_BYTES raises DocumentTooLarge; JSON that does not parse, ValueError.
        """
        self.gets += 1
        response = self.root._conn.get(path=path)
        body = response.content
        if not body:
            return {}
        at = f"BMC at {self.address} answered {path}"
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise BMCResponseError(
                f"{at} with a document that is not UTF-8 (byte {body[exc.start]:#04x} at "
                f"offset {exc.start}); Redfish documents are UTF-8",
                address=self.address,
            ) from exc
        try:
            data = json.loads(text)
        except RecursionError as exc:
            raise BMCResponseError(
                f"{at} with JSON nested too deeply to read", address=self.address
            ) from exc
        if not isinstance(data, dict):
            raise BMCResponseError(f"{at} with JSON that is not an object", address=self.address)
        return data

    def members(self, collection_path: str) -> list[str]:
        """Member paths of a Redfish collection."""
        data = self.get_json(collection_path)
        members = data.get("Members") or []
        if not isinstance(members, list):
            raise BMCResponseError(
                f"BMC at {self.address} answered {collection_path} with a malformed Members list",
                address=self.address,
            )
        return [m["@odata.id"] for m in members if isinstance(m, dict) and m.get("@odata.id")]

    @property
    def system_path(self) -> str:
        if self._system_path is None:
            self._system_path = self._resolve_system_path()
        return self._system_path

    def _resolve_system_path(self) -> str:
        systems = systems_collection(self)
        if not systems:
            raise BMCUnsupportedError(
                f"BMC at {self.address} does not list any Systems in its Redfish service root",
                address=self.address,
            )
        wanted = self.settings.system_id
        if wanted:
            return wanted if wanted.startswith("/") else f"{systems.rstrip('/')}/{wanted}"
        paths = system_paths(self)
        if len(paths) == 1:
            return paths[0]
        ids = ", ".join(p.rstrip("/").rsplit("/", 1)[-1] for p in paths) or "none"
        raise BMCSettingsError(
            {
                "system_id": f"BMC at {self.address} manages {len(paths)} systems ({ids}); "
                "set system_id to one of them"
            },
            address=self.address,
        )

    def system(self) -> sushy.resources.system.system.System:
        """A freshly read ComputerSystem resource."""
        return self.root.get_system(self.system_path)

    # -- errors -------------------------------------------------------------------
    @contextlib.contextmanager
    def translate(self, doing: str) -> Iterator[None]:
        """Turn sushy/requests exceptions into BMCError with a technician's message."""
        try:
            yield
        except BMCError:
            raise
        except Exception as exc:
            raise self.to_bmc_error(exc, doing) from exc

    def to_bmc_error(self, exc: Exception, doing: str) -> BMCError:
        at = f"BMC at {self.address}"
        detail = scrub(str(exc), [self.settings.password])
        kwargs = {"address": self.address}
        if isinstance(exc, sushy_exc.AccessError):
            self._rejected = True
            if exc.status_code == 403:
                return BMCAuthError(
                    f"{at} refused access while {doing}: the user "
                    f"{self.settings.username!r} lacks the privilege",
                    **kwargs,
                )
            return BMCAuthError(
                f"{at} rejected the credentials of user {self.settings.username!r} while {doing}",
                **kwargs,
            )
        if isinstance(exc, sushy_exc.ConnectionError):
            cause = exc.__context__
            if isinstance(cause, requests.exceptions.SSLError) and _untrusted(cause):
                return BMCFatalError(
                    f"{at} presented a TLS certificate that is not trusted while {doing}; "
                    "install its CA or turn off verify_tls",
                    **kwargs,
                )
            return self.no_answer(cause or exc, doing)
        if doing == CONNECTING and isinstance(
            exc, sushy_exc.HTTPError | ValueError | KeyError | TypeError | sushy_exc.SushyError
        ):
            # No Redfish service root: another service answers on that port.
            return self.no_answer(exc, doing)
        if isinstance(exc, sushy_exc.HTTPError):
            return self._http_error(exc, doing)
        if isinstance(exc, sushy_exc.InvalidParameterValueError | sushy_exc.MissingActionError):
            return BMCUnsupportedError(
                f"{at} does not support this while {doing}: {detail}", **kwargs
            )
        if isinstance(exc, sushy_exc.UnknownDefaultError):
            return BMCSettingsError({"system_id": f"{at}: {detail}"}, **kwargs)
        if isinstance(exc, ValueError | KeyError | TypeError | sushy_exc.SushyError):
            # JSON that does not parse, or parses into the wrong shapes.
            return BMCResponseError(
                f"{at} sent a malformed answer while {doing}: {type(exc).__name__}: {detail[:300]}",
                **kwargs,
            )
        if isinstance(exc, requests.exceptions.RequestException):
            return self.no_answer(exc, doing)
        return BMCFatalError(
            f"{at}: unexpected {type(exc).__name__} while {doing}: {detail[:300]}", **kwargs
        )

    def no_answer(self, exc: BaseException, doing: str) -> BMCTransientError:
        """One message for every way of not getting a Redfish answer (base.no_answer); what
        happened goes to the server log, for admins (INFO: the message itself is said at
        WARNING by whoever records it, once)."""
        detail = scrub(str(exc), [self.settings.password])[:300]
        LOG.info(
            "BMC at %s: no Redfish answer while %s: %s: %s",
            self.address,
            doing,
            type(exc).__name__,
            detail,
        )
        return no_answer(self.address, "Redfish", doing)

    def _http_error(self, exc: sushy_exc.HTTPError, doing: str) -> BMCError:
        at = f"BMC at {self.address}"
        status = exc.status_code
        why = scrub(exc.detail or "", [self.settings.password])
        why = f" ({why})" if why else ""
        kwargs = {"address": self.address}
        if status == 404:
            return BMCUnsupportedError(
                f"{at} has no such resource while {doing} (HTTP 404){why}", **kwargs
            )
        if status == 409 or status == 503 or (status >= 500 and status != 501):
            return BMCTransientError(
                f"{at} answered HTTP {status} while {doing}{why}; it may be busy, will retry",
                **kwargs,
            )
        if status in (405, 501):
            return BMCUnsupportedError(
                f"{at} does not support this while {doing} (HTTP {status}){why}", **kwargs
            )
        return BMCFatalError(
            f"{at} rejected the request while {doing} (HTTP {status}){why}", **kwargs
        )


def http_status(exc: BaseException) -> int | None:
    """The HTTP status behind a (translated) sushy error, if any."""
    cause = exc.__cause__ if isinstance(exc, BMCError) else exc
    return getattr(cause, "status_code", None)


def _untrusted(exc: BaseException) -> bool:
    """A TLS peer whose certificate did not verify (a BMC's self-signed one, most often),
    told apart because the fix is the operator's (its CA, or verify_tls off). A handshake
    that failed otherwise (no TLS on that port) is no answer like any other."""
    return "CERTIFICATE_VERIFY_FAILED" in str(exc) or "certificate verify failed" in str(exc)
