//! The two patches a stateful mock's `PATCH` applies to an item: an RFC 7386 JSON merge patch (an
//! object), and an RFC 6902 JSON Patch (an array of operations, `application/json-patch+json`).

use serde_json::{Map, Value};

/// RFC 7386 JSON merge patch: `patch`'s members set, `null`s remove, objects merge.
pub(super) fn merge_patch(target: &mut Value, patch: Value) {
    let Value::Object(patch) = patch else {
        *target = patch;
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let fields = target.as_object_mut().expect("made an object above");
    for (key, value) in patch {
        if value.is_null() {
            fields.remove(&key);
        } else {
            merge_patch(fields.entry(key).or_insert(Value::Null), value);
        }
    }
}

/// RFC 6902 JSON Patch: each operation (`add`, `remove`, `replace`, `move`, `copy`, `test`) in
/// turn, all or none: on the first that cannot apply, why, and `target` as it was.
pub(super) fn json_patch(target: &mut Value, operations: &[Value]) -> Result<(), String> {
    let mut patched = target.clone();
    for (i, operation) in operations.iter().enumerate() {
        apply(&mut patched, operation).map_err(|why| format!("operation {i} of the patch: {why}"))?;
    }
    *target = patched;
    Ok(())
}

fn apply(target: &mut Value, operation: &Value) -> Result<(), String> {
    let text = |name: &str| operation.get(name).and_then(Value::as_str).ok_or(format!("no `{name}`"));
    let value = || operation.get("value").cloned().ok_or_else(|| "no `value`".to_owned());
    let path = text("path")?;
    match text("op")? {
        "add" => add(target, path, value()?),
        "remove" => remove(target, path).map(drop),
        "replace" => {
            remove(target, path)?;
            add(target, path, value()?)
        }
        "move" => {
            let moved = remove(target, text("from")?)?;
            add(target, path, moved)
        }
        "copy" => {
            let copied = target.pointer(text("from")?).cloned().ok_or("`from` names nothing")?;
            add(target, path, copied)
        }
        "test" => match target.pointer(path) == Some(&value()?) {
            true => Ok(()),
            false => Err(format!("{path} is not the value tested")),
        },
        other => Err(format!("`{other}` is no operation")),
    }
}

/// The parent `path` names a member of, and that member's key (unescaped).
fn parent<'a>(target: &'a mut Value, path: &str) -> Result<(&'a mut Value, String), String> {
    let (parent, key) = path.rsplit_once('/').ok_or(format!("{path:?} is not a JSON pointer"))?;
    let key = key.replace("~1", "/").replace("~0", "~");
    Ok((target.pointer_mut(parent).ok_or(format!("{parent:?} names nothing"))?, key))
}

fn add(target: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *target = value;
        return Ok(());
    }
    match parent(target, path)? {
        (Value::Object(fields), key) => {
            fields.insert(key, value);
            Ok(())
        }
        (Value::Array(items), key) if key == "-" => {
            items.push(value);
            Ok(())
        }
        (Value::Array(items), key) => match key.parse::<usize>() {
            Ok(at) if at <= items.len() => {
                items.insert(at, value);
                Ok(())
            }
            _ => Err(format!("{path} is past the array's end")),
        },
        _ => Err(format!("{path} is inside neither an object nor an array")),
    }
}

fn remove(target: &mut Value, path: &str) -> Result<Value, String> {
    match parent(target, path)? {
        (Value::Object(fields), key) => fields.remove(&key).ok_or(format!("{path} names nothing")),
        (Value::Array(items), key) => match key.parse::<usize>() {
            Ok(at) if at < items.len() => Ok(items.remove(at)),
            _ => Err(format!("{path} names nothing")),
        },
        _ => Err(format!("{path} names nothing")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_merge_patch_sets_removes_and_merges() {
        let mut target = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": 4});
        super::merge_patch(&mut target, json!({"a": 5, "b": {"c": null, "f": 6}, "e": null}));
        assert_eq!(target, json!({"a": 5, "b": {"d": 3, "f": 6}}));
    }

    #[test]
    fn a_json_patch_applies_whole_or_not_at_all() {
        let mut target = json!({"name": "Rex", "tags": ["a"], "a~b": 1});
        let patch = json!([
            {"op": "replace", "path": "/name", "value": "Rex II"},
            {"op": "add", "path": "/tags/-", "value": "b"},
            {"op": "copy", "from": "/name", "path": "/alias"},
            {"op": "remove", "path": "/a~0b"},
            {"op": "test", "path": "/tags/1", "value": "b"},
        ]);
        super::json_patch(&mut target, patch.as_array().unwrap()).unwrap();
        assert_eq!(target, json!({"name": "Rex II", "tags": ["a", "b"], "alias": "Rex II"}));
        let failing = json!([{"op": "remove", "path": "/name"}, {"op": "test", "path": "/name", "value": 1}]);
        let why = super::json_patch(&mut target, failing.as_array().unwrap()).unwrap_err();
        assert!(why.starts_with("operation 1 of the patch"), "{why}");
        assert_eq!(target["name"], "Rex II", "nothing of a failed patch stays");
    }
}
