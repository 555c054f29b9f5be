//! `identity`: passes every record through unchanged. The baseline for tests and benchmarks.

use turnpike_sdk::prelude::*;

/// The identity transform.
pub struct Identity;

impl Transform for Identity {
    type Config = NoConfig;

    fn create(_: NoConfig) -> Result<Self, ConfigError> {
        Ok(Identity)
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        out.forward(record);
        Ok(())
    }
}

export_transform!(Identity);

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_sdk::testing;

    #[test]
    fn forwards_everything_unchanged() {
        let mut t = testing::create::<Identity>("{}").unwrap();
        let input = TestRecord::value("v").with_key("k").with_header("h", "x");
        let out = testing::run(&mut t, [input.clone(), TestRecord::value("w")]).unwrap();
        assert_eq!(out.values(), ["v", "w"]);
        assert_eq!(out.outputs[0].key.as_deref(), Some(&b"k"[..]));
        assert_eq!(out.outputs[0].headers, input.headers);
        assert_eq!(out.outputs[1].input, 1);
    }

    #[test]
    fn refuses_any_config_key() {
        let err = testing::create::<Identity>(r#"{"x": 1}"#).err().unwrap();
        assert!(err.message.contains("unknown field `x`"), "{err}");
    }
}
