"""`make run`: one command from a fresh clone to a working Corral on 127.0.0.1.

Writes .env once (secret key, field-encryption key), migrates SQLite (or DATABASE_URL),
creates an admin login, starts a real Redfish emulator holding the demo fleet's BMCs,
seeds the demo site, then runs the web server (granian) + a Celery worker + beat and the
demo's stand-ins for the world outside Corral until Ctrl-C, starting again any of them that
exits (devtools/supervise.py): an artifact server for the demo image (demo_image.py), an
sshd on the demo nodes' loopback boot addresses for the gates (demo_gates.py) and the demo
machines that boot and phone home when their BMC powers them (demo_machines.py). Then
devtools/demo_setup.py publishes the image and walks the fleet to mixed starting states.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import MutableMapping
from pathlib import Path

from cryptography.fernet import Fernet

from devtools.supervise import Child, Supervisor

ROOT = Path(__file__).resolve().parent.parent
STATE = ROOT / ".demo"
PY = sys.executable
BIN = Path(PY).parent
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")


def say(msg: str) -> None:
    print(f"corral: {msg}", flush=True)


def ensure_env_file(env: Path = ROOT / ".env") -> None:
    """The .env `make run` writes once; the embedded-default walk writes one the same way
    into its own folder (tests/embedded/instance.py)."""
    if env.exists():
        return
    env.write_text(
        "# Written once by `make run`; keep it: FIELD_ENCRYPTION_KEYS decrypts BMC passwords.\n"
        f"SECRET_KEY={secrets.token_urlsafe(50)}\n"
        f"FIELD_ENCRYPTION_KEYS={Fernet.generate_key().decode()}\n"
    )
    env.chmod(0o600)
    say("wrote .env (secret key and field-encryption key)")


def manage(*args: str) -> None:
    subprocess.run([PY, str(ROOT / "manage.py"), *args], check=True, cwd=ROOT)


def admin_login() -> tuple[str, str]:
    STATE.mkdir(exist_ok=True)
    pw_file = STATE / "admin-password"
    if not pw_file.exists():
        pw_file.write_text(secrets.token_urlsafe(12))
        pw_file.chmod(0o600)
    password = pw_file.read_text().strip()
    code = (
        "from django.contrib.auth.models import User\n"
        "u, _ = User.objects.get_or_create(username='admin')\n"
        "u.is_staff = u.is_superuser = True\n"
        f"u.set_password({password!r}); u.save()\n"
    )
    manage("shell", "-v", "0", "-c", code)
    return "admin", password


def web_url(port: int) -> str:
    """The address `make run` serves on and prints (CORRAL_PUBLIC_URL's default is 8000's)."""
    return f"http://127.0.0.1:{port}"


def set_public_url(
    port: int, env: MutableMapping[str, str] = os.environ, env_file: Path = ROOT / ".env"
) -> None:
    """Links in webhook payloads and evidence bundles lead where this run serves (CORRAL_PORT
    may move it off 8000), unless the person set CORRAL_PUBLIC_URL, in the environment or
    in .env (the environment would win over .env, so it is left unset then)."""
    if "CORRAL_PUBLIC_URL" in env:
        return
    lines = env_file.read_text().splitlines() if env_file.exists() else []
    names = (line.strip().removeprefix("export ").split("=", 1)[0].strip() for line in lines)
    if "CORRAL_PUBLIC_URL" in names:
        return
    env["CORRAL_PUBLIC_URL"] = web_url(port)


def port_free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def redfish_emulator(port: int, emu_dir: Path) -> Child:
    """One sushy-emulator process serving all 16 demo BMCs (fake driver, state on disk,
    HTTP basic auth, GPUs listed: devtools/demo_bmc.py), journalling every POST/PATCH."""
    import bcrypt

    from inventory.demo import BMC_PASSWORD, BMC_USERNAME, demo_nodes

    (emu_dir / "state").mkdir(parents=True, exist_ok=True)
    systems = [
        {
            "uuid": n.uuid,
            "name": n.hostname,
            "power_state": "Off",
            "external_notifier": False,
            "nics": [{"mac": n.mac, "ip": n.ip}],
        }
        for n in demo_nodes()
    ]
    htpasswd = emu_dir / "htpasswd"
    digest = bcrypt.hashpw(BMC_PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    htpasswd.write_text(f"{BMC_USERNAME}:{digest}\n")
    conf = emu_dir / "emulator.conf"
    conf.write_text(
        "SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'\n"
        "SUSHY_EMULATOR_FAKE_DRIVER = True\n"
        f"SUSHY_EMULATOR_STATE_DIR = {str(emu_dir / 'state')!r}\n"
        f"SUSHY_EMULATOR_FAKE_SYSTEMS = {systems!r}\n"
        f"SUSHY_EMULATOR_AUTH_FILE = {str(htpasswd)!r}\n"
    )
    # Power changes land at once (the fake driver's default is a random 1-11 s).
    argv = [PY, "-m", "devtools.demo_bmc", str(emu_dir / "journal.jsonl"), "0"]
    argv += ["--config", str(conf), "-i", "127.0.0.1", "-p", str(port)]
    return Child("redfish emulator", argv, emu_dir / "emulator.log", cwd=ROOT)


def wait_for(port: int, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not port_free(port):
            return
        time.sleep(0.2)
    raise SystemExit(f"corral: {what} did not start on port {port}; see .demo/ logs")


def ports() -> dict[str, int]:
    wanted = {
        "CORRAL_PORT": 8000,
        "CORRAL_DEMO_REDFISH_PORT": 8001,
        "CORRAL_DEMO_ARTIFACT_PORT": 8002,
        "CORRAL_DEMO_SSH_PORT": 8022,
    }
    found = {name: int(os.environ.get(name, default)) for name, default in wanted.items()}
    for name, port in found.items():
        if name != "CORRAL_DEMO_SSH_PORT" and not port_free(port):
            raise SystemExit(f"corral: port {port} is in use; set {name} to another port")
    return found


def seed(bmc_port: int) -> None:
    manage("seed_demo", "--redfish", f"http://127.0.0.1:{bmc_port}")
    # A year of a mid-size fleet's history, so the managers' dashboards show data.
    say("seeding the dashboards' history (once)")
    manage(
        "seed_history",
        *("--nodes", "480", "--days", "365", "--seed", "1"),
        *("--keep-existing", "--with-prices"),
    )


def start_demo_peers(supervisor: Supervisor, port: dict[str, int], logs: Path) -> list[str]:
    """The artifact server, the sshd the gates reach and the demo machines; returns the
    demo_setup arguments that describe them."""
    from devtools import demo_gates, demo_image

    images = STATE / "images"
    demo_image.write_artifacts(images)
    art_port = port["CORRAL_DEMO_ARTIFACT_PORT"]
    supervisor.start(
        Child("artifacts", demo_image.server_argv(images, art_port), logs / "artifacts.log")
    )
    ssh_dir, ssh_port = STATE / "sshd", port["CORRAL_DEMO_SSH_PORT"]
    setup = [f"--artifacts=http://127.0.0.1:{art_port}/", f"--artifacts-dir={images}"]
    setup += [f"--ssh-dir={ssh_dir}", f"--ssh-port={ssh_port}"]
    if demo_gates.sshd_available():
        ssh, argv = demo_gates.prepare(ssh_dir, ssh_port)
        supervisor.start(Child("sshd", argv, logs / "sshd.log"))
        os.environ.update(ssh.worker_env())  # the worker started next inherits them
    else:
        say("no /usr/sbin/sshd: the gates cannot reach the demo machines and the demo")
        say("fleet stops at ready; apt-get install openssh-server, then make run again")
        setup.append("--no-gates")
    machines = [PY, "-m", "devtools.demo_machines"]
    machines += ["--journal", str(STATE / "redfish" / "journal.jsonl")]
    machines += ["--redfish", f"http://127.0.0.1:{port['CORRAL_DEMO_REDFISH_PORT']}"]
    machines += ["--web", f"http://127.0.0.1:{port['CORRAL_PORT']}"]
    supervisor.start(Child("demo machines", machines, logs / "machines.log"))
    wait_for(art_port, "the artifact server")
    return setup


def fresh_counters(env: MutableMapping[str, str] = os.environ) -> Path | None:
    """One empty folder for every process's counters (docs/metrics.md), so /metrics adds
    up the web server's and the worker's, unless the person set PROMETHEUS_MULTIPROC_DIR."""
    if env.get("PROMETHEUS_MULTIPROC_DIR"):
        return None
    folder = STATE / "metrics"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    env["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    return folder


def main() -> int:
    os.chdir(ROOT)
    ensure_env_file()
    port = ports()
    web_port, bmc_port = port["CORRAL_PORT"], port["CORRAL_DEMO_REDFISH_PORT"]
    set_public_url(web_port)  # before any process starts: they all inherit it
    fresh_counters()  # the same: every process counts into one folder
    say("migrating the database")
    manage("migrate", "--noinput", "-v", "0")
    manage("collectstatic", "--noinput", "-v", "0")
    user, password = admin_login()
    logs = STATE / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    try:
        with Supervisor(say) as supervisor:
            supervisor.start(redfish_emulator(bmc_port, STATE / "redfish"))
            wait_for(bmc_port, "the Redfish emulator")
            seed(bmc_port)
            setup = start_demo_peers(supervisor, port, logs)
            queues = subprocess.run(
                [PY, "manage.py", "site_queues"], check=True, capture_output=True, text=True
            ).stdout.strip()
            celery = str(BIN / "celery")
            worker = [celery, "-A", "fleet", "worker", "-Q", queues, "-c", "4", "-l", "INFO"]
            supervisor.start(Child("worker", [*worker, "-n", "demo@%h"], logs / "worker.log"))
            beat = [celery, "-A", "fleet", "beat", "-l", "INFO"]
            schedule = str(STATE / "celerybeat-schedule")
            supervisor.start(Child("beat", [*beat, "-s", schedule], logs / "beat.log"))
            web = [PY, "-m", "fleet.serve", "--host", "127.0.0.1", "--port", str(web_port)]
            web += ["--workers", "2", "--access-log"]
            supervisor.start(Child("web", web, logs / "access.log"))
            wait_for(web_port, "the web server")
            if subprocess.run([PY, "-m", "devtools.demo_setup", *setup], cwd=ROOT).returncode:
                say("the demo set-up did not finish (see above); Corral itself is running")
            say(f"open {web_url(web_port)}/  login: {user} / {password}")
            say(f"API docs {web_url(web_port)}/api/docs/ · logs in .demo/logs")
            say("Ctrl-C stops; a process that exits is started again")
            supervisor.run()
    except KeyboardInterrupt:
        say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
