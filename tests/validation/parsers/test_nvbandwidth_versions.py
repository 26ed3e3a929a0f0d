"""nvbandwidth shapes of v0.6 and v0.10 from the real-output corpus (issue 28).

Expected values are read off the sample text, not taken from the parser's output.
"""

import pytest

from validation.parsers import ParseError
from validation.parsers.nvbandwidth import parse_nvbandwidth

from .helpers import corpus

V010 = "nvbandwidth/v0.10-7xB300-coefficient-of-variation.txt"
V06 = "nvbandwidth/v0.6-GH200-host-tests-waived-superbench.txt"


def test_v010_coefficient_of_variation_lines_are_read_not_refused():
    result = parse_nvbandwidth(corpus(V010))
    assert result.version == "v0.10.0"
    assert result.driver_version == "610.57.04"
    write = result.tests["device_to_device_memcpy_write_ce"]
    assert write.sum == pytest.approx(32521.50)
    assert write.cov == pytest.approx(0.00)
    assert write.min == pytest.approx(774.15)  # row 3 column 1, row 5 columns 0-4
    assert write.max == pytest.approx(774.57)  # row 1 column 0
    assert len(write.columns) == 7
    assert result.tests["device_to_host_bidirectional_memcpy_ce"].cov == pytest.approx(0.01)


def test_v010_bidirectional_tests_keep_each_matrix_under_its_sum_name():
    result = parse_nvbandwidth(corpus(V010))
    read1 = result.tests["device_to_device_bidirectional_memcpy_read_ce_read1"]
    assert read1.sum == pytest.approx(31945.78)
    assert read1.min == pytest.approx(759.23)  # row 1 column 6 and row 6 column 1
    total = result.tests["device_to_device_bidirectional_memcpy_write_ce_total"]
    assert total.sum == pytest.approx(64669.78)
    assert total.min == pytest.approx(1539.28)
    assert total.cov is None  # the capture ends right after this SUM line
    assert "Total" in total.title


def test_v06_waived_lines_and_note_footer():
    result = parse_nvbandwidth(corpus(V06))
    assert result.version == "v0.6"
    assert result.devices == ["NVIDIA GH200 480GB (00000009:01:00)"]
    # "Waived:" names no test: it must not waive the test printed before it
    latency = result.tests["host_device_latency_sm"]
    assert latency.waived is False
    assert latency.unit == "ns" and latency.sum == pytest.approx(772.58)
    assert result.waived_unnamed == 17
    assert result.tests["host_to_device_memcpy_ce"].sum == pytest.approx(1985.60)


def test_v010_garbled_row_still_raises():
    text = corpus(V010).replace(" 3    774.36    774.15", " 3    774.36    77#.15")
    with pytest.raises(ParseError, match="line"):
        parse_nvbandwidth(text)


def test_v010_missing_sum_of_one_matrix_raises():
    text = corpus(V010).replace(
        "SUM device_to_device_bidirectional_memcpy_read_ce_read2 31924.12\n", ""
    )
    with pytest.raises(ParseError, match="read_ce_read2"):
        parse_nvbandwidth(text)
