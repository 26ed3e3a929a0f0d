"""A real Prometheus (Debian's) on loopback, scraping what a test points it at, with
Corral's alert rules loaded, and its HTTP API to query."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.peers.util import (
    LOOPBACK,
    REPO_ROOT,
    free_port,
    stop_process_group,
    wait_for_port,
    wait_until,
)

RULES = REPO_ROOT / "deploy" / "prometheus" / "corral-rules.yml"


@dataclass
class Prometheus:
    url: str
    process: subprocess.Popen
    log: Path

    def api(self, path: str, **params: str) -> dict:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as resp:
            body = json.load(resp)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, promql: str) -> list[dict]:
        """The instant vector `promql` gives now: [{"metric": {...}, "value": [t, "v"]}]."""
        return self.api("query", query=promql)["result"]

    def wait_for(self, promql: str, check, timeout: float = 60.0) -> list[dict]:
        """Query until `check(result)` holds; the last result otherwise, in the failure."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(promql)
            if check(result):
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f"{promql} still gave {result} after {timeout} s")
            time.sleep(0.5)

    def alerts(self) -> list[dict]:
        return self.api("alerts")["alerts"]


def _ready(url: str) -> bool:
    """Prometheus listens before its storage is open and answers its API 503 until then."""
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=5) as resp:
            return resp.status == 200
    except OSError:  # urllib's HTTPError (503) and URLError are OSErrors
        return False


@contextlib.contextmanager
def run_prometheus(workdir: Path, target: str, interval_ms: int = 1000) -> Iterator[Prometheus]:
    """Prometheus scraping `target` (host:port, /metrics) every `interval_ms`, rules
    evaluated as often, listening on a free loopback port."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing: .ci/run installs Debian's prometheus package"
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(
        json.dumps(  # YAML is a superset of JSON
            {
                "global": {
                    "scrape_interval": f"{interval_ms}ms",
                    "evaluation_interval": f"{interval_ms}ms",
                },
                "rule_files": [str(RULES)],
                "scrape_configs": [
                    {"job_name": "corral", "static_configs": [{"targets": [target]}]}
                ],
            }
        )
    )
    port = free_port()
    log = workdir / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address={LOOPBACK}:{port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Prometheus(f"http://{LOOPBACK}:{port}", proc, log)
    try:
        wait_for_port(port, timeout=30, proc=proc)
        wait_until(lambda: _ready(server.url), timeout=30, what="Prometheus ready")
        yield server
    finally:
        stop_process_group(proc, timeout=15)
