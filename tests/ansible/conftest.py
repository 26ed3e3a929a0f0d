"""Running the real ansible-core (ansible-inventory, ansible-playbook, ansible-galaxy,
ansible-test) on the collection in ansible/ against a real Corral (the `corral_web`
fixture: the production web server on the test database), each command in its own
process with its home, temporary folders and configuration under the test's tmp_path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COLLECTIONS = REPO / "ansible"
COLLECTION = COLLECTIONS / "ansible_collections" / "corral" / "fleet"
BIN = Path(sys.executable).parent
CALLBACKS = Path(__file__).resolve().parent / "callbacks"


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    @property
    def unwrapped(self) -> str:
        """The output without any whitespace: Ansible wraps its warnings to the terminal's
        width, so a secret that is there may be split across lines."""
        return "".join(self.text.split())


@dataclass
class Task:
    """One task's result as the `record` callback wrote it."""

    name: str
    status: str  # ok, changed, failed, skipped
    result: dict

    def __getitem__(self, key: str):
        return self.result[key]


class Ansible:
    """ansible("ansible-inventory", "--list") -> Ran; playbook(plays) -> (Ran, {name: Task})."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env
        self.runs = 0

    def __call__(self, tool: str, *args: str, cwd: Path | None = None, **env: str) -> Ran:
        done = subprocess.run(
            [str(BIN / tool), *args],
            cwd=cwd or self.root,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        return Ran(done.returncode, done.stdout, done.stderr)

    def write(self, name: str, content) -> Path:
        path = self.root / name
        text = content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False)
        path.write_text(text)
        return path

    def playbook(self, plays: list[dict], *args: str, **env: str) -> tuple[Ran, dict[str, Task]]:
        """Run the plays with ansible-playbook; the tasks' results by task name."""
        self.runs += 1
        book = self.write(f"play-{self.runs}.yml", plays)
        results = self.root / f"results-{self.runs}.jsonl"
        ran = self("ansible-playbook", str(book), *args, CORRAL_TEST_RESULTS=str(results), **env)
        tasks: dict[str, Task] = {}
        if results.exists():
            for line in results.read_text().splitlines():
                found = json.loads(line)
                tasks[found["task"]] = Task(found["task"], found["status"], found["result"])
        return ran, tasks


def ansible_env(root: Path) -> dict[str, str]:
    """The environment of every ansible command: the repository's collection, homes and
    temporary folders under `root`, no configuration file of the machine's, no colour."""
    home = root / "home"
    home.mkdir(exist_ok=True)
    config = root / "ansible.cfg"
    config.write_text("[defaults]\n")
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("ANSIBLE_", "CORRAL_"))
    }
    env.update(
        HOME=str(home),
        LC_ALL="C.UTF-8",
        ANSIBLE_CONFIG=str(config),
        ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
        ANSIBLE_HOME=str(home / ".ansible"),
        ANSIBLE_LOCAL_TEMP=str(root / "ansible-local"),
        ANSIBLE_REMOTE_TEMP=str(root / "ansible-remote"),
        ANSIBLE_PYTHON_INTERPRETER=sys.executable,
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_RETRY_FILES_ENABLED="0",
        ANSIBLE_LOCALHOST_WARNING="0",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
        ANSIBLE_CALLBACK_PLUGINS=str(CALLBACKS),
        ANSIBLE_CALLBACKS_ENABLED="record",
    )
    return env


@pytest.fixture
def ansible(tmp_path) -> Ansible:
    return Ansible(tmp_path, ansible_env(tmp_path))
