use serde_json::Value;
use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    field: Option<String>,
}

pub struct Redact {
    field: String,
}

impl Transform for Redact {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        Ok(Redact { field: config.field.unwrap_or_else(|| "email".into()) })
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let mut data: Value = record.value_json()?;
        if let Some(v) = data.get_mut(&self.field) {
            *v = "***".into();
        }
        out.forward_with_value(record, data.to_string());
        Ok(())
    }
}

export_transform!(Redact);

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_sdk::testing;

    #[test]
    fn redacts_the_field_and_fails_what_is_not_json() {
        let mut t = testing::create::<Redact>(r#"{"field": "email"}"#).unwrap();
        let out = testing::run(&mut t, [TestRecord::value(r#"{"email":"a@b.c","n":1}"#), TestRecord::value("nope")]).unwrap();
        assert_eq!(out.values(), [r#"{"email":"***","n":1}"#]);
        assert_eq!(out.errors[0].0, 1);
    }
}
