"""Shared helpers for the parser tests: fixture loading and truncation/garbling."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tool_outputs"


def load(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def cut_half(text: str) -> str:
    return text[: len(text) // 2]


def cut_before(text: str, marker: str) -> str:
    """Everything before the LAST occurrence of ``marker`` (the footer/verdict block)."""
    index = text.rindex(marker)
    return text[:index]


CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "tools"


def corpus(relative: str) -> str:
    """A real tool output from tests/corpus/tools (sources in its SOURCES.md)."""
    return (CORPUS / relative).read_text(encoding="utf-8")
