//! The config log as read so far: each connector's current version and each plugin
//! version's current manifest, and the rule that decides, identically on every host, whether
//! a record is applied. Two hosts may write the same connector at once; the log orders them,
//! the first whose `prev` matches wins and the other is refused on every host alike.

use std::collections::HashMap;

use turnpike_config::ConnectorConfig;
use turnpike_state::Lifecycle;

use crate::records::{ConnectorRecord, PluginRecord};

/// What to do with a record read from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Apply it: it is the next version.
    Apply,
    /// The current record again (a repair after a refused write, or the same bytes uploaded
    /// again): nothing to do.
    Again,
    /// It lost a race with the write that made `current`: not applied.
    Refuse {
        /// The version that stands.
        current: u64,
    },
}

/// The current state of one connector in the log.
#[derive(Debug, Clone)]
pub struct CurrentConnector {
    /// The record that stands.
    pub record: ConnectorRecord,
    /// Its bytes as written, re-written after a refused write so compaction keeps it.
    pub raw: Vec<u8>,
}

impl CurrentConnector {
    /// Its config and lifecycle, unless deleted.
    pub fn live(&self) -> Option<(&ConnectorConfig, Lifecycle)> {
        match (&self.record.config, self.record.deleted) {
            (Some(config), false) => Some((config, self.record.lifecycle)),
            _ => None,
        }
    }
}

/// The log as read so far.
#[derive(Debug, Default)]
pub struct View {
    connectors: HashMap<String, CurrentConnector>,
    plugins: HashMap<(String, String), PluginRecord>,
    /// Each plugin manifest's bytes as written, for a repair after a refused upload.
    plugin_raw: HashMap<(String, String), Vec<u8>>,
}

impl View {
    /// The current state of connector `name`, deleted ones included.
    pub fn connector(&self, name: &str) -> Option<&CurrentConnector> {
        self.connectors.get(name)
    }

    /// The version a new write to `name` follows.
    pub fn version(&self, name: &str) -> u64 {
        self.connectors.get(name).map_or(0, |c| c.record.version)
    }

    /// Whether a connector record is applied. The first record read for a name is applied
    /// whatever it follows: compaction removed the records before it.
    pub fn judge_connector(&self, name: &str, record: &ConnectorRecord) -> Verdict {
        match self.connectors.get(name) {
            Some(current) if current.record.write == record.write => Verdict::Again,
            Some(current) if record.prev != current.record.version => Verdict::Refuse { current: current.record.version },
            _ => Verdict::Apply,
        }
    }

    /// Every connector name the log holds, deleted ones included.
    pub fn connector_names(&self) -> Vec<String> {
        self.connectors.keys().cloned().collect()
    }

    /// The current manifest of `name@version`, unless deleted.
    pub fn plugin(&self, name: &str, version: &str) -> Option<&PluginRecord> {
        self.plugins.get(&(name.to_owned(), version.to_owned())).filter(|p| !p.deleted)
    }

    /// Makes `record` the current one for `name`.
    pub fn set_connector(&mut self, name: &str, record: ConnectorRecord, raw: Vec<u8>) {
        self.connectors.insert(name.to_owned(), CurrentConnector { record, raw });
    }

    /// Whether a plugin manifest is applied: an upload of a version that exists is the same
    /// bytes again or refused; a deletion of a version that does not exist does nothing.
    pub fn judge_plugin(&self, name: &str, version: &str, record: &PluginRecord) -> Verdict {
        let current = self.plugins.get(&(name.to_owned(), version.to_owned())).filter(|p| !p.deleted);
        match (current, record.deleted) {
            (Some(current), _) if current.write == record.write => Verdict::Again,
            (Some(_), true) => Verdict::Apply,
            (None, true) => Verdict::Again,
            (Some(current), false) if current.digest == record.digest => Verdict::Again,
            (Some(_), false) => Verdict::Refuse { current: 0 },
            (None, false) => Verdict::Apply,
        }
    }

    /// Makes `record` (written as `raw`) the current manifest of `name@version`.
    pub fn set_plugin(&mut self, name: &str, version: &str, record: PluginRecord, raw: Vec<u8>) {
        let key = (name.to_owned(), version.to_owned());
        self.plugin_raw.insert(key.clone(), raw);
        self.plugins.insert(key, record);
    }

    /// The current manifest of `name@version` as written.
    pub fn plugin_raw(&self, name: &str, version: &str) -> Option<&[u8]> {
        self.plugin_raw.get(&(name.to_owned(), version.to_owned())).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(write: &str, prev: u64) -> ConnectorRecord {
        let config = turnpike_config::HostConfig::parse_connector_yaml("name: c\ntopics: [a]\noutput_topic: b\ntransforms: [{plugin: identity}]\n", "test").unwrap();
        ConnectorRecord { write: write.into(), host: "h".into(), version: prev + 1, prev, config: Some(config), lifecycle: Lifecycle::Running, deleted: false }
    }

    #[test]
    fn of_two_writes_from_the_same_version_the_first_in_the_log_wins() {
        let mut view = View::default();
        let first = put("w1", 0);
        assert_eq!(view.judge_connector("c", &first), Verdict::Apply);
        view.set_connector("c", first.clone(), Vec::new());
        // Both hosts saw version 1 and wrote version 2.
        let (a, b) = (put("a", 1), put("b", 1));
        assert_eq!(view.judge_connector("c", &a), Verdict::Apply);
        view.set_connector("c", a.clone(), Vec::new());
        assert_eq!(view.judge_connector("c", &b), Verdict::Refuse { current: 2 });
        // The repair (the winner written again, after the loser) changes nothing.
        assert_eq!(view.judge_connector("c", &a), Verdict::Again);
        // The first record of a compacted log follows versions removed by compaction.
        assert_eq!(View::default().judge_connector("c", &put("x", 3)), Verdict::Apply);
    }

    #[test]
    fn a_plugin_version_keeps_its_first_bytes_until_deleted() {
        let manifest = |write: &str, digest: &str, deleted: bool| PluginRecord {
            write: write.into(),
            host: "h".into(),
            digest: digest.into(),
            size: 1,
            chunks: 1,
            team: None,
            uploaded_at_ms: 0,
            deleted,
        };
        let mut view = View::default();
        assert_eq!(view.judge_plugin("p", "1", &manifest("d0", "", true)), Verdict::Again);
        assert_eq!(view.judge_plugin("p", "1", &manifest("u1", "aa", false)), Verdict::Apply);
        view.set_plugin("p", "1", manifest("u1", "aa", false), Vec::new());
        assert_eq!(view.judge_plugin("p", "1", &manifest("u2", "aa", false)), Verdict::Again);
        assert_eq!(view.judge_plugin("p", "1", &manifest("u3", "bb", false)), Verdict::Refuse { current: 0 });
        assert_eq!(view.judge_plugin("p", "1", &manifest("d1", "", true)), Verdict::Apply);
        view.set_plugin("p", "1", manifest("d1", "", true), Vec::new());
        assert_eq!(view.judge_plugin("p", "1", &manifest("u4", "bb", false)), Verdict::Apply);
    }
}
