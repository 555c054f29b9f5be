//! Plugin configuration: the host passes it as JSON text; plugins receive their own type.

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::ConfigError;

/// Config type for plugins that take no configuration: accepts only `{}` (or nothing), and
/// names any key given by mistake.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoConfig {}

/// Parses the JSON configuration into `C`. An error names the exact key that is wrong
/// (`fields[1].mode`), which the host shows to the user.
pub fn parse_config<C: DeserializeOwned>(json: &str) -> Result<C, ConfigError> {
    let json = if json.trim().is_empty() { "{}" } else { json };
    let mut de = serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let key = (path != ".").then_some(path);
        let message = strip_position(&e.into_inner().to_string());
        ConfigError { key, message }
    })
}

/// serde_json appends " at line L column C" of the host-generated JSON, which means nothing
/// to the user; the key path says where the problem is.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "fields exist to be parsed")]
    struct Cfg {
        fields: Vec<Field>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "fields exist to be parsed")]
    struct Field {
        path: String,
        mode: Option<String>,
    }

    #[test]
    fn errors_name_the_key() {
        let err = parse_config::<Cfg>(r#"{"fields":[{"path":"a"},{"path":"b","mdoe":"x"}]}"#).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("fields[1].mdoe"));
        assert!(err.message.contains("unknown field `mdoe`"), "{}", err.message);
        assert!(!err.message.contains("line"), "{}", err.message);
    }

    #[test]
    fn empty_config_is_an_empty_object() {
        assert!(parse_config::<NoConfig>("").is_ok());
        assert!(parse_config::<NoConfig>(r#"{"x":1}"#).is_err());
    }
}
