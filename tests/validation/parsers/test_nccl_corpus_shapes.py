"""nccl-tests shapes found in the real-output corpus (tests/corpus/tools/nccl, issue 28).

Expected values are read off the sample text, not taken from the parser's output.
"""

import pytest

from validation.parsers import ParseError
from validation.parsers.nccl import parse_nccl
from validation.parsers.nccl_result import error_tolerance

from .helpers import corpus

DEEPOPS_A100 = "nccl/allreduce-old-error-column-2node-DGXA100-deepops.txt"
DEEPOPS_DGX1 = "nccl/allreduce-old-error-column-DGX1-4x100G-deepops.txt"
COREWEAVE = "nccl/allreduce-old-error-column-128xA100-ib-coreweave.txt"
ALLTOALL = "nccl/alltoall-2.x-8xA100-blank-redop-superbench.txt"


@pytest.mark.parametrize(
    "name,max_error,busbw",
    [(DEEPOPS_A100, 5e-07, 188.70), (DEEPOPS_DGX1, 5e-07, 48.07), (COREWEAVE, 2e-06, 44.72)],
)
def test_old_error_column_is_the_max_relative_error_not_a_count(name, max_error, busbw):
    # Every row prints a non-zero `error` (e.g. 5e-07) and the footer says
    # "# Out of bounds values : 0 OK": nccl-tests < 2.13 counted a row out of bounds only
    # when that error exceeded its float tolerance. These were read as 60 wrong elements.
    result = parse_nccl(corpus(name))
    assert result.wrong_total == 0
    assert result.max_error == pytest.approx(max_error)
    assert result.out_of_bounds == 0
    assert result.busbw_inplace_at_max_gbps == pytest.approx(busbw)


def test_old_error_over_the_tools_own_tolerance_still_counts():
    # nccl-tests 2.x common.cu: a row is out of bounds when
    # maxDelta > DeltaMaxValue(type) * (nranks - 1); float's DeltaMaxValue is 1e-5.
    text = corpus(DEEPOPS_A100).replace(
        "4294967296    1073741824     float     sum    42715  100.55  188.53  5e-07",
        "4294967296    1073741824     float     sum    42715  100.55  188.53  3e-04",
    )
    result = parse_nccl(text)
    assert result.wrong_total == 1
    assert result.rows[-1].oop_error == pytest.approx(3e-04)
    assert result.rows[-1].oop_wrong == 1 and result.rows[-1].ip_wrong == 0


def test_error_tolerance_follows_nccl_tests():
    assert error_tolerance("float", 8) == pytest.approx(7e-05)
    assert error_tolerance("half", 2) == pytest.approx(1e-02)
    assert error_tolerance("double", 0) == pytest.approx(1e-12)  # ranks unknown: factor 1
    assert error_tolerance("int32", 8) == 0.0  # integers must be exact
    assert error_tolerance("no-such-type", 8) == 0.0


def test_alltoall_rows_with_a_blank_redop_cell():
    # nccl-tests prints the redop of a non-reducing test as blanks, so these rows have
    # one cell fewer than the header names; they were refused as garbled.
    result = parse_nccl(corpus(ALLTOALL))
    assert len(result.rows) == 34
    assert result.rows[0].redop is None
    assert result.max_size_bytes == 8589934592
    assert result.busbw_inplace_at_max_gbps == pytest.approx(226.16)
    assert result.busbw_outofplace_at_max_gbps == pytest.approx(224.31)
    assert result.ranks == 8


def test_a_row_missing_its_type_is_still_garbled():
    text = corpus(ALLTOALL).replace(
        "  8589934592     268435456   float", "  8589934592     268435456      "
    )
    with pytest.raises(ParseError, match="columns"):
        parse_nccl(text)


def test_plain_nccl_version_line_is_read():
    # nccl-tests 2.19 with NCCL_DEBUG unset prints "NCCL version 2.19.3+cuda12.2" on a
    # line of its own (no '#', no 'NCCL INFO') between the device list and the header.
    result = parse_nccl(corpus("nccl/allreduce-2.19-8xH200-single-size-azure.txt"))
    assert result.nccl_version == "2.19.3+cuda12.2"
    assert result.busbw_inplace_at_max_gbps == pytest.approx(476.98)
    assert result.collective == "all_reduce"
