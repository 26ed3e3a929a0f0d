"""docker-compose.yml is valid Compose (checked by the real tool; no Docker engine needed)."""

import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def compose_command() -> list[str]:
    probe = (
        subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
        if shutil.which("docker")
        else None
    )
    if probe is not None and probe.returncode == 0:
        return ["docker", "compose"]
    assert shutil.which("docker-compose"), "install Debian's docker-compose (see .ci/run)"
    return ["docker-compose"]


def test_compose_config_passes(tmp_path):
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    (tmp_path / ".env").write_text("POSTGRES_PASSWORD=example\nSECRET_KEY=x\n")
    result = subprocess.run(
        [*compose_command(), "config"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    assert {"postgres", "redis", "web", "worker", "beat"} <= set(config["services"])
    images = {config["services"][s].get("image") for s in ("web", "worker", "beat")}
    assert images == {"corral:latest"}  # one image for all three


def test_the_web_server_and_the_workers_share_the_firmware_artifacts(tmp_path):
    """A worker downloads and checks an artifact (or pushes it to a BMC), the web server
    serves it to BMCs: without one folder for both, what was accepted answered 404."""
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    (tmp_path / ".env").write_text("POSTGRES_PASSWORD=example\nSECRET_KEY=x\n")
    result = subprocess.run(
        [*compose_command(), "config"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    config = yaml.safe_load(result.stdout)
    mounts = {
        service: {_mount(v) for v in config["services"][service].get("volumes", [])}
        for service in ("web", "worker")
    }
    assert mounts["web"] == mounts["worker"]
    assert any(target == "/var/lib/corral/artifacts" for _, target in mounts["web"])
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "CORRAL_ARTIFACT_DIR=/var/lib/corral/artifacts" in dockerfile


def _mount(volume) -> tuple[str, str]:
    """(source, target) of a volume as either Compose tool writes it (long or short form)."""
    if isinstance(volume, dict):
        return volume["source"], volume["target"]
    source, target = volume.split(":")[:2]
    return source, target


def test_the_web_server_and_the_workers_count_into_one_folder(tmp_path):
    """/metrics on the web server adds up every process's counters (docs/metrics.md): the
    worker's BMC calls are only there if both count into one folder."""
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    (tmp_path / ".env").write_text("POSTGRES_PASSWORD=example\nSECRET_KEY=x\n")
    result = subprocess.run(
        [*compose_command(), "config"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    config = yaml.safe_load(result.stdout)
    for service in ("web", "worker"):
        folder = config["services"][service]["environment"]["PROMETHEUS_MULTIPROC_DIR"]
        targets = {_mount(v)[1] for v in config["services"][service]["volumes"]}
        assert folder in targets, service
    assert config["volumes"]["metrics"]["driver_opts"]["type"] == "tmpfs"
