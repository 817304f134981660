"""The tool parameters, annotations and output schemas the server publishes, derived from the vocabulary
(`model`'s enums and field declarations) so the schemas never hold a copy of it."""

import inspect
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from memory_mcp.truth.model import Decision, FieldSpec, ForgetMode, MemoryType, Tool, Trust, settable

# Clients that defer tool definitions (Claude Code's tool search) keep these two loaded: recall
# first and remember are the loop the memory exists for (../shared/reference/mcp-conventions.md).
ALWAYS_LOAD = {"anthropic/alwaysLoad": True}
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
IDEMPOTENT_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                    open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                               open_world_hint=False)


def choices(enum: type[StrEnum]) -> Any:
    """The tool-schema type of an enumeration: a Literal of its values, derived, never copied."""
    return Literal[tuple(e.value for e in enum)]


MemoryTypeArg = choices(MemoryType)
TrustArg = choices(Trust)
ForgetModeArg = choices(ForgetMode)
DecisionArg = choices(Decision)
ScopeArg = Literal["project", "team", "user"]
SCOPE_HELP = ("project, team or user store, when the server serves several (started with --user-store; team when "
              "the person joined the project's team store); default: project")


_KIND_ARG: dict[str, Any] = {"list": list[str], "text": str, "date": str, "number": float}


def _field_arg(spec: FieldSpec, tool: Tool) -> inspect.Parameter:
    """The tool parameter for a frontmatter field `tool` may set, typed and described from its
    declaration in `model.Memory`. For memory_update every field is optional (None: unchanged)."""
    kind: Any = choices(spec.enum) if spec.enum is not None else _KIND_ARG[spec.kind]
    default: Any = None
    if tool == "update":
        kind = kind | None
    elif spec.kind == "list":
        default = []
    else:
        default = spec.enum(str(spec.default)).value if spec.enum is not None else spec.default
        if default is None:
            kind = kind | None
    description = spec.description + (", or '' to clear" if tool == "update" and spec.kind == "date" else "")
    return inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[kind, Field(description=description)])


def with_fields(tool: Tool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Publish a tool function's `**fields` as one parameter per field `tool` may set
    (`model.settable`), placed before `scope`: a field declared settable needs no code here."""
    def publish(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in sig.parameters.values()
               if p.kind is not inspect.Parameter.VAR_KEYWORD]
        at = next((i for i, p in enumerate(own) if p.name == "scope"), len(own))
        added = [_field_arg(spec, tool) for spec in settable(tool)]
        fn.__signature__ = sig.replace(parameters=[*own[:at], *added, *own[at:]])  # type: ignore[attr-defined]
        return fn
    return publish


def nullable_as_type_list(schema: Any) -> Any:
    """`schema` with each `{"anyOf": [{"type": T}, {"type": "null"}]}` (pydantic's `T | None`)
    written as the equivalent `{"type": [T, "null"]}`. A client validates every result against the
    output schema: the Python SDK's jsonschema took 1.25 ms for a recall's eight hits with the anyOf
    form (it tries the first branch and builds an error for each null) and 0.80 ms with type lists."""
    if isinstance(schema, list):
        return [nullable_as_type_list(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: nullable_as_type_list(v) for k, v in schema.items()}
    alts = out.get("anyOf")
    if isinstance(alts, list) and len(alts) == 2 and {"type": "null"} in alts:
        other = alts[1 - alts.index({"type": "null"})]
        if isinstance(other, dict) and set(other) == {"type"} and isinstance(other["type"], str):
            del out["anyOf"]
            out["type"] = [other["type"], "null"]
    return out
