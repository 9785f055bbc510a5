//! Schema-guided coercion of model output toward a tool's input schema.
//!
//! Only these changes are made, each only where the schema asks for the target type and the value
//! does not already fit: a numeric string to an integer or number (`"42"` -> `42`), `"true"` /
//! `"false"` to a boolean, a JSON-encoded string to the object or array the schema wants, and a
//! single value to a one-element array. Every change is recorded with its JSON pointer. Nothing else
//! is guessed; whatever still does not fit is left for the schema check to report.

use serde::Serialize;
use serde_json::Value;

/// One change coercion made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Coercion {
    /// JSON pointer of the changed value (`""` for the whole input).
    pub pointer: String,
    /// Which rule applied.
    pub rule: CoercionRule,
    /// The value before, as JSON text.
    pub from: String,
    /// The value after, as JSON text.
    pub to: String,
}

/// The coercion rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CoercionRule {
    /// `"42"` -> `42`.
    StringToInteger,
    /// `"4.5"` -> `4.5`.
    StringToNumber,
    /// `"true"` -> `true`.
    StringToBoolean,
    /// `"{...}"` -> `{...}`.
    JsonStringToObject,
    /// `"[...]"` -> `[...]`.
    JsonStringToArray,
    /// `x` -> `[x]`.
    WrapInArray,
    /// A relative (or `~/`) path in a read or write tool's rule field -> the absolute path it means,
    /// so hooks and rules always see absolute paths (as Claude Code's hooks do).
    AbsolutePath,
    /// A field the call left out, set to the operator's default from settings
    /// (`respectGitignore: false` sets Glob's `no_ignore`).
    OperatorDefault,
}

/// Sets each of `defaults` the input leaves out and the schema declares, recording the change.
pub(crate) fn apply_defaults(
    input: &mut Value,
    schema: &Value,
    defaults: &serde_json::Map<String, Value>,
) -> Vec<Coercion> {
    let (Some(object), Some(properties)) = (
        input.as_object_mut(),
        schema.get("properties").and_then(Value::as_object),
    ) else {
        return Vec::new();
    };
    let mut changes = Vec::new();
    for (field, value) in defaults {
        if properties.contains_key(field) && !object.contains_key(field) {
            object.insert(field.clone(), value.clone());
            changes.push(Coercion {
                pointer: format!("/{}", field.replace('~', "~0").replace('/', "~1")),
                rule: CoercionRule::OperatorDefault,
                from: "(absent)".to_owned(),
                to: value.to_string(),
            });
        }
    }
    changes
}

/// Makes the path in `field` absolute against `workspace` (`~/` against `home`), recording the change.
/// Only for read and write tools, whose rule field is a path by contract.
pub(crate) fn absolutize_path(
    input: &mut Value,
    field: &str,
    workspace: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Option<Coercion> {
    let Some(Value::String(path)) = input.get(field) else {
        return None;
    };
    let absolute = if let Some(rest) = path.strip_prefix("~/") {
        home?.join(rest)
    } else if std::path::Path::new(path).is_absolute() {
        return None;
    } else {
        workspace.join(path)
    };
    let absolute = Value::String(absolute.to_string_lossy().into_owned());
    let change = Coercion {
        pointer: format!("/{}", field.replace('~', "~0").replace('/', "~1")),
        rule: CoercionRule::AbsolutePath,
        from: input[field].to_string(),
        to: absolute.to_string(),
    };
    input[field] = absolute;
    Some(change)
}

/// Deepest nesting coercion follows; deeper values are left to the schema check.
const MAX_DEPTH: usize = 32;

/// Coerces `input` toward `schema`, returning the new value and the changes made.
pub(crate) fn coerce(schema: &Value, input: Value) -> (Value, Vec<Coercion>) {
    let mut changes = Vec::new();
    let value = Coercer {
        root: schema,
        changes: &mut changes,
    }
    .value(schema, input, &mut String::new(), 0);
    (value, changes)
}

struct Coercer<'a> {
    root: &'a Value,
    changes: &'a mut Vec<Coercion>,
}

impl<'a> Coercer<'a> {
    fn value(
        &mut self,
        schema: &'a Value,
        value: Value,
        pointer: &mut String,
        depth: usize,
    ) -> Value {
        if depth > MAX_DEPTH {
            return value;
        }
        let schema = self.resolve(schema, 0);
        let branches = alternatives(schema);
        if !branches.is_empty() {
            // Already fits one branch: descend into that branch only.
            if let Some(branch) = branches
                .iter()
                .map(|branch| self.resolve(branch, 0))
                .find(|branch| fits(branch, &value))
            {
                return self.descend(branch, value, pointer, depth);
            }
            for branch in branches {
                let branch = self.resolve(branch, 0);
                if let Some(changed) = self.convert(branch, &value, pointer, depth) {
                    return changed;
                }
            }
            return value;
        }
        if fits(schema, &value) {
            return self.descend(schema, value, pointer, depth);
        }
        match self.convert(schema, &value, pointer, depth) {
            Some(changed) => changed,
            None => value,
        }
    }

    /// Tries each coercion the schema's types allow; `None` when none applies.
    fn convert(
        &mut self,
        schema: &'a Value,
        value: &Value,
        pointer: &mut String,
        depth: usize,
    ) -> Option<Value> {
        let types = types(schema);
        let wants = |name: &str| types.contains(&name);
        if let Value::String(text) = value {
            let trimmed = text.trim();
            if wants("integer")
                && let Ok(number) = trimmed.parse::<i64>()
            {
                return Some(self.record(
                    pointer,
                    CoercionRule::StringToInteger,
                    value,
                    number.into(),
                ));
            }
            if wants("number")
                && let Ok(number) = trimmed.parse::<f64>()
                && let Some(number) = serde_json::Number::from_f64(number)
            {
                return Some(self.record(
                    pointer,
                    CoercionRule::StringToNumber,
                    value,
                    Value::Number(number),
                ));
            }
            if wants("boolean") && (text == "true" || text == "false") {
                return Some(self.record(
                    pointer,
                    CoercionRule::StringToBoolean,
                    value,
                    Value::Bool(text == "true"),
                ));
            }
            if (wants("object") || wants("array"))
                && let Ok(decoded) = serde_json::from_str::<Value>(trimmed)
            {
                let rule = match decoded {
                    Value::Object(_) if wants("object") => Some(CoercionRule::JsonStringToObject),
                    Value::Array(_) if wants("array") => Some(CoercionRule::JsonStringToArray),
                    _ => None,
                };
                if let Some(rule) = rule {
                    let decoded = self.descend(schema, decoded, pointer, depth);
                    return Some(self.record(pointer, rule, value, decoded));
                }
            }
        }
        if wants("array") && !value.is_array() && !value.is_null() {
            let wrapped = self.descend(schema, Value::Array(vec![value.clone()]), pointer, depth);
            return Some(self.record(pointer, CoercionRule::WrapInArray, value, wrapped));
        }
        None
    }

    /// Recurses into object properties and array items.
    fn descend(
        &mut self,
        schema: &'a Value,
        value: Value,
        pointer: &mut String,
        depth: usize,
    ) -> Value {
        match value {
            Value::Object(map) => {
                let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                    return Value::Object(map);
                };
                let mut out = serde_json::Map::with_capacity(map.len());
                for (key, item) in map {
                    let item = match properties.get(&key) {
                        Some(property) => with_segment(pointer, &key, |pointer| {
                            self.value(property, item, pointer, depth + 1)
                        }),
                        None => item,
                    };
                    out.insert(key, item);
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                let Some(item_schema) = schema.get("items") else {
                    return Value::Array(items);
                };
                items
                    .into_iter()
                    .enumerate()
                    .map(|(index, item)| {
                        with_segment(pointer, &index.to_string(), |pointer| {
                            self.value(item_schema, item, pointer, depth + 1)
                        })
                    })
                    .collect()
            }
            other => other,
        }
    }

    fn record(&mut self, pointer: &str, rule: CoercionRule, from: &Value, to: Value) -> Value {
        self.changes.push(Coercion {
            pointer: pointer.to_owned(),
            rule,
            from: from.to_string(),
            to: to.to_string(),
        });
        to
    }

    /// Follows local `$ref`s (`#/$defs/...`, `#/definitions/...`).
    fn resolve(&self, schema: &'a Value, hops: usize) -> &'a Value {
        resolve_ref(self.root, schema, hops)
    }
}

/// Runs `f` with `segment` appended to the JSON pointer (escaped per RFC 6901), then restores it.
fn with_segment<R>(pointer: &mut String, segment: &str, f: impl FnOnce(&mut String) -> R) -> R {
    let length = pointer.len();
    pointer.push('/');
    pointer.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    let result = f(pointer);
    pointer.truncate(length);
    result
}

/// Follows a local `$ref` from `schema` within `root`, at most a few hops.
fn resolve_ref<'a>(root: &'a Value, schema: &'a Value, hops: usize) -> &'a Value {
    let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
        return schema;
    };
    if hops > 8 {
        return schema;
    }
    reference
        .strip_prefix('#')
        .and_then(|pointer| root.pointer(pointer))
        .map_or(schema, |target| resolve_ref(root, target, hops + 1))
}

/// The branches of `anyOf` / `oneOf`, without the `null` branch coercion never targets.
fn alternatives(schema: &Value) -> Vec<&Value> {
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .filter(|branch| types(branch) != ["null"])
        .collect()
}

/// The `type` keyword as a list.
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// True when `value`'s JSON type is one the schema allows (or the schema states no type).
fn fits(schema: &Value, value: &Value) -> bool {
    let types = types(schema);
    if types.is_empty() {
        return true;
    }
    types.iter().any(|name| match (*name, value) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("string", Value::String(_)) => true,
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(number)) => {
            number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "count": {"type": ["integer", "null"]},
                "ratio": {"type": "number"},
                "loud": {"type": "boolean"},
                "name": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "meta": {"anyOf": [{"$ref": "#/$defs/Meta"}, {"type": "null"}]}
            },
            "$defs": {"Meta": {"type": "object", "properties": {"depth": {"type": "integer"}}}}
        })
    }

    /// Input, expected output, expected (pointer, rule) changes.
    type Case = (Value, Value, Vec<(&'static str, CoercionRule)>);

    #[test]
    fn coercion_table() {
        let cases: Vec<Case> = vec![
            (
                json!({"count": "42"}),
                json!({"count": 42}),
                vec![("/count", CoercionRule::StringToInteger)],
            ),
            (
                json!({"count": " 7 "}),
                json!({"count": 7}),
                vec![("/count", CoercionRule::StringToInteger)],
            ),
            (json!({"count": "4.5"}), json!({"count": "4.5"}), vec![]),
            (
                json!({"ratio": "0.5"}),
                json!({"ratio": 0.5}),
                vec![("/ratio", CoercionRule::StringToNumber)],
            ),
            (
                json!({"loud": "true"}),
                json!({"loud": true}),
                vec![("/loud", CoercionRule::StringToBoolean)],
            ),
            (json!({"loud": "yes"}), json!({"loud": "yes"}), vec![]),
            (json!({"loud": "True"}), json!({"loud": "True"}), vec![]),
            (json!({"name": 5}), json!({"name": 5}), vec![]),
            (
                json!({"tags": "a"}),
                json!({"tags": ["a"]}),
                vec![("/tags", CoercionRule::WrapInArray)],
            ),
            (
                json!({"tags": "[\"a\",\"b\"]"}),
                json!({"tags": ["a", "b"]}),
                vec![("/tags", CoercionRule::JsonStringToArray)],
            ),
            (
                json!({"ids": ["1", 2]}),
                json!({"ids": [1, 2]}),
                vec![("/ids/0", CoercionRule::StringToInteger)],
            ),
            (
                json!({"meta": "{\"depth\":\"3\"}"}),
                json!({"meta": {"depth": 3}}),
                vec![
                    ("/meta/depth", CoercionRule::StringToInteger),
                    ("/meta", CoercionRule::JsonStringToObject),
                ],
            ),
            (
                json!({"meta": {"depth": "2"}}),
                json!({"meta": {"depth": 2}}),
                vec![("/meta/depth", CoercionRule::StringToInteger)],
            ),
            (json!({"unknown": "42"}), json!({"unknown": "42"}), vec![]),
            (
                json!("{\"count\":\"1\"}"),
                json!({"count": 1}),
                vec![
                    ("/count", CoercionRule::StringToInteger),
                    ("", CoercionRule::JsonStringToObject),
                ],
            ),
            (json!({"count": 3}), json!({"count": 3}), vec![]),
        ];
        for (input, expected, expected_changes) in cases {
            let (output, changes) = coerce(&schema(), input.clone());
            assert_eq!(output, expected, "{input}");
            let got: Vec<(&str, CoercionRule)> = changes
                .iter()
                .map(|c| (c.pointer.as_str(), c.rule))
                .collect();
            assert_eq!(got, expected_changes, "{input}");
        }
    }

    #[test]
    fn path_fields_become_absolute() {
        let workspace = std::path::Path::new("/ws");
        let home = std::path::Path::new("/home/u");
        let cases = [
            (json!({"file_path": "a/b.txt"}), Some("/ws/a/b.txt")),
            (json!({"file_path": "../x"}), Some("/ws/../x")),
            (json!({"file_path": "~/notes"}), Some("/home/u/notes")),
            (json!({"file_path": "/abs"}), None),
            (json!({"file_path": 3}), None),
            (json!({}), None),
        ];
        for (input, expected) in cases {
            let mut value = input.clone();
            let change = absolutize_path(&mut value, "file_path", workspace, Some(home));
            assert_eq!(
                change.as_ref().map(|c| c.rule),
                expected.map(|_| CoercionRule::AbsolutePath),
                "{input}"
            );
            if let Some(expected) = expected {
                assert_eq!(value["file_path"], expected, "{input}");
            } else {
                assert_eq!(value, input);
            }
        }
    }

    #[test]
    fn records_before_and_after() {
        let (_, changes) = coerce(&schema(), json!({"count": "42"}));
        assert_eq!(changes[0].from, "\"42\"");
        assert_eq!(changes[0].to, "42");
    }
}
