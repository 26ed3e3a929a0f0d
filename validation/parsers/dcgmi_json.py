"""``dcgmi diag -j`` JSON output, DCGM 3.x and 4.x document shapes.

3.x: ``{"DCGM GPU Diagnostic": {"test_categories": [{"category", "tests": [{"name",
"results": [{"gpu_ids"|"gpu_id", "status", "warnings", "info"}]}]}], "version"}}``.
4.x: top key ``DCGM Diagnostic`` with the same category tree, results keyed by
``entity_group``/``entity_id``, a per-test ``test_summary.status``, plus top-level
``entity_groups`` and ``metadata.version``. DCGM 4 reports a failed start as
``runtime_error``; that is a Fail result, not a parse error, because the tool did run.
"""

from __future__ import annotations

from typing import Any

from .base import ParseError, check_text, get_path, load_json_object, worst_status
from .dcgm_result import (
    DcgmDiagJsonResult,
    DcgmDiagResult,
    DcgmTest,
    build_result,
    canonical_test_name,
    normalise_status,
)

_TOP_KEYS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")
_DRIVER_KEYS = ("Driver Version Detected", "driver_version_detected", "driver_version")


def _messages(items: object, key: str) -> list[str]:
    """Warnings/info: one string or a list of strings in 3.x (a result's ``info`` is one
    string there), a list of ``{"warning": ..}`` objects in 4.x."""
    if items is None:
        return []
    if isinstance(items, str):
        return [items]
    if not isinstance(items, list):
        raise ParseError("expected a list of messages", key=key)
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            text = item.get("warning", item.get("info", item.get("message")))
            out.append(str(text) if text is not None else str(item))
        else:
            raise ParseError("expected a message string or object", key=key)
    return out


def _gpu_of(result: dict[str, Any], key: str) -> list[int] | None:
    """GPU ids a result entry covers; None for non-GPU entities (CPU, switch...)."""
    if "entity_group" in result:
        if str(result["entity_group"]).upper() != "GPU":
            return None
        entity = result.get("entity_id")
        if not isinstance(entity, int | str) or not str(entity).strip().isdigit():
            raise ParseError("expected an integer entity_id", key=key + ".entity_id")
        return [int(entity)]
    raw = result.get("gpu_ids", result.get("gpu_id"))
    if raw is None:
        return []
    tokens = [t.strip() for t in str(raw).split(",") if t.strip()]
    if not all(t.isdigit() for t in tokens):
        raise ParseError(f"expected GPU ids, got {raw!r}", key=key + ".gpu_ids")
    return [int(t) for t in tokens]


def _test(raw: object, category: str | None, key: str) -> DcgmTest:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ParseError("expected a test object with a 'name'", key=key)
    name = raw["name"]
    results = raw.get("results", [])
    if not isinstance(results, list):
        raise ParseError("expected a list", key=f"{key}.results")
    test = DcgmTest(
        name=canonical_test_name(name), display_name=name, category=category, status="Pass"
    )
    statuses = []
    for index, entry in enumerate(results):
        entry_key = f"{key}.results[{index}]"
        if not isinstance(entry, dict):
            raise ParseError("expected a result object", key=entry_key)
        status = normalise_status(entry.get("status"), key=entry_key + ".status")
        statuses.append(status)
        for gpu in _gpu_of(entry, entry_key) or []:
            test.gpus[gpu] = worst_status([test.gpus.get(gpu, "Pass"), status])
        test.warnings += _messages(entry.get("warnings"), entry_key + ".warnings")
        test.info += _messages(entry.get("info"), entry_key + ".info")
    summary = raw.get("test_summary")
    if isinstance(summary, dict) and "status" in summary:
        test.status = normalise_status(summary["status"], key=f"{key}.test_summary.status")
    elif statuses:
        test.status = worst_status(statuses)
    else:
        raise ParseError("expected test results or a test_summary.status", key=key)
    return test


def parse_dcgmi_json(text: str) -> DcgmDiagResult:
    """Parse ``dcgmi diag -r N -j`` output (DCGM 3.x or 4.x shape)."""
    check_text(text, "dcgmi diag JSON output")
    doc = load_json_object(text, "dcgmi diag -j")
    top = next((k for k in _TOP_KEYS if k in doc), None)
    if top is None:
        raise ParseError(
            "expected top-level key 'DCGM Diagnostic' (DCGM 4.x) or 'DCGM GPU Diagnostic' "
            f"(DCGM 3.x); found {sorted(doc)[:6]}",
            key="<root>",
        )
    body = get_path(doc, top, dict, "the diagnostic body")
    runtime_error = body.get("runtime_error") or doc.get("runtime_error")
    categories = body.get("test_categories")
    if categories is None and runtime_error:
        categories = []
    if not isinstance(categories, list):
        raise ParseError("expected a list of test categories", key=f"{top}.test_categories")
    tests = []
    for c_index, category in enumerate(categories):
        c_key = f"{top}.test_categories[{c_index}]"
        if not isinstance(category, dict):
            raise ParseError("expected a category object", key=c_key)
        raw_tests = category.get("tests")
        if not isinstance(raw_tests, list):
            raise ParseError("expected a list of tests", key=c_key + ".tests")
        for t_index, raw in enumerate(raw_tests):
            tests.append(_test(raw, category.get("category"), f"{c_key}.tests[{t_index}]"))
    if not tests and not runtime_error:
        raise ParseError("expected at least one test", key=f"{top}.test_categories")
    metadata = m if isinstance(m := doc.get("metadata"), dict) else {}
    version = metadata.get("version") or body.get("version") or doc.get("version")
    driver = next(
        (src[k] for src in (metadata, body, doc) for k in _DRIVER_KEYS if src.get(k)), None
    )
    device_ids = _device_ids(doc, body)
    return build_result(
        cls=DcgmDiagJsonResult,
        tests=tests,
        dcgm_version=str(version) if version is not None else None,
        driver_version=str(driver) if driver is not None else None,
        gpu_device_ids=device_ids,
        source_format="json-4.x" if top == "DCGM Diagnostic" else "json-3.x",
        runtime_error=str(runtime_error) if runtime_error else None,
    )


def _device_ids(doc: dict[str, Any], body: dict[str, Any]) -> list[str]:
    """PCI device ids from 4.x ``entity_groups`` or 3.x ``GPU Device IDs``."""
    for src in (doc, body):
        ids = src.get("GPU Device IDs")
        if isinstance(ids, list):
            return [str(i) for i in ids]
    out = []
    groups = doc.get("entity_groups")
    if isinstance(groups, list):
        for group in groups:
            if not isinstance(group, dict) or str(group.get("entity_group", "")).upper() != "GPU":
                continue
            for entity in group.get("entities") or []:
                if isinstance(entity, dict) and entity.get("device_id") is not None:
                    out.append(str(entity["device_id"]))
    return out
