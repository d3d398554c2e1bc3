//! JSON patterns for analysis responses. A pattern is JSON, matched against a response:
//!
//! - numbers equal to a millionth (relative: values computed in `f32` arrive as `f64`),
//!   other scalars exactly;
//! - `"*"` matches any value, `"*N"` any array of N values;
//! - `"~REGEX"` matches a scalar whose text (a string's contents, else its JSON) matches
//!   the whole of REGEX (shorthands as in [`super::whole_regex`]);
//! - an object needs exactly its keys, unless it has a `"..."` key, which allows others;
//! - an array needs exactly its elements, unless its last is `"..."`, which allows more.

use serde_json::Value;

use super::whole_regex;

/// Why `actual` does not match `pattern`, or `Ok` when it does.
pub fn check(pattern: &Value, actual: &Value) -> Result<(), String> {
    at("", pattern, actual)
}

fn at(path: &str, pattern: &Value, actual: &Value) -> Result<(), String> {
    let fail = |why: String| {
        Err(format!(
            "{}: {why}",
            if path.is_empty() { "." } else { path }
        ))
    };
    match pattern {
        Value::String(p) if p == "*" => Ok(()),
        Value::String(p) if p.len() > 1 && p.starts_with('*') => {
            let Ok(n) = p[1..].parse::<usize>() else {
                return fail(format!("bad pattern {p:?}"));
            };
            match actual.as_array() {
                Some(a) if a.len() == n => Ok(()),
                Some(a) => fail(format!("{} values, expected {n}", a.len())),
                None => fail(format!("{actual} is not an array")),
            }
        }
        Value::String(p) if p.starts_with('~') => {
            let text = match actual {
                Value::String(s) => s.clone(),
                Value::Array(_) | Value::Object(_) => {
                    return fail(format!("{actual} is not a scalar"))
                }
                other => other.to_string(),
            };
            if whole_regex(&p[1..])?.is_match(&text) {
                Ok(())
            } else {
                fail(format!("{text:?} does not match {p:?}"))
            }
        }
        Value::Number(p) => match (p.as_f64(), actual.as_f64()) {
            (Some(p), Some(a)) if (p - a).abs() <= 1e-6 * p.abs().max(1.0) => Ok(()),
            _ => fail(format!("{actual}, expected {p}")),
        },
        Value::Object(p) => {
            let Some(a) = actual.as_object() else {
                return fail(format!("{actual} is not an object"));
            };
            let open = p.contains_key("...");
            for (k, v) in p.iter().filter(|(k, _)| *k != "...") {
                match a.get(k) {
                    Some(x) => at(&format!("{path}.{k}"), v, x)?,
                    None => return fail(format!("no key {k:?}")),
                }
            }
            match a.keys().find(|k| !p.contains_key(*k)) {
                Some(k) if !open => fail(format!("unexpected key {k:?}")),
                _ => Ok(()),
            }
        }
        Value::Array(p) => {
            let Some(a) = actual.as_array() else {
                return fail(format!("{actual} is not an array"));
            };
            let (p, open) = match p.split_last() {
                Some((Value::String(s), head)) if s == "..." => (head, true),
                _ => (&p[..], false),
            };
            if a.len() < p.len() || (!open && a.len() != p.len()) {
                return fail(format!("{} values, expected {}", a.len(), p.len()));
            }
            for (i, (pv, av)) in p.iter().zip(a).enumerate() {
                at(&format!("{path}[{i}]"), pv, av)?;
            }
            Ok(())
        }
        _ if pattern == actual => Ok(()),
        _ => fail(format!("{actual}, expected {pattern}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patterns_match_what_they_say_and_nothing_else() {
        let r = json!({"id":"a","visits":8,"pv":["E5","D4"],"own":[0.5,-1,0],"ok":true});
        assert!(check(
            &json!({"id":"a","visits":8.0,"pv":"*","own":"*3","ok":true}),
            &r
        )
        .is_ok());
        assert!(check(&json!({"id":"a","...":""}), &r).is_ok());
        assert!(
            check(&json!({"id":"a"}), &r).is_err(),
            "other keys need \"...\""
        );
        assert!(check(&json!({"id":"b","...":""}), &r).is_err());
        assert!(check(&json!({"visits":"~[0-9]+","...":""}), &r).is_ok());
        assert!(check(&json!({"visits":"~[a-z]+","...":""}), &r).is_err());
        assert!(check(&json!({"pv":["~{vertex}","..."],"...":""}), &r).is_ok());
        assert!(check(&json!({"pv":["E5"],"...":""}), &r).is_err());
        assert!(check(&json!({"own":"*2","...":""}), &r).is_err());
        assert!(check(&json!({"missing":"*","...":""}), &r).is_err());
        assert!(check(&json!({"ok":false,"...":""}), &r).is_err());
        assert!(check(&json!(0.1), &json!(f64::from(0.1f32))).is_ok());
        assert!(check(&json!(0.1), &json!(0.1001)).is_err());
    }
}
