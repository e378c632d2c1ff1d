"""memlet serves every one of Letta 0.16.8's 224 OSS operations, with Letta's method, path and operationId."""

from bench.openapi_coverage import coverage, memlet_spec


def test_every_letta_operation_is_served() -> None:
    operations, gaps = coverage(memlet_spec())
    assert len(operations) == 224
    assert gaps == []
