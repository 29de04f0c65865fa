//! `TABLE_x`/`ROW_x` trees and the cells in their rows. The shape of an
//! NX-OS structured body follows the data: one row is an object and several
//! a list, an empty table is left out, and a number may be a JSON number or
//! a string, within one object. [`rows`] and [`counter`] take every form;
//! what a row means is for the readers that call them.

use serde_json::{Map, Value};

use crate::counters::{cell, value, ParseError};

/// One `ROW_x` object.
pub type Row = Map<String, Value>;

/// The rows of `TABLE_<name>`/`ROW_<name>` in `obj`, in order, whatever
/// shape NX-OS chose: `ROW_<name>` an object (one row) or a list of rows;
/// `TABLE_<name>` an object or a list of `{ROW_<name>: …}` objects; a table
/// left out (NX-OS omits an empty one) or null has no rows, and so has a
/// null `obj` (an empty answer). Works at any depth: pass a row to read the
/// table nested in it.
pub fn rows<'a>(obj: &'a Value, name: &str) -> Result<Vec<&'a Row>, ParseError> {
    match obj {
        Value::Null => Ok(Vec::new()),
        Value::Object(o) => rows_of(o, name),
        other => Err(ParseError(format!(
            "expected an object holding TABLE_{name}, found {}",
            kind_of(other)
        ))),
    }
}

/// [`rows`] of a row.
pub fn rows_of<'a>(obj: &'a Row, name: &str) -> Result<Vec<&'a Row>, ParseError> {
    let table_key = format!("TABLE_{name}");
    let row_key = format!("ROW_{name}");
    let parts: Vec<&Value> = match obj.get(&table_key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(t @ Value::Object(_)) => vec![t],
        Some(Value::Array(a)) => a.iter().collect(),
        Some(other) => {
            return Err(ParseError(format!(
                "{table_key} is {}, expected an object holding {row_key}",
                kind_of(other)
            )))
        }
    };
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let Some(part) = part.as_object() else {
            return Err(ParseError(format!(
                "{table_key}[{i}] is {}, expected an object holding {row_key}",
                kind_of(part)
            )));
        };
        match part.get(&row_key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(r)) => out.push(r),
            Some(Value::Array(items)) => {
                for (j, item) in items.iter().enumerate() {
                    match item {
                        Value::Object(r) => out.push(r),
                        other => {
                            return Err(ParseError(format!(
                                "{row_key}[{j}] is {}, expected an object (one row)",
                                kind_of(other)
                            )))
                        }
                    }
                }
            }
            Some(other) => {
                return Err(ParseError(format!(
                    "{row_key} is {}, expected an object (one row) or a list of rows",
                    kind_of(other)
                )))
            }
        }
    }
    Ok(out)
}

/// [`rows`], with `tool` in front of an error.
pub(super) fn table<'a>(
    tool: &str,
    obj: &'a Value,
    name: &str,
) -> Result<Vec<&'a Row>, ParseError> {
    rows(obj, name).map_err(|e| ParseError(format!("{tool}: {}", e.0)))
}

pub(super) fn table_of<'a>(
    tool: &str,
    obj: &'a Row,
    name: &str,
) -> Result<Vec<&'a Row>, ParseError> {
    rows_of(obj, name).map_err(|e| ParseError(format!("{tool}: {}", e.0)))
}

/// A counter of a row as NX-OS writes it: a JSON number or a string of
/// digits, side by side in one row. `None` when the row lacks it, holds
/// null or an empty string, or writes not applicable (`n/a`, `--`); any
/// other value is an error naming `tool` and the field.
pub fn counter(tool: &str, row: &Row, field: &str) -> Result<Option<u64>, ParseError> {
    match row.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) => Ok(Some(v)),
            None => value(tool, field, &n.to_string()).map(Some),
        },
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => cell(tool, field, s),
        Some(other) => Err(ParseError(format!(
            "{tool}: {field}: expected a number or a numeric string, found {}",
            kind_of(other)
        ))),
    }
}

/// A text field: a string (trimmed, not empty) or a number.
pub(super) fn text_of(row: &Row, field: &str) -> Option<String> {
    match row.get(field)? {
        Value::String(s) => {
            let t = s.trim();
            (!t.is_empty()).then(|| t.to_string())
        }
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

pub(super) fn first_text(row: &Row, fields: &[&str]) -> Option<String> {
    fields.iter().find_map(|f| text_of(row, f))
}

pub(super) fn keys(row: &Row) -> String {
    let k: Vec<&str> = row.keys().take(6).map(String::as_str).collect();
    if k.is_empty() {
        return "no field".into();
    }
    format!(
        "`{}`{}",
        k.join("`, `"),
        if row.len() > 6 { ", …" } else { "" }
    )
}

/// The first of `fields` the row has as text, or an error naming the table.
pub(super) fn required(
    tool: &str,
    row: &Row,
    fields: &[&str],
    table: &str,
) -> Result<String, ParseError> {
    first_text(row, fields).ok_or_else(|| {
        ParseError(format!(
            "{tool}: a row of TABLE_{table} has no `{}` (it has {})",
            fields.join("` or `"),
            keys(row)
        ))
    })
}

/// Whether a value of a field this module has no name for reads as a
/// counter (other fields of a row are text: speeds, states, addresses).
pub(super) fn numeric(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::String(s) => crate::plausible::looks_numeric(s),
        _ => false,
    }
}

/// What `v` is, as an error message says it: `a list`, `null`.
pub(super) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::nxos::testutil::json;

    #[test]
    fn rows_take_every_shape() {
        // A single row is an object.
        let one = json("show-interface-single-row-object-string-numbers-ansible.json");
        assert_eq!(rows(&one, "interface").unwrap().len(), 1);
        // TABLE as a list of {ROW}, ROW an object in one and a list in the other.
        let v = serde_json::json!({"TABLE_intf": [
            {"ROW_intf": {"n": 1}},
            {"ROW_intf": [{"n": 2}, {"n": 3}]},
            {}
        ]});
        let got: Vec<_> = rows(&v, "intf")
            .unwrap()
            .iter()
            .map(|r| r["n"].clone())
            .collect();
        assert_eq!(got, [1, 2, 3]);
        // Left out, null, empty: no rows.
        for empty in [
            serde_json::json!({}),
            Value::Null,
            serde_json::json!({"TABLE_intf": null}),
            serde_json::json!({"TABLE_intf": {}}),
        ] {
            assert!(rows(&empty, "intf").unwrap().is_empty(), "{empty}");
        }
        for (bad, want) in [
            (
                serde_json::json!({"TABLE_intf": 3}),
                "TABLE_intf is a number",
            ),
            (
                serde_json::json!({"TABLE_intf": [4]}),
                "TABLE_intf[0] is a number",
            ),
            (
                serde_json::json!({"TABLE_intf": {"ROW_intf": "x"}}),
                "ROW_intf is a string",
            ),
            (
                serde_json::json!({"TABLE_intf": {"ROW_intf": [{}, true]}}),
                "ROW_intf[1] is a boolean",
            ),
            (
                serde_json::json!([1]),
                "expected an object holding TABLE_intf",
            ),
        ] {
            let e = rows(&bad, "intf").unwrap_err().0;
            assert!(e.contains(want), "{bad}: {e}");
        }
        // Nested: TABLE_vrf/ROW_vrf[]/TABLE_af/ROW_af[]/TABLE_saf/ROW_saf (object).
        let bgp = json("show-bgp-all-summary-vrf-all-row-saf-object-napalm.json");
        let vrfs = rows(&bgp, "vrf").unwrap();
        assert_eq!(vrfs.len(), 16);
        assert!(rows_of(vrfs[0], "af").unwrap().is_empty());
        let afs = rows_of(vrfs[1], "af").unwrap();
        assert_eq!(afs.len(), 2);
        assert_eq!(rows_of(afs[0], "saf").unwrap().len(), 1);
    }

    #[test]
    fn counters_are_numbers_or_strings_and_nothing_else() {
        let row = serde_json::json!({
            "n": 5, "s": "17", "na": "n/a", "dash": "--", "blank": "", "null": null,
            "neg": -1, "frac": 1.5, "t": true, "o": {}, "word": "lots", "big": 18446744073709551615u64
        });
        let row = row.as_object().unwrap();
        let c = |f: &str| counter("t", row, f);
        assert_eq!(c("n").unwrap(), Some(5));
        assert_eq!(c("s").unwrap(), Some(17));
        assert_eq!(c("big").unwrap(), Some(u64::MAX));
        for f in ["na", "dash", "blank", "null", "missing"] {
            assert_eq!(c(f).unwrap(), None, "{f}");
        }
        for (f, want) in [
            ("neg", "negative"),
            ("frac", "fractional"),
            ("t", "found a boolean"),
            ("o", "found an object"),
            ("word", "`lots`"),
        ] {
            let e = c(f).unwrap_err().0;
            assert!(
                e.starts_with(&format!("t: {f}: ")) && e.contains(want),
                "{f}: {e}"
            );
        }
    }
}
