"""The last touches to the spec apispec generates, so that client generators read
it as the API behaves (docs/SDK.md has the conventions):

- a nullable reference is ``allOf: [{$ref}]`` with ``nullable: true``, OpenAPI
  3.0's own form (apispec writes ``anyOf: [{type: object, nullable}, {$ref}]``,
  which generators read as "any object");
- a request body's schema shows no ``default``: generators (openapi-typescript's
  ``defaultNonNullable``) would make such a field required, though a client
  may leave it out; its description says the default instead;
- the stock problem answers flask-smorest adds (422 of a request's fields, the
  ``default`` answer) show an example, as every documented one does;
- every operation declares its ``security``, that of its route's access in the
  route table (:func:`service.api.routes.securities`): no view declares its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.api.problems import problem_body

STOCK_EXAMPLES = {
    "UNPROCESSABLE_ENTITY": problem_body(
        "VALIDATION_ERROR",
        "some fields are invalid; see errors",
        errors={"after": ["Not a valid integer."]},
    ),
    "DEFAULT_ERROR": problem_body("INTERNAL", "internal error; it has been logged"),
}


OPERATIONS = frozenset({"get", "put", "post", "delete", "patch", "head", "options", "trace"})
"""The keys of a path item that are operations."""

Securities = Mapping[tuple[str, str], list[dict[str, list[str]]]]
"""``(path, method)`` -> an operation's ``security``."""


def finalize_spec(spec: dict[str, Any], securities: Securities) -> dict[str, Any]:
    """``spec`` (as apispec made it) with the touches above; ``securities`` has
    every operation's ``security`` (an operation missing from it: ValueError)."""
    fixed: dict[str, Any] = _nullable_refs(spec)
    for path, item in fixed["paths"].items():
        for method, operation in item.items():
            if method in OPERATIONS:
                if (path, method) not in securities:
                    raise ValueError(f"{method.upper()} {path}: no access in the route table")
                operation["security"] = [dict(each) for each in securities[path, method]]
    schemas = fixed["components"]["schemas"]
    for name in _request_schemas(fixed):
        for prop in schemas[name].get("properties", {}).values():
            prop.pop("default", None)
    for name, example in STOCK_EXAMPLES.items():
        response = fixed["components"].get("responses", {}).get(name)
        if response is not None:
            for media in response["content"].values():
                media["example"] = example
    return fixed


NULL_OBJECT = {"type": "object", "nullable": True}


def _nullable_refs(node: Any) -> Any:
    if isinstance(node, dict):
        any_of = node.get("anyOf")
        if isinstance(any_of, list) and len(any_of) == 2 and NULL_OBJECT in any_of:
            ref = any_of[1 - any_of.index(NULL_OBJECT)]  # first or last: apispec writes both
            if set(ref) == {"$ref"}:
                rest = {k: _nullable_refs(v) for k, v in node.items() if k != "anyOf"}
                return {**rest, "allOf": [ref], "nullable": True}
        return {k: _nullable_refs(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_nullable_refs(v) for v in node]
    return node


def _request_schemas(spec: dict[str, Any]) -> set[str]:
    """The component schemas a request body refers to, directly or not."""
    found: set[str] = set()
    todo = [
        media["schema"]
        for item in spec["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for media in operation.get("requestBody", {}).get("content", {}).values()
    ]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
                name = ref.rsplit("/", 1)[1]
                if name not in found:
                    found.add(name)
                    todo.append(spec["components"]["schemas"][name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return found
