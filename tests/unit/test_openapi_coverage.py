"""memlet serves every one of Letta 0.16.8's 224 OSS operations, with Letta's method, path and operationId, and
names each wire model once."""

from bench.openapi_coverage import coverage, memlet_spec


def test_every_letta_operation_is_served() -> None:
    operations, gaps = coverage(memlet_spec())
    assert len(operations) == 224
    assert gaps == []


def test_schema_names_are_unqualified() -> None:
    # Pydantic qualifies a component name with its module (memlet__x__y__Name) when two models share a name.
    qualified = [name for name in memlet_spec()["components"]["schemas"] if "__" in name]
    assert qualified == []
