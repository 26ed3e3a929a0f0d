"""nccl-tests ``-J <file>`` JSON output.

Shape as written by nccl-tests ``src/util.cu`` (JSON_FILE_VERSION 2): top-level
``version``, ``args`` (argv, so ``args[0]`` names the test binary), ``nccl_version``,
``config`` (with ``devices``: rank/group/pid/hostname/device/device_hex/device_info),
``results`` (size, count, type, redop, root as a padded string, ``out_of_place`` and
``in_place`` objects of time/alg_bw/bus_bw/nwrong, nwrong null where not checked),
then ``out_of_bounds`` {count, okay} and ``average_bus_bandwidth`` {bandwidth, okay}.
nccl-tests closes every open object when it exits, so a crashed run still yields valid
JSON; the two footer objects are what prove the run finished. Doubles may be the
string ``"nan"``.
"""

from __future__ import annotations

from typing import Any

from .base import ParseError, check_text, get_path, load_json_object
from .nccl_result import NcclDevice, NcclResult, NcclRow, collective_from_program, summarise


def _number(value: Any, key: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ParseError("expected a number, got a boolean", key=key)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.strip().lower() in ("nan", "n/a"):
        return float("nan")
    raise ParseError(f"expected a number, got {value!r}", key=key)


def _integer(value: Any, key: str) -> int:
    if isinstance(value, bool):
        raise ParseError("expected an integer, got a boolean", key=key)
    try:
        return int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise ParseError(f"expected an integer, got {value!r}", key=key)


def _measure(row: dict[str, Any], name: str, key: str) -> tuple:
    block = row.get(name)
    if block is None:
        return (None, None, None, None)
    if not isinstance(block, dict):
        raise ParseError("expected an object", key=f"{key}.{name}")
    time = block.get("time", block.get("cpu_time"))
    wrong = _number(block.get("nwrong"), f"{key}.{name}.nwrong")
    return (
        _number(time, f"{key}.{name}.time"),
        _number(block.get("alg_bw"), f"{key}.{name}.alg_bw"),
        _number(block.get("bus_bw"), f"{key}.{name}.bus_bw"),
        None if wrong is None or wrong != wrong else int(wrong),
    )


def parse_nccl_json(text: str) -> NcclResult:
    """Parse the JSON file written by nccl-tests ``-J``."""
    check_text(text, "nccl-tests JSON output")
    doc = load_json_object(text, "nccl-tests -J")
    results = get_path(doc, "results", list, "the list of result rows")
    rows = []
    for index, raw in enumerate(results):
        key = f"results[{index}]"
        if not isinstance(raw, dict):
            raise ParseError("expected a result object", key=key)
        for required in ("size", "count", "type"):
            if required not in raw:
                raise ParseError(f"expected '{required}' in a result row", key=key)
        oop = _measure(raw, "out_of_place", key)
        ip = _measure(raw, "in_place", key)
        root = raw.get("root")
        rows.append(
            NcclRow(
                size=_integer(raw["size"], key + ".size"),
                count=_integer(raw["count"], key + ".count"),
                type=str(raw["type"]),
                redop=str(raw["redop"]) if raw.get("redop") is not None else None,
                root=_integer(root, key + ".root") if root is not None else None,
                oop_time_us=oop[0],
                oop_algbw_gbps=oop[1],
                oop_busbw_gbps=oop[2],
                oop_wrong=oop[3],
                ip_time_us=ip[0],
                ip_algbw_gbps=ip[1],
                ip_busbw_gbps=ip[2],
                ip_wrong=ip[3],
            )
        )
    oob = get_path(doc, "out_of_bounds.count", (int, str), "the out-of-bounds footer")
    avg = get_path(
        doc, "average_bus_bandwidth.bandwidth", (int, float, str), "the average bus bandwidth"
    )
    devices = []
    raw_devices = (
        doc.get("config", {}).get("devices", []) if isinstance(doc.get("config"), dict) else []
    )
    for index, dev in enumerate(raw_devices if isinstance(raw_devices, list) else []):
        key = f"config.devices[{index}]"
        if not isinstance(dev, dict):
            raise ParseError("expected a device object", key=key)
        devices.append(
            NcclDevice(
                rank=_integer(dev.get("rank"), key + ".rank"),
                group=_integer(dev["group"], key + ".group") if "group" in dev else None,
                pid=_integer(dev["pid"], key + ".pid") if "pid" in dev else None,
                host=str(dev.get("hostname", "")),
                device=_integer(dev.get("device"), key + ".device"),
                pci=str(dev.get("device_hex", "")),
                model=str(dev.get("device_info", "")),
            )
        )
    args = doc.get("args")
    program = args[0] if isinstance(args, list) and args and isinstance(args[0], str) else ""
    version = doc.get("nccl_version")
    avg_value = _number(avg, "average_bus_bandwidth.bandwidth")
    return summarise(
        rows=rows,
        devices=devices,
        collective=collective_from_program(program) if program else None,
        avg_busbw=avg_value if avg_value is not None else float("nan"),
        out_of_bounds=_integer(oob, "out_of_bounds.count"),
        nccl_version=str(version) if version is not None else None,
        source_format="json",
        nccl_warnings=[str(e) for e in doc.get("errors", []) if e]
        if isinstance(doc.get("errors"), list)
        else [],
    )
