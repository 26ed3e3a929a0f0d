"""Software TPMs the host drives (no VM): a node's TPM, and another one for "a quote from
a different TPM". Module-scoped: making a TPM state and its keys costs about a second."""

from __future__ import annotations

import pytest

from tests.peers.swtpm import HostTPM, session_ca


def _host_tpm(tmp_path_factory, name: str):
    ca = session_ca(tmp_path_factory)
    tpm = HostTPM(ca, tmp_path_factory.mktemp(name))
    try:
        tpm.create_keys()
    except BaseException:
        tpm.stop()
        raise
    return tpm


@pytest.fixture(scope="module")
def host_tpm(tmp_path_factory):
    tpm = _host_tpm(tmp_path_factory, "node-tpm")
    yield tpm
    tpm.stop()


@pytest.fixture(scope="module")
def other_tpm(tmp_path_factory):
    tpm = _host_tpm(tmp_path_factory, "other-tpm")
    yield tpm
    tpm.stop()
