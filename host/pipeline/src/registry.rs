//! The plugins the host knows, by name and version. Read on every connector start, written
//! rarely: the map is swapped atomically, never locked across an await.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use turnpike_config::{PluginName, PluginRef};
use turnpike_runtime::Plugin;

/// A registered plugin version.
#[derive(Debug, Clone)]
pub struct PluginInfo {
    /// Its name.
    pub name: PluginName,
    /// Its version.
    pub version: String,
    /// The compiled plugin.
    pub plugin: Plugin,
}

impl PluginInfo {
    /// `name@version`.
    pub fn label(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// A plugin reference that cannot be resolved.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RegistryError {
    /// No plugin has this name.
    #[error("no plugin named {name:?} is registered (known: {known})")]
    UnknownPlugin {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: String,
    },
    /// The plugin exists but not in this version.
    #[error("plugin {name:?} has no version {version:?} (known: {known})")]
    UnknownVersion {
        /// The plugin.
        name: String,
        /// The version asked for.
        version: String,
        /// The versions that exist.
        known: String,
    },
}

type Versions = BTreeMap<PluginName, Vec<PluginInfo>>;

/// Registered plugins. Versions of a name are kept in registration order; `@latest` is the
/// most recently registered.
#[derive(Default)]
pub struct PluginRegistry {
    plugins: ArcSwap<Versions>,
}

impl PluginRegistry {
    /// Registers a version, replacing an existing one with the same name and version.
    pub fn register(&self, info: PluginInfo) {
        self.plugins.rcu(|current| {
            let mut next = Versions::clone(current);
            let versions = next.entry(info.name.clone()).or_default();
            versions.retain(|v| v.version != info.version);
            versions.push(info.clone());
            Arc::new(next)
        });
    }

    /// Finds the version a reference names.
    pub fn resolve(&self, r: &PluginRef) -> Result<PluginInfo, RegistryError> {
        let plugins = self.plugins.load();
        let Some(versions) = plugins.get(&r.name) else {
            let known = plugins.keys().map(PluginName::as_str).collect::<Vec<_>>().join(", ");
            return Err(RegistryError::UnknownPlugin { name: r.name.to_string(), known });
        };
        let found = match &r.version {
            None => versions.last(),
            Some(v) => versions.iter().find(|p| &p.version == v),
        };
        found.cloned().ok_or_else(|| RegistryError::UnknownVersion {
            name: r.name.to_string(),
            version: r.version.clone().unwrap_or_default(),
            known: versions.iter().map(|p| p.version.as_str()).collect::<Vec<_>>().join(", "),
        })
    }

    /// Every registered version.
    pub fn list(&self) -> Vec<PluginInfo> {
        self.plugins.load().values().flatten().cloned().collect()
    }
}
