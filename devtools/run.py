"""`make run`: one command from a fresh clone to a working Corral on 127.0.0.1.

Writes .env once (secret key, field-encryption key), migrates SQLite (or DATABASE_URL),
creates an admin login, starts a real Redfish emulator holding the demo fleet's BMCs,
seeds the demo site, then runs the web server (granian) + a Celery worker + beat until Ctrl-C.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent
STATE = ROOT / ".demo"
PY = sys.executable
BIN = Path(PY).parent


def say(msg: str) -> None:
    print(f"corral: {msg}", flush=True)


def ensure_env_file() -> None:
    env = ROOT / ".env"
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


def port_free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def start_redfish_emulator(port: int) -> subprocess.Popen:
    """One sushy-emulator process serving all 16 demo BMCs (fake driver, state on disk)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
    sys.path.insert(0, str(ROOT))
    from inventory.demo import demo_nodes

    emu_dir = STATE / "redfish"
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
    conf = emu_dir / "emulator.conf"
    conf.write_text(
        "SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'\n"
        "SUSHY_EMULATOR_FAKE_DRIVER = True\n"
        f"SUSHY_EMULATOR_STATE_DIR = {str(emu_dir / 'state')!r}\n"
        f"SUSHY_EMULATOR_FAKE_SYSTEMS = {systems!r}\n"
    )
    log = open(emu_dir / "emulator.log", "ab")  # noqa: SIM115  (lives as long as the process)
    return subprocess.Popen(
        [str(BIN / "sushy-emulator"), "--config", str(conf), "-i", "127.0.0.1", "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=emu_dir,
    )


def wait_for(port: int, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not port_free(port):
            return
        time.sleep(0.2)
    raise SystemExit(f"corral: {what} did not start on port {port}; see .demo/ logs")


def main() -> int:
    os.chdir(ROOT)
    ensure_env_file()
    web_port = int(os.environ.get("CORRAL_PORT", "8000"))
    bmc_port = int(os.environ.get("CORRAL_DEMO_REDFISH_PORT", "8001"))
    for port, what in ((web_port, "CORRAL_PORT"), (bmc_port, "CORRAL_DEMO_REDFISH_PORT")):
        if not port_free(port):
            raise SystemExit(f"corral: port {port} is in use; set {what} to another port")
    say("migrating the database")
    manage("migrate", "--noinput", "-v", "0")
    manage("collectstatic", "--noinput", "-v", "0")
    user, password = admin_login()
    procs: list[subprocess.Popen] = []

    def stop(*_: object) -> None:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()

    signal.signal(signal.SIGTERM, lambda *a: (stop(), sys.exit(0)))
    try:
        procs.append(start_redfish_emulator(bmc_port))
        wait_for(bmc_port, "the Redfish emulator")
        manage("seed_demo", "--redfish", f"http://127.0.0.1:{bmc_port}")
        queues = subprocess.run(
            [PY, "manage.py", "site_queues"], check=True, capture_output=True, text=True
        ).stdout.strip()
        logs = STATE / "logs"
        logs.mkdir(exist_ok=True)
        celery = str(BIN / "celery")
        procs.append(
            subprocess.Popen(
                [
                    celery,
                    "-A",
                    "fleet",
                    "worker",
                    "-Q",
                    queues,
                    "-c",
                    "4",
                    "-l",
                    "INFO",
                    "-n",
                    "demo@%h",
                ],
                stderr=subprocess.STDOUT,
                stdout=open(logs / "worker.log", "ab"),  # noqa: SIM115
            )
        )
        procs.append(
            subprocess.Popen(
                [
                    celery,
                    "-A",
                    "fleet",
                    "beat",
                    "-l",
                    "INFO",
                    "-s",
                    str(STATE / "celerybeat-schedule"),
                ],
                stderr=subprocess.STDOUT,
                stdout=open(logs / "beat.log", "ab"),  # noqa: SIM115
            )
        )
        procs.append(
            subprocess.Popen(
                [
                    str(BIN / "python"),
                    "-m",
                    "fleet.serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(web_port),
                    "--workers",
                    "2",
                    "--access-log",
                ],
                stderr=subprocess.STDOUT,
                stdout=open(logs / "access.log", "ab"),  # noqa: SIM115
            )
        )
        wait_for(web_port, "the web server")
        say(f"open http://127.0.0.1:{web_port}/  login: {user} / {password}")
        say(f"API docs http://127.0.0.1:{web_port}/api/docs/ · logs in .demo/logs · Ctrl-C stops")
        while all(p.poll() is None for p in procs):
            time.sleep(1)
        dead = [p.args[0] for p in procs if p.poll() is not None]
        say(f"stopped because {', '.join(map(str, dead))} exited; see .demo/logs")
        return 1
    except KeyboardInterrupt:
        say("stopping")
        return 0
    finally:
        stop()


if __name__ == "__main__":
    sys.exit(main())
