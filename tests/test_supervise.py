"""`make run`'s supervisor (devtools/supervise.py) with real processes: a child that dies
is started again, with a line naming it and its exit code; Ctrl-C and SIGTERM stop
everything."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.peers.util import wait_until

ROOT = Path(__file__).resolve().parent.parent

# The supervising loop as devtools/run.py runs it, over two children that print their pid
# and their own child's, and sleep (each start appends a line to the child's log).
SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from devtools.supervise import Child, Supervisor

    logs = Path(sys.argv[1])
    # A child with a child of its own, as granian and a prefork worker have: "pid grandchild".
    sleeper = ["sh", "-c", "sleep 600 & echo $$ $!; wait"]
    try:
        with Supervisor(lambda m: print("corral: " + m, flush=True), min_backoff=0.2) as sup:
            for name in ("worker", "beat"):
                sup.start(Child(name, sleeper, logs / f"{name}.log"))
            sup.run(interval=0.05)
    except KeyboardInterrupt:
        print("corral: stopped", flush=True)
    """
)


class Supervised:
    def __init__(self, tmp_path: Path):
        self.logs = tmp_path
        self.out = tmp_path / "supervisor.out"
        with self.out.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-c", SCRIPT, str(tmp_path)],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, as a terminal gives it
            )

    def starts(self, name: str) -> list[tuple[int, int]]:
        """(pid, its child's pid) of each start of `name`."""
        log = self.logs / f"{name}.log"
        lines = log.read_text().splitlines() if log.exists() else []
        return [(int(a), int(b)) for a, b in (line.split() for line in lines)]

    def pids(self, name: str) -> list[int]:
        return [pid for pid, _ in self.starts(name)]

    def output(self) -> str:
        return self.out.read_text()

    def wait_pids(self, name: str, count: int) -> list[int]:
        wait_until(lambda: len(self.pids(name)) >= count, timeout=20, what=f"{name} start {count}")
        return self.pids(name)

    def all_pids(self) -> list[int]:
        return [pid for name in ("worker", "beat") for start in self.starts(name) for pid in start]


def alive(pid: int) -> bool:
    """Running, not a zombie (an orphan waits for init to reap it; in a container
    that can be never)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def supervised(tmp_path):
    sup = Supervised(tmp_path)
    yield sup
    if sup.process.poll() is None:
        os.killpg(sup.process.pid, signal.SIGKILL)
        sup.process.wait()


def test_a_child_that_dies_is_started_again_with_a_growing_backoff(supervised):
    (first,) = supervised.wait_pids("worker", 1)
    (beat,) = supervised.wait_pids("beat", 1)

    os.kill(first, signal.SIGKILL)
    second = supervised.wait_pids("worker", 2)[1]
    assert alive(second) and second != first
    assert "corral: worker exited with code -9; restarting in 0.2 s" in supervised.output()
    orphan = supervised.starts("worker")[0][1]
    assert not alive(orphan)  # what the dead child left running was ended

    os.kill(second, signal.SIGTERM)  # dies again at once: waits twice as long
    third = supervised.wait_pids("worker", 3)[2]
    assert alive(third)
    assert "corral: worker exited with code -15; restarting in 0.4 s" in supervised.output()
    assert supervised.pids("beat") == [beat] and alive(beat)  # the others are left alone
    assert supervised.process.poll() is None


@pytest.mark.parametrize(
    "stop",
    [
        # A terminal sends Ctrl-C to its foreground process group: the supervisor's.
        pytest.param(lambda p: os.killpg(p.pid, signal.SIGINT), id="ctrl-c"),
        pytest.param(lambda p: p.send_signal(signal.SIGTERM), id="sigterm"),
    ],
)
def test_ctrl_c_or_sigterm_stops_every_child_and_restarts_none(supervised, stop):
    supervised.wait_pids("worker", 1)
    supervised.wait_pids("beat", 1)
    time.sleep(0.3)  # past the supervisor's first checks

    stop(supervised.process)
    assert supervised.process.wait(timeout=20) == 0, supervised.output()
    assert supervised.output().rstrip().endswith("corral: stopped"), supervised.output()
    assert "restart" not in supervised.output()
    assert len(supervised.all_pids()) == 4  # two children, each with its own child
    assert not any(alive(pid) for pid in supervised.all_pids())
