"""Published images' artifacts, kept by Corral and served to nodes from its own web server.

With `CORRAL_IMAGE_STORE` set, publishing an image keeps each artifact it downloads and
checks (kernel, initrd, root image, UKI) in that folder, named by its sha256; the image is
marked `stored`, and every boot script of it sends the node to Corral's own copy,
`<boot base URL>/boot/images/<sha256>`, not to the artifact's URL. So a boot hall fetches
its images from the boot front it already reaches (no second web server to run, no
artifact store reachable from the nodes), and a node is served exactly the bytes that
were checked: a file enters the folder only once its sha256 is the one the image names,
and its name is that sha256.

The production server (fleet.serve) serves the folder with granian's static files, in
Rust, at the speed nginx serves the same files (`make bench-stateless`); `images_file`
below answers the same URL where another server runs the app (the Django test client,
WSGI). What is served is public to whoever reaches the boot front, like the artifacts'
own URLs: a root image holds nothing of any one node (its secrets come in the per-node
overlay, fetched with the node's token).

Empty (the default outside Docker), nodes fetch the artifacts' own URLs, as before.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from django.conf import settings

ROUTE = "/boot/images"
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def folder() -> Path | None:
    """The store, or None when images are not kept."""
    return Path(settings.CORRAL_IMAGE_STORE) if settings.CORRAL_IMAGE_STORE else None


def path_of(sha256: str) -> Path | None:
    """Where the artifact of that sha256 is kept (whether or not it is), or None."""
    where = folder()
    if where is None or not SHA256.match(sha256):
        return None
    return where / sha256


def url(base_url: str, sha256: str) -> str:
    return f"{base_url}{ROUTE}/{sha256}"


class Keeper:
    """One artifact on its way in: its bytes go to a temporary file in the store, which
    becomes `<sha256>` only when `commit` is given the digest it was checked against."""

    def __init__(self, where: Path) -> None:
        where.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=where, prefix=".incoming-")
        self.where, self.temporary = where, Path(name)
        self.out = os.fdopen(handle, "wb")

    def write(self, chunk: bytes) -> None:
        self.out.write(chunk)

    def commit(self, sha256: str) -> Path:
        self.out.close()
        self.temporary.chmod(0o644)  # the web server's user reads it
        kept = self.where / sha256
        os.replace(self.temporary, kept)
        return kept

    def discard(self) -> None:
        self.out.close()
        self.temporary.unlink(missing_ok=True)
