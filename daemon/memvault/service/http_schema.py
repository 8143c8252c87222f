"""The HTTP API's request schemas: validation and the OpenAPI document, from one table.

``SCHEMAS`` names each operation's fields with their type, range and doc;
``validate`` checks a decoded JSON body (or a query string) against it —
unknown fields, missing ones and wrong types are a 400 with a message — and
``openapi_schema`` describes the same fields, so the document cannot drift
from what the routes accept. Pure: no Starlette, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memvault import __version__

T = TypeVar("T")

CATEGORIES = ("people", "projects", "decisions", "logs")


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


# -- request schemas ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Field:
    kind: str  # str | int | bool | strlist | strmap | intlist
    required: bool = False
    lo: int | None = None
    hi: int | None = None
    doc: str = ""
    # its type is checked where it is used, in that code's own words (the memory tool's
    # fields: POST /memory-tool answers as the tool in-process does, text for text)
    loose: bool = False


FILTERS = {
    "folder": Field("str", doc="top folder, e.g. decisions"),
    "tags": Field("strlist", doc="every tag must be present"),
    "since": Field("str", doc="YYYY-MM-DD"),
    "until": Field("str", doc="YYYY-MM-DD"),
    "where": Field("strmap", doc="frontmatter field = value"),
    "path": Field("str", doc="glob over note paths"),
}
SCHEMAS: dict[str, dict[str, Field]] = {
    "sync": {
        "paths": Field("strlist", doc="vault-relative paths; omitted: everything"),
        "vectors": Field("bool", doc="false: the structure only; vectors follow in the background"),
    },
    "search": {
        "query": Field("str", True),
        "k": Field("int", lo=1, hi=100),
        "group": Field("bool", doc="one hit per note"),
        **FILTERS,
    },
    "context": {"query": Field("str", True), "budget": Field("int", lo=1, hi=100_000), **FILTERS},
    "add": {
        "category": Field("str", True, doc=" | ".join(CATEGORIES)),
        "title": Field("str", True),
        "summary": Field("str"),
        "fields": Field("strmap"),
        "body": Field("str"),
        "update": Field(
            "bool",
            doc="change an existing note: fields set, `body` added at its end (no word of it "
            "replaced) unless `section` names the part to replace",
        ),
        "section": Field("str", doc="replace only the text under this heading with `body`"),
    },
    "log": {"text": Field("str", True)},
    "get": {"lines": Field("str", doc="a:b"), "heading": Field("str")},
    # Claude's memory tool (memory_20250818): one command, its fields as the API sends them
    "memory-tool": {
        "command": Field("str", True, doc="view | create | str_replace | insert | delete | rename"),
        "path": Field("str", doc="under /memories (the vault's root); all but rename", loose=True),
        "view_range": Field(
            "intlist",
            doc=(
                "view: [first, last] line (-1 or null: the end); of a folder, [first entry, "
                "the mark its page's command gives]"
            ),
            loose=True,
        ),
        "file_text": Field("str", doc="create", loose=True),
        "old_str": Field("str", doc="str_replace: the text, found exactly once", loose=True),
        "new_str": Field("str", doc="str_replace", loose=True),
        "insert_line": Field("int", doc="insert: after this line (0: at the top)", loose=True),
        "insert_text": Field("str", doc="insert", loose=True),
        "old_path": Field("str", doc="rename", loose=True),
        "new_path": Field("str", doc="rename", loose=True),
    },
    "related": {
        "path": Field("str", True),
        "k": Field("int", lo=1, hi=100),
        "exclude": Field("strlist", doc="folders whose notes are left out (repeat the parameter)"),
    },
}


def _check(value: Any, field: Field, name: str) -> Any:
    if field.loose:
        return value
    ok = {
        "str": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "strlist": isinstance(value, list) and all(isinstance(v, str) for v in value),
        "strmap": isinstance(value, dict) and all(isinstance(v, str) for v in value.values()),
        "intlist": isinstance(value, list)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value),
    }[field.kind]
    if not ok:
        wanted = {
            "str": "a string",
            "int": "a whole number",
            "bool": "true or false",
            "strlist": "a list of strings",
            "strmap": "an object of strings",
            "intlist": "a list of whole numbers",
        }[field.kind]
        raise ApiError(400, "BadRequest", f"'{name}' must be {wanted}")
    out_of_range = field.kind == "int" and (
        (field.lo is not None and value < field.lo) or (field.hi is not None and value > field.hi)
    )
    if out_of_range:
        raise ApiError(400, "BadRequest", f"'{name}' must be between {field.lo} and {field.hi}")
    return value


def validate(data: Any, schema: str) -> dict[str, Any]:
    """Check a decoded body (or query) against ``SCHEMAS[schema]``; 400 on any mismatch."""
    spec = SCHEMAS[schema]
    if not isinstance(data, dict):
        raise ApiError(400, "BadRequest", "the body must be a JSON object")
    unknown = sorted(set(data) - set(spec))
    if unknown:
        raise ApiError(
            400, "BadRequest", f"unknown field '{unknown[0]}' (known: {', '.join(spec) or 'none'})"
        )
    missing = [n for n, f in spec.items() if f.required and data.get(n) is None]
    if missing:
        raise ApiError(400, "BadRequest", f"missing field '{missing[0]}'")
    return {n: _check(v, spec[n], n) for n, v in data.items() if v is not None}


# -- OpenAPI -----------------------------------------------------------------------------------

_JSON_TYPES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
    "strlist": {"type": "array", "items": {"type": "string"}},
    "strmap": {"type": "object", "additionalProperties": {"type": "string"}},
    "intlist": {"type": "array", "items": {"type": "integer"}},
}


def from_query(items: Sequence[tuple[str, str]], schema: str) -> dict[str, Any]:
    """A query string's parameters (``multi_items``), validated: a list field's repeated
    ones a list (``?exclude=a&exclude=b``), an int field's a number; any other given more
    than once is a 400 (the last was taken alone: ``?lines=1:2&lines=9:10`` gave 9-10)."""
    spec = SCHEMAS[schema]
    data: dict[str, Any] = {}
    for name, value in items:
        field = spec.get(name)
        if field is not None and field.kind == "strlist":
            data.setdefault(name, []).append(value)
        elif name in data:
            raise ApiError(400, "BadRequest", f"'{name}' given more than once: give it once")
        elif field is not None and field.kind == "int":
            try:
                data[name] = int(value)
            except ValueError:
                raise ApiError(400, "BadRequest", f"'{name}' must be a whole number") from None
        else:
            data[name] = value
    return validate(data, schema)


def _object(schema: str) -> dict[str, Any]:
    props = {}
    for name, f in SCHEMAS[schema].items():
        prop: dict[str, Any] = dict(_JSON_TYPES[f.kind])
        if f.lo is not None:
            prop.update(minimum=f.lo, maximum=f.hi)
        if f.doc:
            prop["description"] = f.doc
        props[name] = prop
    required = [n for n, f in SCHEMAS[schema].items() if f.required]
    return {
        "type": "object",
        "properties": props,
        "additionalProperties": False,
        **({"required": required} if required else {}),
    }


def _params(schema: str) -> list[dict[str, Any]]:
    return [
        {
            "name": n,
            "in": "query",
            "required": f.required,
            "schema": _JSON_TYPES[f.kind],
            **({"explode": True} if f.kind == "strlist" else {}),
        }
        for n, f in SCHEMAS[schema].items()
    ]


def _hits() -> dict[str, Any]:
    """The answer of /search and /related: ``{"hits": [Hit.to_dict()]}``."""
    text = {"type": "string"}
    count = {"type": "integer", "minimum": 0}
    hit = {
        "type": "object",
        "properties": {
            "path": text,
            "title": text,
            "heading": {"type": "array", "items": text},
            "line_start": count,
            "line_end": count,
            "snippet": text,
            "score": {"type": "number"},
            "text": text,
            "label": {"type": "integer"},
            "ord": {"type": "integer"},
            "pending": {"type": "boolean", "description": "found by keywords only: no vector yet"},
            "copies": {
                **count,
                "description": "the other candidates holding this text word for word "
                "(spaces and case aside), kept off the page: k hits are k texts",
            },
            "copy_paths": {
                "type": "array",
                "items": text,
                "description": "the notes of those copies, best first, the first 10",
            },
            "this_copy": {
                "type": "string",
                "enum": ["", "missing", "differs"],
                "description": "on a reader of a team's index: this copy of the vault lacks "
                "the note (missing) or holds other bytes (differs); the text is the index's",
            },
            "address": text,
        },
    }
    note = {
        "type": "string",
        "description": "/search only, when the answer misses notes of this copy: a reader "
        "daemon's notes changed here that the team's index lacks or holds older "
        "(docs/TEAM.md), or notes changed since a holder kept the index",
    }
    schema = {
        "type": "object",
        "properties": {"hits": {"type": "array", "items": hit}, "note": note},
    }
    return {"description": "OK", "content": {"application/json": {"schema": schema}}}


def _written() -> dict[str, Any]:
    """The answer of POST /notes and /log: ``WriteResult.to_dict()``."""
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "created": {"type": "boolean"},
            "written": {
                "type": "boolean",
                "description": "false when the note held it already (the same log line at "
                "the same minute, an update's body): nothing was written",
            },
            "note": {
                "type": "string",
                "description": "only when the note written is past a quarter of "
                "vault.max_note_bytes: its size, that a write past the cap is refused, and "
                "a title for the next note",
            },
            "report": {"type": "object", "description": "the sync after the write"},
        },
        "required": ["path", "created", "written", "report"],
    }
    return {"description": "OK", "content": {"application/json": {"schema": schema}}}


def openapi_schema() -> dict[str, Any]:
    """An OpenAPI 3.1 description generated from the same schemas the routes check."""
    error = {
        "description": "error",
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {
                                "type": {"type": "string"},
                                "message": {"type": "string"},
                            },
                        }
                    },
                }
            }
        },
    }
    ok = {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}

    def post(schema: str, summary: str, created: bool = False) -> dict[str, Any]:
        responses = {
            "200": ok,
            "400": error,
            "401": error,
            "409": error,
            "413": error,
            "503": error,
        }
        if created:
            responses["201"] = ok
        return {
            "post": {
                "summary": summary,
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _object(schema)}},
                },
                "responses": responses,
            }
        }

    def get(summary: str, params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        op: dict[str, Any] = {
            "summary": summary,
            "responses": {"200": ok, "400": error, "401": error, "404": error},
        }
        if params:
            op["parameters"] = params
        return {"get": op}

    path_param = {"name": "path", "in": "path", "required": True, "schema": {"type": "string"}}
    health = get("liveness; no token needed")
    health["get"]["security"] = []
    search = post("search", "hybrid search")
    search["post"]["responses"]["200"] = _hits()
    related = get("notes most like a given note", _params("related"))
    related["get"]["responses"] = {**related["get"]["responses"], "200": _hits()}
    add = post("add", "create (201) or update (200) a note from its template", True)
    add["post"]["responses"].update({"200": _written(), "201": _written()})
    log_entry = post("log", "add a timestamped line to today's log, after its last entry")
    log_entry["post"]["responses"]["200"] = _written()
    return {
        "openapi": "3.1.0",
        "info": {"title": "memvault daemon", "version": __version__},
        "servers": [{"url": "http://127.0.0.1:{port}", "variables": {"port": {"default": "0"}}}],
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": {
            "/health": health,
            "/status": get("Vault.status() plus the daemon's own state"),
            "/sync": post("sync", "reconcile the index with the files (all, or some paths)"),
            "/search": search,
            "/context": post("context", "a cited context within a token budget"),
            "/notes/{path}": get(
                "a note, a section or a line range", [path_param, *_params("get")]
            ),
            "/notes": add,
            "/log": log_entry,
            "/related": related,
            "/memory-tool": post(
                "memory-tool",
                'one command of Claude\'s memory tool on the vault: {"result": text}; a refused '
                "command is a 400 MemoryToolError whose message is the tool's error text",
            ),
            "/events": {
                "get": {
                    "summary": "server-sent events: `event: status` (the daemon's state: "
                    "watching, indexing with progress, lag, errors) and `event: sync` per "
                    "index change",
                    "responses": {
                        "200": {
                            "description": "text/event-stream",
                            "content": {"text/event-stream": {}},
                        }
                    },
                }
            },
            "/openapi.json": get("this document"),
        },
    }


def noted(body: dict[str, Any], note: str | None) -> dict[str, Any]:
    """A search's or context's answer, with ``note`` when the vault said what it misses
    (``Vault.stale`` read in the thread that searched: a reader daemon's notes changed
    here that the team's index lacks, engine/changed_here; a read beside a holder that
    did not let go)."""
    return {**body, "note": note} if note else body


def with_note(vault: Any, call: Callable[[], T]) -> tuple[T, str | None]:
    """``call()``'s answer and its note (``Vault.stale``), read in the thread that asked
    (a worker thread: another request's search runs beside it, with a note of its own)."""
    return call(), vault.stale


__all__ = [
    "CATEGORIES",
    "FILTERS",
    "SCHEMAS",
    "ApiError",
    "Field",
    "from_query",
    "noted",
    "openapi_schema",
    "validate",
    "with_note",
]
