//! The one list of failure classes: the stable names that a connector's status, its metrics,
//! its events and its dead letters use to say what went wrong. README.md ("Fault classes")
//! explains each; a test below keeps that list and this one equal.
//!
//! The runtime's errors give most of them (`LoadError::class`, `CreateError::class`,
//! `Fault::class`); the pipeline adds its own (records, Kafka, configuration, panics). The
//! enum lives here, in the lowest crate that gives a class, so that both name classes the
//! same way and neither spells one as a string literal.

use std::fmt;

/// Declares [`FaultClass`], its [`FaultClass::ALL`] and its [`FaultClass::as_str`] from one
/// list, so that no class can be added without being listed.
macro_rules! fault_classes {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)+) => {
        /// What kind of failure a plugin fault, a connector failure or a failed record was.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum FaultClass {
            $($(#[$doc])* $variant,)+
        }

        impl FaultClass {
            /// Every class, in the order README.md lists them.
            pub const ALL: &'static [FaultClass] = &[$(FaultClass::$variant,)+];

            /// The stable name, as status pages, metrics labels, events and dead-letter
            /// headers show it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(FaultClass::$variant => $name,)+
                }
            }
        }
    };
}

fault_classes! {
    /// The plugin trapped (a panic, an invalid operation).
    Trap => "trap",
    /// A call ran past its CPU deadline and was interrupted.
    Timeout => "timeout",
    /// The plugin tried to grow its memory past the cap.
    MemoryLimit => "memory_limit",
    /// The plugin tried to return more output than one batch may carry.
    OutputLimit => "output_limit",
    /// The host had no room for another instance.
    HostCapacity => "host_capacity",
    /// The plugin returned data that breaks the contract.
    InvalidOutput => "invalid_output",
    /// The plugin's `create` refused its configuration.
    PluginConfig => "plugin_config",
    /// The plugin is of another kind than its stage needs.
    WrongKind => "wrong_kind",
    /// The component implements none of the Turnpike worlds.
    WrongWorld => "wrong_world",
    /// The file is a core WebAssembly module, not a component.
    CoreModule => "core_module",
    /// The file is not valid WebAssembly.
    InvalidComponent => "invalid_component",
    /// The file is precompiled machine code, which is never loaded.
    Precompiled => "precompiled",
    /// The WebAssembly engine could not be set up, or could not compile.
    Engine => "engine",
    /// No plugin, or no such version of it, is registered.
    PluginUnavailable => "plugin_unavailable",
    /// The plugin rejected a record, or failed a poll or a whole batch.
    RecordError => "record_error",
    /// A record read from Kafka could not be handed to a plugin as it is.
    UnreadableRecord => "unreadable_record",
    /// A plugin routed a record to a topic its connector may not write.
    RouteRefused => "route_refused",
    /// The sink could not flush what it was given, so offsets were not committed.
    SinkFlush => "sink_flush",
    /// An object the sink handed to the host could not be written to the store (after the
    /// host's retries), or the store refused the connector's bucket or credentials; offsets
    /// were not committed.
    ObjectStore => "object_store",
    /// The source's granted database refused the sign-in or could not be reached when the
    /// connector started (a wrong password, an unknown database, no route).
    Database => "database",
    /// The connector's configuration breaks a host rule or cannot be applied.
    Config => "config",
    /// A Kafka client failed.
    Kafka => "kafka",
    /// In a cluster, another host took the source over: its position writer was fenced.
    Fenced => "fenced",
    /// A bug in the host ended the connector's task.
    Panic => "panic",
    /// The connector was stopped while a batch waited to be retried, or past the stop's grace
    /// period while a plugin call ran (the host ended the call); a shutdown, not a failure.
    Stopping => "stopping",
}

impl fmt::Display for FaultClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// For the places that keep a class as text (status JSON, counters by class).
impl From<FaultClass> for String {
    fn from(class: FaultClass) -> Self {
        class.as_str().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::FaultClass;

    /// The README heading whose table lists every class, one row each.
    const SECTION: &str = "### Fault classes";

    /// The classes README.md lists: the first code span of each table row in [`SECTION`].
    fn documented() -> Vec<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
        let readme = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Some((_, section)) = readme.split_once(SECTION) else { panic!("README.md has no {SECTION:?} section") };
        section
            .lines()
            .skip(1)
            .take_while(|line| !line.starts_with('#'))
            .filter_map(|line| line.strip_prefix("| `"))
            .filter_map(|row| row.split_once('`').map(|(class, _)| class.to_owned()))
            .collect()
    }

    #[test]
    fn the_readme_lists_every_class_and_no_other() {
        let documented = documented();
        let known: Vec<&str> = FaultClass::ALL.iter().map(|c| c.as_str()).collect();
        let missing: Vec<&str> = known.iter().copied().filter(|&c| !documented.iter().any(|d| d.as_str() == c)).collect();
        let unknown: Vec<&str> = documented.iter().map(String::as_str).filter(|&d| !known.contains(&d)).collect();
        assert!(missing.is_empty(), "classes README.md does not list: {missing:?}");
        assert!(unknown.is_empty(), "README.md lists classes that do not exist: {unknown:?}");
        assert_eq!(documented.len(), known.len(), "README.md lists a class twice: {documented:?}");
    }

    #[test]
    fn class_names_are_distinct_snake_case_words() {
        let names: BTreeSet<&str> = FaultClass::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), FaultClass::ALL.len(), "two classes share a name");
        for name in names {
            assert!(!name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{name:?}");
        }
        assert_eq!(FaultClass::SinkFlush.to_string(), "sink_flush");
        assert_eq!(String::from(FaultClass::Kafka), "kafka");
    }
}
