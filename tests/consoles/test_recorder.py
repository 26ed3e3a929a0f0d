"""A console log keeps about its last LOG_BYTES, counts all, and keeps bytes as written;
the page's text is what a terminal would have shown."""

from __future__ import annotations

import pytest

from consoles import selectors
from consoles.models import LOG_BYTES, ConsoleChunk, ConsoleLog
from consoles.recorder import Recorder
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def log():
    return ConsoleLog.objects.create(node=NodeFactory(), state="deploying")


def test_a_long_boot_keeps_its_end_and_counts_what_scrolled_away(log):
    recorder = Recorder(log)
    line = b"[    1.000000] a kernel line of sixty-four bytes, more or less......\r\n"
    written = 0
    for _ in range(20):  # 20 flushes of 32 KiB: 640 KiB, more than twice what is kept
        for _ in range(32 * 1024 // len(line)):
            recorder.write(line)
            written += len(line)
        recorder.flush()
    recorder.write(b"login: ")
    recorder.flush(ended=True, reason="the node left deploying")
    log.refresh_from_db()
    kept = selectors.output(log)
    assert log.total_bytes == written + len(b"login: ")
    assert LOG_BYTES <= len(kept) == log.kept_bytes <= LOG_BYTES + 33 * 1024
    assert kept.endswith(b"login: ") and log.dropped_bytes == log.total_bytes - len(kept)
    assert log.ended is not None and log.end_reason == "the node left deploying"
    assert ConsoleChunk.objects.filter(log=log).count() < 20


def test_more_output_between_two_flushes_than_is_kept_keeps_the_newest(log):
    recorder = Recorder(log)
    recorder.write(b"old" * LOG_BYTES)
    recorder.write(b"newest")
    recorder.flush()
    log.refresh_from_db()
    assert selectors.output(log).endswith(b"newest")
    assert log.kept_bytes == LOG_BYTES and log.total_bytes == 3 * LOG_BYTES + 6


def test_bytes_are_kept_as_the_machine_wrote_them(log):
    recorder = Recorder(log)
    noise = bytes(range(256)) * 3
    recorder.write(noise)
    recorder.flush()
    assert selectors.output(log) == noise


def test_the_page_shows_what_a_terminal_would():
    raw = (
        b"\x1b[2J\x1b[1;1HSeaBIOS (version 1.16.2)\r\n"  # clear screen, cursor home
        b"\x1b]0;title\x07Booting from ROM...\r\n"  # a window title
        b"Progress: 10%\rProgress: 100%\r\n"  # a carriage return rewrites its line
        b"\x1b[1;31merror:\x1b[0m no bootable device\x00\x07\r\n"
        b"caf\xc3\xa9 \xff\xfe broken UTF-8\r\n"
    )
    assert selectors.readable(raw).split("\n") == [
        "SeaBIOS (version 1.16.2)",
        "Booting from ROM...",
        "Progress: 100%",
        "error: no bootable device",
        "café \ufffd\ufffd broken UTF-8",
        "",
    ]
