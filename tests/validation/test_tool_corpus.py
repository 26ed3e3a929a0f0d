"""Every real tool output in tests/corpus/tools gets the verdict its text calls for.

The expectations live in tests/corpus/tools/expected.toml, written by reading each file
(what the tool printed), never copied from Corral's own output; SOURCES.md says where
each file comes from. Pure parsing and judging: no database, no peer, well under a
second for the whole corpus, so it runs in every CI run.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from validation.parsers import PARSERS, ParseError, parse
from validation.verdicts import CheckSpec, NodeContext, judge, judge_output

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "tools"
MANIFEST = tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8"))["sample"]
VERDICTS = ("pass", "degraded", "fail", "parse_error")


def lookup(data: Any, path: str) -> Any:
    """``a.0.b`` through dicts and lists; a key may itself hold dots (``memory.total``),
    so the longest key that matches at each level wins."""
    parts = path.split(".")
    while parts:
        if isinstance(data, list):
            data, parts = data[int(parts[0])], parts[1:]
            continue
        for end in range(len(parts), 0, -1):
            key = ".".join(parts[:end])
            if isinstance(data, dict) and key in data:
                data, parts = data[key], parts[end:]
                break
        else:
            raise KeyError(
                f"{path}: no {parts[0]!r} in {sorted(data) if isinstance(data, dict) else data!r}"
            )
    return data


def context(sample: dict[str, Any]) -> NodeContext:
    node = sample["node"]
    expected = {"driver": node["driver"]} if "driver" in node else {}
    return NodeContext(
        "corpus-node", node["gpu_model"], node["gpu_count"], node["fabric"], expected
    )


def check_spec(sample: dict[str, Any]) -> CheckSpec:
    thresholds = dict(sample.get("thresholds", {}))
    node = sample["node"]
    if "driver" not in node and sample["tool"] in ("dcgmi", "nvidia-smi-xml", "nvidia-smi-csv"):
        thresholds.setdefault("check_driver", False)  # the output prints no driver
    return CheckSpec(
        name=Path(sample["file"]).stem,
        tool=sample["tool"],
        command=sample.get("command", sample["tool"]),
        thresholds=thresholds,
        hardware_evidence=True,
    )


def test_manifest_covers_every_file_once():
    listed = [s["file"] for s in MANIFEST] + [s["stderr"] for s in MANIFEST if "stderr" in s]
    on_disk = sorted(
        str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file() and p.parent != CORPUS
    )
    assert sorted(listed) == on_disk
    assert len(listed) >= 40
    for sample in MANIFEST:
        assert sample["tool"] in PARSERS, sample["file"]
        assert sample["verdict"] in VERDICTS, sample["file"]
        assert sample.get("read"), f"{sample['file']}: say what the text shows"


@pytest.mark.parametrize("sample", MANIFEST, ids=[s["file"] for s in MANIFEST])
def test_corpus_sample(sample):
    text = (CORPUS / sample["file"]).read_text(encoding="utf-8")
    if sample["verdict"] == "parse_error":
        with pytest.raises(ParseError) as refused:
            parse(sample["tool"], text, command=sample.get("command"))
        for part in sample.get("reason", []):
            assert part in str(refused.value)
        if "stderr" in sample:  # what the gate says: the parse error and the tool's own cause
            stderr = (CORPUS / sample["stderr"]).read_text(encoding="utf-8")
            verdict = judge_output(
                check_spec(sample), text, context(sample), stderr, sample["exit"]
            )
            assert verdict.status == "fail" and not verdict.hardware_fault, verdict.reason
            for part in sample["gate_reason"]:
                assert part in verdict.reason
        return
    result = parse(sample["tool"], text, command=sample.get("command"))
    data = result.to_dict()
    for path, value in sample.get("facts", {}).items():
        seen = lookup(data, path)
        if isinstance(value, float):
            assert seen == pytest.approx(value), path
        else:
            assert seen == value, path
    verdict = judge(check_spec(sample), result, context(sample))
    assert verdict.status == sample["verdict"], verdict.reason
    assert verdict.hardware_fault is sample.get("hardware", False), verdict.reason
    for part in sample.get("reason", []):
        assert part in verdict.reason
    evidence = "\n".join(verdict.evidence)
    for part in sample.get("evidence", []):
        assert part in evidence
