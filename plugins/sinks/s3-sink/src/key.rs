//! Object keys, as Confluent's S3 sink names them:
//! `<prefix><topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start offset>.<ext>`.
//!
//! A key depends only on where its first record came from, so a range read again from the
//! same start offset writes the same key (and replaces the object with the same records).

/// Builds keys under the granted prefix.
#[derive(Debug, Clone)]
pub struct Keys {
    /// `<prefix><topics.dir>/`.
    base: String,
    pad_width: usize,
    extension: &'static str,
}

impl Keys {
    /// `prefix` is the grant's (empty, or ending with `/`; a `/` is added if it is missing).
    pub fn new(prefix: &str, topics_dir: &str, pad_width: usize, extension: &'static str) -> Keys {
        let slash = if prefix.is_empty() || prefix.ends_with('/') { "" } else { "/" };
        Keys { base: format!("{prefix}{slash}{topics_dir}/"), pad_width, extension }
    }

    /// The key of the object whose first record is `start_offset` of `topic`/`partition`.
    pub fn key(&self, topic: &str, partition: i32, encoded: &str, start_offset: i64) -> String {
        let (base, width, ext) = (&self.base, self.pad_width, self.extension);
        format!("{base}{topic}/{encoded}/{topic}+{partition}+{start_offset:0width$}.{ext}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_confluent_naming() {
        let keys = Keys::new("team/", "topics", 10, "json");
        assert_eq!(keys.key("orders", 3, "partition=3", 42), "team/topics/orders/partition=3/orders+3+0000000042.json");
        let keys = Keys::new("", "raw/kafka", 3, "snappy.parquet");
        assert_eq!(keys.key("o", 0, "year=2024", 12345), "raw/kafka/o/year=2024/o+0+12345.snappy.parquet");
        assert_eq!(Keys::new("p", "t", 1, "bin").key("o", 1, "partition=1", 7), "p/t/o/partition=1/o+1+7.bin");
    }
}
