"""An Ansible callback that writes every task's result, one JSON line each, to the file named
by CORRAL_TEST_RESULTS: the tests read what each task of a playbook reported (changed, the
module's return values, a failure's msg) instead of scraping the default screen output."""

from __future__ import annotations

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: record
type: aggregate
short_description: write each task's result to a JSON lines file (tests only)
description: The file is named by the environment variable CORRAL_TEST_RESULTS.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "record"
    CALLBACK_NEEDS_ENABLED = True

    def record(self, result, status: str) -> None:
        line = {
            "task": result._task.get_name(),
            "host": result._host.get_name(),
            "status": status,
            "result": result._result,
        }
        with open(os.environ["CORRAL_TEST_RESULTS"], "a", encoding="utf-8") as out:
            out.write(json.dumps(line, default=str) + "\n")

    def v2_runner_on_ok(self, result) -> None:
        self.record(result, "changed" if result._result.get("changed") else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False) -> None:
        self.record(result, "failed")

    def v2_runner_on_skipped(self, result) -> None:
        self.record(result, "skipped")
