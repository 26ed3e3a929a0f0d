"""`make run`: one command from a fresh clone to a working Corral on 127.0.0.1.

Writes .env once (secret key, field-encryption key), migrates SQLite (or DATABASE_URL),
creates an admin login, starts a real Redfish emulator holding the demo fleet's BMCs,
seeds the demo site, then runs the web server (granian) + a Celery worker + beat until Ctrl-C,
starting again any of them that exits (devtools/supervise.py).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

from cryptography.fernet import Fernet

from devtools.supervise import Child, Supervisor

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


def redfish_emulator(port: int) -> Child:
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
    return Child(
        "redfish emulator",
        [str(BIN / "sushy-emulator"), "--config", str(conf), "-i", "127.0.0.1", "-p", str(port)],
        emu_dir / "emulator.log",
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
    try:
        with Supervisor(say) as supervisor:
            supervisor.start(redfish_emulator(bmc_port))
            wait_for(bmc_port, "the Redfish emulator")
            manage("seed_demo", "--redfish", f"http://127.0.0.1:{bmc_port}")
            # A year of a mid-size fleet's history, so the managers' dashboards show data.
            say("seeding the dashboards' history (once)")
            manage(
                "seed_history",
                "--nodes",
                "480",
                "--days",
                "365",
                "--seed",
                "1",
                "--keep-existing",
                "--with-prices",
            )
            queues = subprocess.run(
                [PY, "manage.py", "site_queues"], check=True, capture_output=True, text=True
            ).stdout.strip()
            logs = STATE / "logs"
            logs.mkdir(exist_ok=True)
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
            say(f"open http://127.0.0.1:{web_port}/  login: {user} / {password}")
            say(f"API docs http://127.0.0.1:{web_port}/api/docs/ · logs in .demo/logs")
            say("Ctrl-C stops; a process that exits is started again")
            supervisor.run()
    except KeyboardInterrupt:
        say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
