"""Tool `parameters` (JSON Schema 2020-12) from untrusted scenarios, checked and applied safely.

`schema_problem` is run by the loader (`harness check`, and before every run); what it accepts,
`tool_validator` applies without any of the three ways a stock jsonschema validator can be
made to hang, crash or reach out:

- `$ref` (and `$dynamicRef`) resolve only inside the document: a ref that does not start with
  `#` (a URL, `file:`, a relative path) is refused, a ref to nothing is refused, and so is a
  loop of refs that would validate one value for ever (`$ref: '#'` at the top, `a -> b -> a`).
  The validator's registry has no retrieval at all, so nothing is ever fetched or opened
  (stock jsonschema fetches unknown URLs with urllib, without a timeout).
- `pattern` and `patternProperties` run on RE2 (the `google-re2` wheel), whose matching time
  is linear in the text: `^(a+)+$` against 50,000 `a`s and a `b` answers in microseconds where
  Python's backtracking engine never does. RE2 lacks lookaround and backreferences (which is
  what makes it linear); a pattern using them is refused with a clear error. RE2 is closer to
  JSON Schema's ECMA-262 regexes than Python's `re` in one more way: `\\d` and `\\w` are ASCII.
- `unevaluatedProperties` is refused beside `patternProperties` in one schema, because
  jsonschema evaluates that combination with Python's `re` internally.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
import re2  # type: ignore[import-untyped]
import referencing.exceptions
from jsonschema import validators
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing._core import Resolver
from referencing.jsonschema import DRAFT202012

Path_ = tuple[str | int, ...]

REF_KEYWORDS = ("$ref", "$dynamicRef")
# Subschemas validated against the same value as their parent ("in place"): a ref loop
# through these alone never moves into the value, so it never ends.
IN_PLACE_ONE = ("not", "if", "then", "else")
IN_PLACE_LIST = ("allOf", "anyOf", "oneOf")
IN_PLACE_MAP = ("dependentSchemas",)
# Subschemas applied to a part of the value.
CHILD_ONE = (
    "additionalProperties",
    "items",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)
CHILD_LIST = ("prefixItems",)
CHILD_MAP = ("properties", "patternProperties", "$defs", "definitions")


class SchemaProblem(ValueError):
    """A tool schema the harness will not apply: `path` is the field inside `parameters`."""

    def __init__(self, path: Path_, problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem


# ---- regexes ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def compiled(pattern: str) -> Any:
    """The RE2 program of a pattern; ValueError (its reason) when RE2 cannot take it."""
    options = re2.Options()
    options.log_errors = False  # RE2 logs each parse error to stderr; the caller reports it
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args else "invalid"
        raise ValueError(reason) from None
    except UnicodeEncodeError:
        raise ValueError("it holds a lone surrogate") from None


def search(pattern: str, text: str) -> bool:
    try:
        return compiled(pattern).search(text) is not None
    except UnicodeEncodeError:  # a lone surrogate in the value (from a model or a file)
        fixed = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return compiled(pattern).search(fixed) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    """jsonschema's own keyword, with the patterns matched by RE2."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        k for k in instance if k not in properties and not any(search(p, k) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = ", ".join(repr(k) for k in sorted(extras))
        if patterns:
            listed = ", ".join(repr(p) for p in sorted(patterns))
            yield jsonschema.ValidationError(
                f"{names} do(es) not match any of the regexes: {listed}"
            )
        else:
            yield jsonschema.ValidationError(
                f"Additional properties are not allowed ({names} unexpected)"
            )


SafeValidator: Any = validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)


def tool_validator(parameters: Mapping[str, Any], partial: bool = False) -> Validator:
    """A validator for a tool's arguments: RE2 patterns, refs only inside `parameters`, no
    retrieval. Use it on schemas `schema_problem` accepted (the loader checks every scenario).
    `partial`: without the top-level `required` (a `cases: when:` names only some arguments)."""
    schema = dict(parameters)
    if partial:
        schema.pop("required", None)
    validator: Validator = SafeValidator(schema, registry=Registry())
    return validator


def argument_errors(
    parameters: Mapping[str, Any], arguments: Any, partial: bool = False
) -> list[jsonschema.ValidationError]:
    """Every problem of `arguments` against `parameters`, never an exception: a schema that
    still breaks validation (it was not checked) is one error saying so."""
    try:
        return list(tool_validator(parameters, partial).iter_errors(arguments))
    except (RecursionError, referencing.exceptions.Unresolvable) as exc:
        return [jsonschema.ValidationError(f"the parameters schema cannot be applied: {exc}")]


# ---- checking a schema ------------------------------------------------------------------------


def schema_problem(parameters: Any) -> SchemaProblem | None:
    """Why the harness will not apply this tool schema (path inside it + problem), or None."""
    if not isinstance(parameters, Mapping):
        return SchemaProblem((), "must be a JSON Schema object")
    try:
        resolver = Registry().resolver_with_root(DRAFT202012.create_resource(parameters))
        _check_tree(dict(parameters), (), resolver)
        _check_metaschema(dict(parameters))
        _check_loops(dict(parameters), (), resolver)
    except SchemaProblem as problem:
        return problem
    return None


def _check_metaschema(schema: dict[str, Any]) -> None:
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        problem = f"not a valid JSON Schema: {exc.message}"
        raise SchemaProblem(tuple(exc.absolute_path), problem) from None
    except RecursionError:
        raise SchemaProblem((), "not a valid JSON Schema: nested too deeply") from None


@dataclass(frozen=True, kw_only=True)
class _Sub:
    path: Path_
    schema: Mapping[str, Any]
    in_place: bool


def _subschemas(schema: Mapping[str, Any], path: Path_) -> Iterator[_Sub]:
    """The subschemas a schema applies, with their path and whether they apply in place."""
    for key in (*IN_PLACE_ONE, *CHILD_ONE):
        if isinstance(schema.get(key), Mapping):
            yield _Sub(path=(*path, key), schema=schema[key], in_place=key in IN_PLACE_ONE)
    for key in (*IN_PLACE_LIST, *CHILD_LIST):
        items = schema.get(key)
        if isinstance(items, list):
            for i, item in enumerate(items):
                if isinstance(item, Mapping):
                    yield _Sub(path=(*path, key, i), schema=item, in_place=key in IN_PLACE_LIST)
    for key in (*IN_PLACE_MAP, *CHILD_MAP):
        items = schema.get(key)
        if isinstance(items, Mapping):
            for name, item in items.items():
                if isinstance(item, Mapping):
                    sub = (*path, key, str(name))
                    yield _Sub(path=sub, schema=item, in_place=key in IN_PLACE_MAP)


def _scoped(resolver: Resolver[Any], schema: Mapping[str, Any]) -> Resolver[Any]:
    """The resolver inside `schema`: a nested `$id` changes what `#…` refers to."""
    if "$id" not in schema:
        return resolver
    resource: Resource[Any] = DRAFT202012.create_resource(schema)
    return resolver.in_subresource(resource)


def _check_tree(schema: Mapping[str, Any], path: Path_, resolver: Resolver[Any]) -> None:
    """Every ref local and resolvable, every regex RE2's, no RE2-less combination."""
    resolver = _scoped(resolver, schema)
    for keyword in REF_KEYWORDS:
        if keyword in schema:
            _resolve(schema[keyword], (*path, keyword), resolver)
    if isinstance(schema.get("pattern"), str):
        _check_regex(schema["pattern"], (*path, "pattern"))
    patterns = schema.get("patternProperties")
    if isinstance(patterns, Mapping):
        for key in patterns:
            _check_regex(str(key), (*path, "patternProperties", str(key)))
        if "unevaluatedProperties" in schema:
            raise SchemaProblem(
                (*path, "unevaluatedProperties"),
                "unevaluatedProperties beside patternProperties is not supported (jsonschema "
                "would match the patterns with Python's backtracking engine); use "
                "additionalProperties",
            )
    for sub in _subschemas(schema, path):
        _check_tree(sub.schema, sub.path, resolver)


def _check_regex(pattern: str, path: Path_) -> None:
    try:
        compiled(pattern)
        # jsonschema's metaschema check compiles it with Python's `re` too ("format": "regex"),
        # which recurses once per nested group.
        re.compile(pattern)
    except RecursionError:
        raise SchemaProblem(path, f"regex nests groups too deeply ({len(pattern)} chars)") from None
    except (ValueError, OverflowError, re.error) as exc:
        raise SchemaProblem(
            path,
            f"regex {_short(pattern)} is not supported: {exc}. Patterns run on RE2 (linear "
            "time, so a pattern cannot hang a run), which has no lookaround or backreferences",
        ) from None


def _short(text: str, keep: int = 60) -> str:
    return repr(text if len(text) <= keep else text[:keep] + "…")


def _resolve(ref: Any, path: Path_, resolver: Resolver[Any]) -> tuple[Any, Resolver[Any]]:
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise SchemaProblem(
            path,
            f"{_short(str(ref))} points outside the tool's parameters: only refs inside them "
            "resolve (#/$defs/NAME); nothing is fetched or read from a file",
        )
    try:
        resolved = resolver.lookup(ref)
    except (referencing.exceptions.Unresolvable, ValueError, TypeError, LookupError):
        raise SchemaProblem(
            path, f"{_short(ref)} refers to nothing in the tool's parameters"
        ) from None
    return resolved.contents, resolved.resolver


def _check_loops(schema: Mapping[str, Any], path: Path_, resolver: Resolver[Any]) -> None:
    """From every subschema, follow refs and in-place subschemas: meeting one again on the way
    is a loop. Each schema is followed once (`done`), so shared refs cost no more."""
    done: set[int] = set()

    def visit(schema: Mapping[str, Any], path: Path_, resolver: Resolver[Any]) -> None:
        resolver = _scoped(resolver, schema)
        _follow(schema, path, resolver, (), done)
        for sub in _subschemas(schema, path):
            visit(sub.schema, sub.path, resolver)

    visit(schema, path, resolver)


def _follow(
    schema: Any, path: Path_, resolver: Resolver[Any], on_path: tuple[int, ...], done: set[int]
) -> None:
    if not isinstance(schema, Mapping) or id(schema) in done:
        return
    if id(schema) in on_path:
        raise SchemaProblem(
            path,
            "the refs form a loop that never reaches a part of the value (e.g. `$ref: '#'` at "
            "the top, or two $defs referring to each other): validation would never end",
        )
    if len(on_path) > MAX_IN_PLACE_CHAIN:
        raise SchemaProblem(
            path, f"more than {MAX_IN_PLACE_CHAIN} refs and in-place subschemas chained"
        )
    on_path = (*on_path, id(schema))
    resolver = _scoped(resolver, schema)
    for keyword in REF_KEYWORDS:
        if keyword in schema:
            target, inner = _resolve(schema[keyword], (*path, keyword), resolver)
            _follow(target, (*path, keyword), inner, on_path, done)
    for sub in _subschemas(schema, path):
        if sub.in_place:
            _follow(sub.schema, sub.path, resolver, on_path, done)
    done.add(id(schema))


# Chains of refs and allOf/anyOf/… applied to one value: far beyond what a tool schema needs,
# well below Python's recursion limit for the validator that applies them.
MAX_IN_PLACE_CHAIN = 50
