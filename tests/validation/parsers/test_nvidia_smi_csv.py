"""nvidia-smi --query-gpu CSV as a gate reads it: with the fields of its own command."""


def test_a_gate_reads_header_less_csv_with_the_fields_of_its_own_command():
    """A check that runs --format=csv,noheader failed every real gate: the runner never
    gave the parser the --query-gpu list (found with the H100 recordings, issue 28)."""
    from validation.parsers import query_fields
    from validation.verdicts import CheckSpec, NodeContext
    from validation.verdicts.registry import judge_output

    command = "nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits"
    assert query_fields(command) == ["index", "name", "memory.total"]
    assert query_fields("nvidia-smi --query-gpu 'index,uuid' --format=csv") == ["index", "uuid"]
    assert query_fields("nvidia-smi -q") is None
    spec = CheckSpec(name="smi", tool="nvidia-smi-csv", command=command)
    node = NodeContext("gpu1", "H100-SXM", 1, "none")
    verdict = judge_output(spec, "0, NVIDIA H100 80GB HBM3, 81559\n", node)
    assert "could not parse" not in verdict.reason
