use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    field: Option<String>,
}

fn redact(config: &Config, record: &Record) -> Result<Json, RecordError> {
    let mut data: Json = record.value_json()?;
    if let Some(v) = data.get_mut(config.field.as_deref().unwrap_or("email")) {
        *v = "***".into();
    }
    Ok(data)
}

transform_fn!(Redact = redact(Config));
