"""`python -m fleet.serve [granian flags]`: Corral's production web server.

Docker, Compose, `make run` and `make bench-boot` all start the web tier through this, so
what is benchmarked is what is deployed. It runs granian (HTTP in Rust, the app in
Python) on fleet.asgi. Why not gunicorn: on the 2-core reference machine gunicorn's own
pure-Python HTTP handling answered an empty WSGI app at ~5,000 req/s with a p99 of
134 ms at 256 connections, above the boot-storm target before Corral did any work, and
gunicorn with uvicorn workers gave p99s from 100 ms to 1.5 s run to run under the same
load; granian served the same Corral app with a stable p99 (README, "Production").

Settings are granian's own environment variables (GRANIAN_HOST, GRANIAN_PORT,
GRANIAN_WORKERS, GRANIAN_LOG_ACCESS_ENABLED, ...) or flags after the command; this only
supplies Corral's defaults.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

DEFAULTS = {
    "GRANIAN_INTERFACE": "asgi",
    # One process per usable core (a container's cpuset counts; a CPU quota does not, so
    # set GRANIAN_WORKERS there): /boot/ipxe is answered on each process's event loop.
    "GRANIAN_WORKERS": str(
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 2
    ),
    # A hall powering on opens thousands of connections within a second.
    "GRANIAN_BACKLOG": "2048",
    "GRANIAN_RESPAWN_FAILED_WORKERS": "true",
    # A worker asked to stop while it is still importing the app misses the signal (the
    # handler it inherited from the main process is not its own yet) and would then serve
    # for ever, with the main process waiting for it for ever: a deploy or `docker stop`
    # while a worker restarts. Granian's default is to wait without end; kill it instead.
    "GRANIAN_WORKERS_KILL_TIMEOUT": "10",
}
APP = "fleet.asgi:application"
IMAGES_ROUTE = "/boot/images"  # provisioning.imagestore.ROUTE (not imported: no Django here)
ROOT = Path(__file__).resolve().parent.parent


def image_store() -> str:
    """CORRAL_IMAGE_STORE as the app will read it: the environment, else the env file."""
    if "CORRAL_IMAGE_STORE" not in os.environ:
        env_file = Path(os.environ.get("CORRAL_ENV_FILE", ROOT / ".env"))
        if env_file.is_file():
            import environ

            environ.Env.read_env(str(env_file), overwrite=False)
    return os.environ.get("CORRAL_IMAGE_STORE", "")


def serve_images() -> None:
    """Published images' artifacts (provisioning/imagestore.py) served by granian's static
    files, in Rust: a boot hall fetching kernels and root images at once is served at
    nginx's speed without a request reaching Python (`make bench-stateless`)."""
    store = image_store()
    if store:
        Path(store).mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("GRANIAN_STATIC_PATH_ROUTE", IMAGES_ROUTE)
        os.environ.setdefault("GRANIAN_STATIC_PATH_MOUNT", store)
        # Named by their sha256: a file never changes under its name.
        os.environ.setdefault("GRANIAN_STATIC_PATH_EXPIRES", "31536000")


def command(argv: list[str]) -> list[str]:
    here = Path(sys.executable).parent / "granian"
    granian = str(here) if here.exists() else shutil.which("granian") or "granian"
    return [granian, *argv, APP]


def main() -> None:
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
    serve_images()
    cmd = command(sys.argv[1:])
    os.execv(cmd[0], cmd)  # noqa: S606  (our own argv: granian's path and the caller's flags)


if __name__ == "__main__":
    main()
