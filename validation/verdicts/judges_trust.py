"""The attestation check (tool `tpm-quote`): judged by attestation.judge from the TPM
evidence the node sent at phone-home, not from command output over SSH
(validation.attest runs it). Declared here so profiles may name the tool and carry no
thresholds for it."""

from __future__ import annotations

from typing import Any

from .judging import Findings, Judge
from .model import NodeContext

TPM_QUOTE = "tpm-quote"


def _judged_elsewhere(
    result: Any, thresholds: dict[str, Any], ctx: NodeContext, f: Findings
) -> None:
    f.fail("tpm-quote is judged from the boot's TPM evidence, not from command output")


JUDGES = [Judge(tools=(TPM_QUOTE,), result_type=object, keys={}, func=_judged_elsewhere)]
