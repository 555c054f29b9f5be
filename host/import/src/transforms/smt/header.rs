//! SMTs whose Turnpike step reads or writes headers: DropHeaders, HeaderFrom and InsertHeader,
//! and SetSchemaMetadata, since Turnpike records carry no Connect schema to set it on.

use serde_json::json;

use super::builder::Builder;
use super::syntax::{path, Syntax};
use super::NO_SCHEMAS;
use crate::ctx::{int, list, literal};

pub(super) fn drop_headers(b: &mut Builder<'_>) -> Result<(), String> {
    let headers = b.need("headers")?;
    b.set("headers", "headers", json!(list(&headers)));
    Ok(())
}

pub(super) fn header_from(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let fields = list(&b.need("fields")?);
    let headers = list(&b.need("headers")?);
    if fields.len() != headers.len() {
        return Err(format!("fields names {} fields but headers {} headers; Kafka Connect refuses that too", fields.len(), headers.len()));
    }
    let operation = b.need("operation")?.to_ascii_lowercase();
    if operation != "copy" && operation != "move" {
        return Err(format!("operation {operation:?} is not copy or move"));
    }
    b.set("fields", "fields", json!(fields.iter().map(|f| path(f, syntax)).collect::<Vec<_>>()));
    b.set("headers", "headers", json!(headers));
    b.set("operation", "operation", json!(operation));
    b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
    Ok(())
}

pub(super) fn insert_header(b: &mut Builder<'_>) -> Result<(), String> {
    let header = b.need("header")?;
    let value = b.need_raw("value.literal")?;
    b.set("header", "header", json!(header));
    b.set("value.literal", "value", json!(literal(&value)));
    Ok(())
}

pub(super) fn set_schema_metadata(b: &mut Builder<'_>) -> Result<(), String> {
    let name = b.take("schema.name");
    let version = b.take("schema.version");
    if name.is_none() && version.is_none() {
        return Err(format!("{} needs schema.name or schema.version", b.class()));
    }
    if let Some(n) = name {
        b.set("schema.name", "schema_name", json!(literal(&n)));
    }
    if let Some(v) = version {
        let v = int(&v).filter(|v| (0..=i64::from(i32::MAX)).contains(v)).ok_or_else(|| format!("schema.version {v:?} is not a whole number"))?;
        b.set("schema.version", "schema_version", json!(v));
    }
    b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
    b.step.notes.push("Turnpike records carry no Connect schemas: set-schema-metadata writes the headers schema.name / schema.version instead".into());
    Ok(())
}
