"""A validator of the part of JSON Schema that docs/report.schema.json uses
(type, const, enum, minimum, pattern, required, properties,
additionalProperties, items, $ref to #/$defs): Debian's python3-jsonschema
is not among the test packages. Any other keyword is refused, so that the
schema cannot silently use one this validator would ignore."""
import re

KNOWN = {"$schema", "$id", "title", "description", "type", "const", "enum", "minimum", "pattern",
         "required", "properties", "additionalProperties", "items", "$ref", "$defs"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "number": (int, float),
         "integer": int}


def errors(value, schema, root=None, where="$"):
    """The list of violations of `schema` by `value`, each as 'path: why'."""
    root = schema if root is None else root
    unknown = set(schema) - KNOWN
    if unknown:
        raise ValueError(f"schema keyword(s) {sorted(unknown)} at {where} are not supported")
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(value, root["$defs"][name], root, where)
    out = []
    t = schema.get("type")
    if t is not None:
        ok = isinstance(value, TYPES[t]) and not (t in ("number", "integer") and isinstance(value, bool))
        if not ok:
            return [f"{where}: {value!r} is not of type {t}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        out.append(f"{where}: {value!r} < {schema['minimum']}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        out.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{where}: '{key}' is required")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                out += errors(v, props[key], root, f"{where}.{key}")
            elif extra is False:
                out.append(f"{where}: '{key}' is not allowed")
            elif isinstance(extra, dict):
                out += errors(v, extra, root, f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            out += errors(v, schema["items"], root, f"{where}[{i}]")
    return out
