"""The OpenAPI schema's error answers, declared once for every operation.

drf-spectacular documents what a view declares; the answers every view can give come from
code shared by all of them (fleet.exceptions, fleet.parsers, fleet.middleware, DRF's
authentication and permission checks), so they are added here, by a postprocessing hook,
to each operation where they can happen: a generated client then has a model for every
error body, and schemathesis finds no undocumented status code.
"""

from __future__ import annotations

from typing import Any

from core.idempotency import HEADER as IDEMPOTENCY_KEY

# PUT/PATCH of these take `If-Match` (412 when the row changed since it was read).
IF_MATCH_PATHS = ("/api/v1/nodes/{id}/", "/api/v1/racks/{id}/", "/api/v1/rma-cases/{id}/")
WRITES = frozenset({"post", "put", "patch", "delete"})

STRINGS = {"type": "array", "items": {"type": "string"}}
COMPONENTS: dict[str, dict[str, Any]] = {
    "Error": {
        "type": "object",
        "description": "Every error but a refused field: what went wrong, for a person.",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
    },
    "ValidationError": {
        "type": "object",
        "description": "A 400: each key names a field (dotted for nested ones, "
        "`non_field_errors` or `detail` for the whole body) and lists what is wrong "
        "with it; a nested serializer's errors are an object of the same shape.",
        "additionalProperties": {},
    },
    "Conflict": {
        "type": "object",
        "description": "A 409: the request is legal but not now (the node's state, its "
        "lock, a value already taken, an object still in use). `allowed` lists what the "
        "current `state` (a node) or `status` (an RMA case) allows.",
        "properties": {
            "detail": {"type": "string"},
            "state": {"type": "string"},
            "status": {"type": "string"},
            "allowed": STRINGS,
            "locked_by": {"type": "string"},
            "locked_since": {"type": "string", "format": "date-time", "nullable": True},
        },
        "required": ["detail"],
    },
}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _answer(description: str, component: str) -> dict:
    return {
        "description": description,
        "content": {"application/json": {"schema": _ref(component)}},
    }


def _errors_of(path: str, method: str, operation: dict) -> dict[str, dict]:
    answers = {
        "400": _answer(
            "Bad input: a field, a query parameter (a NUL in any is refused) or the body "
            "(not JSON, nested too deeply, a NUL in a key or string).",
            "ValidationError",
        ),
        "401": _answer("No credentials, or a token that is not valid.", "Error"),
        "403": _answer("Your role does not allow this.", "Error"),
    }
    if "{" in path:
        answers["404"] = _answer("No such object (or action name).", "Error")
    elif _is_paginated(operation):
        answers["404"] = _answer("No such page: `page` is past the last one.", "Error")
    if method in WRITES:
        answers["409"] = _answer("Not possible now; see `detail`.", "Conflict")
    if method in ("put", "patch") and path in IF_MATCH_PATHS:
        answers["412"] = _answer(
            "`If-Match` names a version that is no longer current: read it again.", "Error"
        )
    if _takes_idempotency_key(operation):
        answers["422"] = _answer(
            f"This `{IDEMPOTENCY_KEY}` was already used (by you) for another method, path or "
            "body: use a new key for a new write.",
            "Error",
        )
    if "requestBody" in operation:
        answers["413"] = _answer("The request body is too large.", "Error")
        answers["415"] = _answer("Send the declared content type.", "Error")
    return answers


def _takes_idempotency_key(operation: dict) -> bool:
    return any(
        p.get("in") == "header" and p.get("name") == IDEMPOTENCY_KEY
        for p in operation.get("parameters", [])
    )


def _is_paginated(operation: dict) -> bool:
    """A list with `page`: a page past the last is DRF's 404 ("Invalid page")."""
    return any(
        p.get("in") == "query" and p.get("name") == "page" for p in operation.get("parameters", [])
    )


def add_error_responses(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS)."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(COMPONENTS)
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            for code, answer in _errors_of(path, method, operation).items():
                declared = responses.get(code)
                if declared is None or "content" not in declared:
                    description = (declared or {}).get("description") or answer["description"]
                    responses[code] = {**answer, "description": description}
    return result


# A query string may hold any character but U+0000: fleet.middleware refuses a NUL in any
# query parameter (PostgreSQL cannot compare against one), so the schema says so.
NO_NUL = "^[^\\u0000]*$"


def _refuse_nul(schema: dict) -> None:
    if schema.get("type") == "array":
        _refuse_nul(schema.get("items", {}))
    elif schema.get("type") == "string" and "enum" not in schema and "format" not in schema:
        schema.setdefault("pattern", NO_NUL)


def query_strings_refuse_nul(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook: free-text query parameters say they take no
    NUL. Without it, a generated schema-valid value holding one was refused (400)."""
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query":
                    _refuse_nul(parameter.get("schema", {}))
    return result
