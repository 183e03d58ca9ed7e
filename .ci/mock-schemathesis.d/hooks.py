"""schemathesis hooks (SCHEMATHESIS_HOOKS) for `.ci/mock-schemathesis`: runs against a mock.

Two things the tester gets wrong about a document, each set right here; the server is unchanged.

Formats.
schemathesis bounds an integer only by `minimum`/`maximum`, so it sends 4435618450 where a
document says `format: uint32` (dropshot's documents, nexus and propolis) and 10^20 where it says
nothing. A Rust server holds such an integer in the type its format names, and an unformatted one
in 64 bits, and refuses what does not fit, as the validators do. This hook gives the tester the
same bounds, as `minimum`/`maximum` folded into the schema it loads.

Links it guesses. In the stateful phase schemathesis infers links between operations by name and
passes a value from one answer into another's path without checking it against that parameter's
schema: a crate's `id` (text, "serde") into crates.io's `crate_id` (int32), a user's UUID into
nexus' `user_name` (a pattern that excludes UUIDs); then the refusal is reported as "schema-valid
request rejected" (schemathesis/schemathesis#2983 is the same bug seen from the other check). A
rejection of a request whose path does not meet its schema is dropped; every other stands.
"""

import schemathesis

BOUNDS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
# An integer with no format: what the validators hold it in (i64 below zero, u64 above).
UNFORMATTED = (-(2**63), 2**64 - 1)


def bound(node):
    if isinstance(node, list):
        for item in node:
            bound(item)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    integer = kind == "integer" or (isinstance(kind, list) and "integer" in kind)
    if integer:
        low, high = BOUNDS.get(node.get("format"), UNFORMATTED)
        if not isinstance(node.get("minimum"), (int, float)) or node["minimum"] < low:
            node["minimum"] = low
        if not isinstance(node.get("maximum"), (int, float)) or node["maximum"] > high:
            node["maximum"] = high
    for value in node.values():
        bound(value)


@schemathesis.hook
def before_load_schema(context, raw_schema):
    bound(raw_schema)


def readings(value):
    """A path's text as each JSON type it may stand for: `42` may be an integer."""
    yield value
    if isinstance(value, str):
        for parse in (int, float):
            try:
                yield parse(value)
            except ValueError:
                pass


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if type(failure).__name__ != "RejectedPositiveData":
        return True
    for parameter in case.operation.path_parameters:
        value = (case.path_parameters or {}).get(parameter.name)
        if value is not None and not any(parameter.is_valid(v) for v in readings(value)):
            return False
    return True
