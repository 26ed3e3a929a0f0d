"""`make bench-attest`: the time TPM attestation adds to a deploy. Not a test.

The lab of tests/e2e/test_attest_boot.py (tests/e2e/attest_lab.py), outside pytest, on a
fresh database: QEMU q35 + OVMF network-booting Corral's UKI image through iPXE, the node
agent (attestation/agent/corral-attest.sh), Corral's production web server, one Celery
worker (its EK trust anchors: a swtpm CA made here) and the sushy-tools BMC. The gate
profile is attestation alone, so "admitted" is the attestation verdict.

Two nodes, same image, same UEFI + UKI path:
- `attested`: a swtpm TPM, site policy `required`. A first reference boot fails for want
  of a firmware reference; the bench signs it off (services.sign_off_reference) and
  re-validates it, so the timed boots are admitted (in_service) against the reference.
- `unattested`: no TPM (the agent says "no TPM"), site policy `allow_unattested`.

Each run (deploy over HTTP, the VM started once the BMC has powered the machine):
- deploy_s: the deploy operation's creation → Deployment.phoned_home;
- boot_s: Deployment.boot_started (BMC power-on) → phoned_home, the VM's boot;
- admit_s: phoned_home → the node's in_service event (gate judged);
- total_s: deploy_s + admit_s;
- the agent's own console lines `CORRAL: timing keys|challenge|activate+quote|agent <s>`;
  agent_attest_s is the sum of the three TPM steps; before_agent_s = boot_s − agent_s
  (firmware, iPXE and kernel: with a TPM, measured boot extends PCRs as it goes).
Then server-side verification alone: attestation.verify.verify on the last stored genuine
attestation (evidence decoded and expectations built once), --verify-reps times, median.

Last line (medians of --runs runs per kind):
    attest_boot added_s=… agent_s=… verify_ms=… attested_s=… unattested_s=… runs=N
added_s = attested boot_s − unattested boot_s (what the TPM and the agent's attestation
add before the phone-home); attested_s / unattested_s = total_s.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import requests

from devtools.benchdb import ADMIN_URL, fresh_django

DB = "corral_bench_attest"
TIMING = re.compile(r"CORRAL: timing (\S+) ([0-9.]+)")
ATTEST_STEPS = ("keys", "challenge", "activate+quote")


def say(msg: str) -> None:
    print(f"bench-attest: {msg}", flush=True)


def wait_for(what: str, predicate, timeout: float):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise SystemExit(f"bench-attest: timed out waiting for {what}")
        time.sleep(0.1)
    return value


class Lab:
    """The running peers and the two machines; one method per timed deploy."""

    def __init__(self, netboot, web, token: str, image) -> None:
        self.netboot, self.web, self.token, self.image = netboot, web, token, image
        self.machines: dict[str, dict] = {}

    def add(self, kind: str, node, mac: str, serial: str, tpm) -> None:
        import uuid as uuidlib

        self.machines[kind] = {
            "node": node.pk,
            "mac": mac,
            "serial": serial,
            "uuid": str(uuidlib.uuid4()),
            "tpm": tpm,
        }

    def post(self, path: str, body: dict) -> dict:
        answer = requests.post(
            f"{self.web.url}{path}",
            json=body,
            headers={"Authorization": f"Token {self.token}"},
            timeout=30,
        )
        assert answer.status_code == 202, (path, answer.status_code, answer.text)
        return answer.json()

    def verdict(self, node_id: int, after_event: int, timeout: float = 90):
        """The node's first in_service / failed event after `after_event`."""
        from inventory.models import LifecycleEvent

        return wait_for(
            "the gate's verdict",
            lambda: (
                LifecycleEvent.objects.filter(
                    node_id=node_id, pk__gt=after_event, to_state__in=("in_service", "failed")
                )
                .order_by("pk")
                .first()
            ),
            timeout,
        )

    def deploy(self, kind: str) -> dict:
        """Deploy the machine over HTTP, boot its VM once the BMC powered it, and wait for
        the gate's verdict. Returns the figures of this run (and the verdict's event)."""
        from inventory.models import LifecycleEvent, Node, Operation
        from provisioning.models import Deployment

        m = self.machines[kind]
        Node.objects.filter(pk=m["node"]).update(state="ready")  # back in the pool: not timed
        last_event = LifecycleEvent.objects.filter(node_id=m["node"]).order_by("pk").last()
        after = last_event.pk if last_event else 0
        op = self.post(
            f"/api/v1/nodes/{m['node']}/actions/deploy/", {"params": {"image": self.image.pk}}
        )
        deployment = wait_for(
            "the deploy step to power the machine",
            lambda: Deployment.objects.filter(
                node_id=m["node"], status="waiting", boot_started__isnull=False
            ).first(),
            60,
        )
        port = int(self.web.url.rsplit(":", 1)[1])
        vm = self.netboot.start(
            port, mac=m["mac"], serial=m["serial"], uuid=m["uuid"], tpm=m["tpm"], timeout=180
        )
        try:
            result = vm.wait()
        finally:
            vm.kill()
        if not result.phoned_home:
            raise SystemExit(f"bench-attest: {kind} boot did not phone home\n{result.tail(60)}")
        event = self.verdict(m["node"], after)
        deployment.refresh_from_db()
        created = Operation.objects.get(pk=op["id"]).created
        fig = {
            "deploy_s": (deployment.phoned_home - created).total_seconds(),
            "boot_s": (deployment.phoned_home - deployment.boot_started).total_seconds(),
            "admit_s": (event.created - deployment.phoned_home).total_seconds(),
        }
        fig["total_s"] = fig["deploy_s"] + fig["admit_s"]
        agent = {k: float(v) for k, v in TIMING.findall(result.serial_log)}
        for step in (*ATTEST_STEPS, "agent"):
            fig[f"{step}_s"] = agent.get(step, 0.0)
        fig["agent_attest_s"] = sum(agent.get(s, 0.0) for s in ATTEST_STEPS)
        # Power-on to the agent's start: firmware, iPXE, kernel (measured boot with a TPM).
        fig["before_agent_s"] = fig["boot_s"] - fig["agent_s"]
        fig["vm_wall_s"] = result.elapsed
        return {"fig": fig, "event": event, "deployment": deployment}


def verify_ms(node_id: int, reps: int) -> tuple[float, float]:
    """Median ms of verify.verify alone, and of judge.judge_node (verify + its DB reads and
    writes), on the node's last stored genuine attestation."""
    from attestation import judge
    from attestation.models import Attestation
    from attestation.verify import verify
    from inventory.models import Node

    node = Node.objects.get(pk=node_id)
    att = Attestation.objects.filter(node=node, status="passed").latest("pk")
    deployment = att.deployment
    evidence, expected = judge._decode(att), judge.expected_for(node, deployment, att)
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        report = verify(evidence, expected)
        times.append((time.perf_counter() - started) * 1000)
        assert report.ok, report.reason
    judged = []
    for _ in range(max(3, reps // 4)):
        started = time.perf_counter()
        verdict = judge.judge_node(node)
        judged.append((time.perf_counter() - started) * 1000)
        assert verdict.status == "pass", verdict.reason
    return statistics.median(times), statistics.median(judged)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--verify-reps", type=int, default=20)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args()

    os.environ["REDIS_URL"] = args.redis_url
    work = Path(tempfile.mkdtemp(prefix="bench-attest-"))
    os.environ["CELERY_BROKER_DIR"] = str(work / "broker")
    fresh_django(DB, args.admin_url)
    try:
        with ExitStack() as stack:
            return run(args, work, stack)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work: Path, stack: ExitStack) -> int:
    from django.db import connection

    from attestation import services
    from attestation.models import Attestation
    from tests.e2e import attest_lab
    from tests.factories import api_token, user_in
    from tests.peers import swtpm
    from tests.peers.netboot.artifacts import serve_files
    from tests.peers.netboot.uefi import UKI_NAME, build_uefi_artifacts
    from tests.peers.redfish import run_sushy_emulator
    from tests.peers.uefi_vm import UefiNetBoot, missing_prerequisites
    from tests.peers.util import wait_for_port
    from tests.peers.web import start_web, stop_web
    from tests.workers import purge_queues, start_worker, stop_worker

    missing = missing_prerequisites()
    if missing:
        sys.exit(f"attested-boot peer needs: {', '.join(missing)}")
    say("building the UKIs and ESP; starting the Redfish emulator, file server, EK CA")
    emulator = stack.enter_context(run_sushy_emulator(work / "bmc", systems=2))
    artifacts = build_uefi_artifacts(work / "artifacts")
    files = stack.enter_context(serve_files({UKI_NAME: artifacts.uki}))
    ca = swtpm.make_ca(work / "tpm-ca")
    netboot = UefiNetBoot(artifacts=artifacts, files=files, ca=ca, root=work / "vms")
    stack.callback(netboot.kill_all)

    web = start_web(work / "web.log", attest_lab.web_env())
    stack.callback(stop_web, web)
    wait_for_port(web.port, timeout=30, proc=web.process)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_TPM_CA_FILES": f"{ca.root_pem},{ca.intermediate_pem}",
    }
    queues = "corral,site.attest-req,site.attest-open"
    purge_queues(env, f"{queues},webhooks")
    worker = start_worker(env, work / "worker.log", queues=queues)
    stack.callback(stop_worker, worker)

    attest_lab.use_attest_only_profile()
    image = attest_lab.publish_uki_image(netboot)
    lab = Lab(netboot, web, api_token(user_in("technician")), image)
    for n, (kind, site, policy, tpm) in enumerate(
        (
            ("attested", "attest-req", "required", netboot.make_tpm("bench")),
            ("unattested", "attest-open", "allow_unattested", None),
        )
    ):
        mac, serial, _ = netboot.identity()
        node = attest_lab.attest_node(
            site=site,
            policy=policy,
            hostname=f"gpu-{kind}",
            mac=mac,
            serial=serial,
            bmc_address=emulator.address,
            system_id=emulator.systems[n].uuid,
        )
        lab.add(kind, node, mac, serial, tpm)
    connection.close()  # fresh rows from here on

    say("reference boot: no firmware reference yet, then signed off and re-validated")
    first = lab.deploy("attested")
    ref = first["event"]
    if ref.to_state != "failed" or "no firmware reference" not in ref.reason:
        sys.exit(f"bench-attest: reference boot: {ref.to_state}: {ref.reason}")
    att = Attestation.objects.get(deployment=first["deployment"])
    services.sign_off_reference(att, actor="user:bench-attest", note="make bench-attest")
    node_id = lab.machines["attested"]["node"]
    after = first["event"].pk
    lab.post(f"/api/v1/nodes/{node_id}/actions/validate/", {})
    event = lab.verdict(node_id, after)
    if event.to_state != "in_service":
        sys.exit(f"bench-attest: re-validated reference boot: {event.to_state}: {event.reason}")

    results: dict[str, list[dict[str, float]]] = {"attested": [], "unattested": []}
    for n in range(1, args.runs + 1):
        for kind in ("attested", "unattested"):
            done = lab.deploy(kind)
            if done["event"].to_state != "in_service":
                sys.exit(f"bench-attest: {kind} run {n}: {done['event'].reason}")
            results[kind].append(done["fig"])
            say(f"{kind} run {n}: " + " ".join(f"{k}={v:.2f}" for k, v in done["fig"].items()))

    verify, judged = verify_ms(node_id, args.verify_reps)
    say(f"server-side: verify.verify median {verify:.1f} ms, judge.judge_node {judged:.1f} ms")
    med = {
        kind: {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        for kind, runs in results.items()
    }
    for kind, fig in med.items():
        print(f"attest_boot {kind} medians: " + " ".join(f"{k}={v:.2f}" for k, v in fig.items()))
    att_m, un_m = med["attested"], med["unattested"]
    print(
        f"attest_boot added_s={att_m['boot_s'] - un_m['boot_s']:.1f} "
        f"agent_s={att_m['agent_attest_s']:.1f} verify_ms={verify:.0f} "
        f"attested_s={att_m['total_s']:.1f} unattested_s={un_m['total_s']:.1f} "
        f"runs={args.runs}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
