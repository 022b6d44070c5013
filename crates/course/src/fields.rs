//! Reading a tagged object's fields by hand: the actions of a script are read through these few
//! small functions instead of one serde-derived visitor per action struct. Same rules as serde's
//! derive with `deny_unknown_fields` (a missing required field, a wrong type, an unknown field
//! are errors with serde's wording; a missing optional field takes its default; `null` counts as
//! absent only for `Option`s), but a fraction of the code in the page and the AI worker, which
//! both read courses.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The fields of one JSON object, taken out one by one; what is left at the end is unknown.
///
/// Reading never stops early: a bad field records the first error and yields a default, and
/// [`Fields::done`] reports it. That keeps each reader a straight line of calls (no cleanup path
/// per field), and the calls are never inlined: together that is what makes the readers small.
pub(crate) struct Fields {
    map: Map<String, Value>,
    error: Option<String>,
}

/// A value a field can hold, read from JSON.
pub(crate) trait FieldValue: Sized + Default {
    fn from_json(value: Value) -> Result<Self, String>;
}

/// serde's name for a JSON value in an "invalid type" message.
fn unexpected(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => format!("integer `{u}`"),
            (None, Some(i)) => format!("integer `{i}`"),
            _ => format!("floating point `{n}`"),
        },
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

fn invalid(value: &Value, expected: &str) -> String {
    format!("invalid type: {}, expected {expected}", unexpected(value))
}

impl FieldValue for String {
    fn from_json(value: Value) -> Result<Self, String> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(invalid(&other, "a string")),
        }
    }
}

impl FieldValue for f64 {
    fn from_json(value: Value) -> Result<Self, String> {
        match value.as_f64() {
            Some(n) => Ok(n),
            None => Err(invalid(&value, "f64")),
        }
    }
}

impl<T: FieldValue> FieldValue for Option<T> {
    fn from_json(value: Value) -> Result<Self, String> {
        match value {
            Value::Null => Ok(None),
            other => T::from_json(other).map(Some),
        }
    }
}

impl Fields {
    pub(crate) fn of(map: Map<String, Value>) -> Fields {
        Fields { map, error: None }
    }

    #[inline(never)]
    fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key)
    }

    #[inline(never)]
    fn fail(&mut self, error: String) {
        self.error.get_or_insert(error);
    }

    #[inline(never)]
    fn convert<T: FieldValue>(&mut self, value: Value) -> T {
        T::from_json(value).unwrap_or_else(|error| {
            self.fail(error);
            T::default()
        })
    }

    /// A field that must be there.
    #[inline(never)]
    pub(crate) fn req<T: FieldValue>(&mut self, key: &str) -> T {
        match self.take(key) {
            Some(value) => self.convert(value),
            None => {
                self.fail(format!("missing field `{key}`"));
                T::default()
            }
        }
    }

    /// A field that may be left out, taking `default` then.
    #[inline(never)]
    pub(crate) fn or<T: FieldValue>(&mut self, key: &str, default: T) -> T {
        match self.take(key) {
            Some(value) => self.convert(value),
            None => default,
        }
    }

    /// An optional field: absent or null is `None`.
    #[inline(never)]
    pub(crate) fn opt<T: FieldValue>(&mut self, key: &str) -> Option<T> {
        self.or(key, None)
    }

    /// A field of a type serde reads (an enum, a nested struct), required; the one reader that
    /// returns early, for types without a default.
    #[inline(never)]
    pub(crate) fn serde<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, String> {
        match self.take(key) {
            Some(value) => serde_json::from_value(value).map_err(|e| e.to_string()),
            None => Err(format!("missing field `{key}`")),
        }
    }

    /// A field of a type serde reads, its default when left out.
    #[inline(never)]
    pub(crate) fn serde_or_default<T: DeserializeOwned + Default>(&mut self, key: &str) -> T {
        match self.take(key) {
            Some(value) => serde_json::from_value(value).unwrap_or_else(|e| {
                self.fail(e.to_string());
                T::default()
            }),
            None => T::default(),
        }
    }

    /// The first error met, else an unknown field if any is left.
    pub(crate) fn done(&mut self) -> Result<(), String> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        match self.map.keys().next() {
            Some(key) => Err(format!("unknown field `{key}`")),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields(value: Value) -> Fields {
        match value {
            Value::Object(map) => Fields::of(map),
            _ => unreachable!("test objects"),
        }
    }

    #[test]
    fn required_optional_and_defaulted_fields_follow_serde() {
        let mut f = fields(json!({"a": "x", "n": 3, "o": null}));
        assert_eq!(f.req::<String>("a"), "x");
        assert_eq!(f.req::<f64>("n"), 3.0);
        assert_eq!(f.opt::<String>("o"), None);
        assert_eq!(f.opt::<String>("absent"), None);
        assert_eq!(f.or("w", 400.0), 400.0);
        assert!(f.done().is_ok());
        let mut f = fields(json!({"a": "x"}));
        f.req::<String>("a");
        f.req::<String>("gone");
        assert_eq!(f.done(), Err("missing field `gone`".into()));
        let mut f = fields(json!({"a": 3, "b": null, "extra": true}));
        f.req::<String>("a");
        f.or("b", 1.0);
        assert_eq!(
            f.done(),
            Err("invalid type: integer `3`, expected a string".into()),
            "the first error is the one reported"
        );
        let mut f = fields(json!({"b": null, "extra": true}));
        assert_eq!(f.or("b", 1.0), 0.0);
        assert_eq!(f.done(), Err("invalid type: null, expected f64".into()));
        let mut f = fields(json!({"extra": true}));
        assert_eq!(f.done(), Err("unknown field `extra`".into()));
    }
}
