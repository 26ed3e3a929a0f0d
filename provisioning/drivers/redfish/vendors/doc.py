"""The vendor quirk table of docs/inspection.md, written from the profiles themselves.

A page that lists quirks by hand drifts from the code; the table between
``<!-- vendor_quirks -->`` and ``<!-- /vendor_quirks -->`` is this module's output, and
tests/provisioning/test_redfish_corpus_docs.py fails until ``manage.py vendor_quirks``
has rewritten it.
"""

from __future__ import annotations

import re

from provisioning.drivers.redfish.vendors import PROFILES

BEGIN, END = "<!-- vendor_quirks -->", "<!-- /vendor_quirks -->"
_BLOCK = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.S)


def quirk_table() -> str:
    lines = [
        "| profile | chosen when | quirk it handles | proven by (tests/corpus/redfish) |",
        "|---|---|---|---|",
    ]
    for profile in PROFILES:
        when = (profile.matches.__doc__ or "").strip().splitlines()[0].removeprefix("When ")
        for index, (quirk, trees) in enumerate(profile.handles):
            proof = ", ".join(f"`{t}`" for t in trees)
            who = f"{profile.name} | {when}" if index == 0 else " | "
            lines.append(f"| {who} | {quirk} | {proof} |")
    lines += [
        "",
        "Firmware inventory members each profile keeps apart as not installed (matched on the",
        "member's Id or Name; drift compares installed versions only):",
        "",
        "| profile | Id or Name matches | why |",
        "|---|---|---|",
    ]
    for profile in PROFILES:
        for pattern, why in profile.not_installed:
            lines.append(f"| {profile.name} | `{pattern.pattern}` | {why} |")
    return "\n".join(lines) + "\n"


def refresh(text: str) -> str:
    """text with its vendor quirk table (if it has one) rewritten from the code."""
    return _BLOCK.sub(lambda _: f"{BEGIN}\n{quirk_table()}{END}", text)
