"""The `netboot` session fixture: boot artifacts built once, their HTTP server, and QEMU
machines (tests/peers/qemu.py) started with identities that never collide.
"""

from __future__ import annotations

import itertools
import uuid as uuidlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.peers.netboot.artifacts import (
    ArtifactServer,
    BootArtifacts,
    build_boot_artifacts,
    serve_artifacts,
)
from tests.peers.qemu import APT_HINT, VM, VMResult, missing_prerequisites, start_vm


@dataclass
class NetBoot:
    """What the `netboot` fixture yields: the artifacts, their server, and VM starters.

    Identities (MAC 52:54:00:c0:00:NN, serial SN-NETBOOT-NN, a random UUID) are handed
    out in sequence unless given, so parallel VMs never collide.
    """

    artifacts: BootArtifacts
    files: ArtifactServer
    root: Path
    _vms: list[VM] = field(default_factory=list)
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def identity(self) -> tuple[str, str, str]:
        n = next(self._counter)
        return (
            f"52:54:00:c0:{n // 256 % 256:02x}:{n % 256:02x}",
            f"SN-NETBOOT-{n:02d}",
            str(uuidlib.uuid4()),
        )

    def start(
        self,
        app_port: int,
        *,
        mac: str | None = None,
        serial: str | None = None,
        uuid: str | None = None,
        **options: object,
    ) -> VM:
        """Start one VM against the app on app_port (loopback); see start_vm for options."""
        auto_mac, auto_serial, auto_uuid = self.identity()
        mac = mac or auto_mac
        workdir = self.root / f"vm-{mac.replace(':', '')}-{len(self._vms)}"
        vm = start_vm(
            workdir,
            mac=mac,
            app_port=app_port,
            files_port=self.files.port,
            serial=serial or auto_serial,
            uuid=uuid or auto_uuid,
            **options,
        )  # type: ignore[arg-type]
        self._vms.append(vm)
        return vm

    def boot(self, app_port: int, **options: object) -> VMResult:
        """Start one VM and wait for it to power off (or be killed at its timeout)."""
        return self.start(app_port, **options).wait()  # type: ignore[arg-type]

    def boot_many(self, app_port: int, count: int, **options: object) -> list[VMResult]:
        """Boot count VMs at once (all started before any is waited for)."""
        vms = [self.start(app_port, **options) for _ in range(count)]  # type: ignore[arg-type]
        return [vm.wait() for vm in vms]

    def kill_all(self) -> None:
        for vm in self._vms:
            vm.kill()


@pytest.fixture(scope="session")
def netboot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetBoot]:
    """Boot artifacts (built once per session), their HTTP server, and VM starters.

    Fails (never skips) when a Debian package is missing: a silently skipped boot test
    would let the provisioning path rot unnoticed.
    """
    missing = missing_prerequisites()
    if missing:
        pytest.fail(f"network-boot peer needs: {', '.join(missing)}; {APT_HINT}")
    root = tmp_path_factory.mktemp("netboot")
    artifacts = build_boot_artifacts(root / "artifacts")
    with ExitStack() as stack:
        files = stack.enter_context(serve_artifacts(artifacts))
        nb = NetBoot(artifacts=artifacts, files=files, root=root)
        stack.callback(nb.kill_all)
        yield nb
