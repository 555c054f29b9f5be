//! The plugins the host knows, by name and version. Read on every connector start, written
//! rarely: the map is swapped atomically, never locked across an await.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use turnpike_config::{PluginName, PluginRef};
use turnpike_runtime::{FaultClass, Plugin};

/// A registered plugin version.
#[derive(Debug, Clone)]
pub struct PluginInfo {
    /// Its name.
    pub name: PluginName,
    /// Its version.
    pub version: String,
    /// The compiled plugin.
    pub plugin: Plugin,
    /// When it was uploaded (for a restored upload, when it was first saved).
    pub uploaded_at: std::time::SystemTime,
}

impl PluginInfo {
    /// `name@version`.
    pub fn label(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// A plugin version that could not be loaded, kept so that connectors using it can say why.
#[derive(Debug, Clone)]
pub struct BrokenPlugin {
    /// Its version.
    pub version: String,
    /// The load error's class (`wrong_world`, `core_module`, `invalid_component`, …).
    pub class: FaultClass,
    /// The load error.
    pub reason: String,
}

/// A plugin reference that cannot be resolved.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RegistryError {
    /// The version exists but could not be loaded.
    #[error("plugin {plugin} could not be loaded: {reason}")]
    Broken {
        /// `name@version`.
        plugin: String,
        /// The load error's class.
        class: FaultClass,
        /// The load error.
        reason: String,
    },
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

impl RegistryError {
    /// The class status pages and metrics labels show.
    pub fn class(&self) -> FaultClass {
        match self {
            RegistryError::Broken { class, .. } => *class,
            RegistryError::UnknownPlugin { .. } | RegistryError::UnknownVersion { .. } => FaultClass::PluginUnavailable,
        }
    }
}

type Entry = Result<PluginInfo, BrokenPlugin>;
type Versions = BTreeMap<PluginName, Vec<Entry>>;

fn version(e: &Entry) -> &str {
    match e {
        Ok(p) => &p.version,
        Err(b) => &b.version,
    }
}

/// Registered plugins. Versions of a name are kept in registration order; `@latest` is the
/// most recently registered.
#[derive(Default)]
pub struct PluginRegistry {
    plugins: ArcSwap<Versions>,
}

impl PluginRegistry {
    /// Registers a version, replacing an existing one with the same name and version.
    pub fn register(&self, info: PluginInfo) {
        let name = info.name.clone();
        self.insert(name, Ok(info));
    }

    /// Records a version that failed to load, so connectors using it fail saying why.
    pub fn register_broken(&self, name: PluginName, broken: BrokenPlugin) {
        self.insert(name, Err(broken));
    }

    fn insert(&self, name: PluginName, entry: Entry) {
        self.plugins.rcu(|current| {
            let mut next = Versions::clone(current);
            let versions = next.entry(name.clone()).or_default();
            versions.retain(|v| version(v) != version(&entry));
            versions.push(entry.clone());
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
            Some(v) => versions.iter().find(|p| version(p) == v),
        };
        match found {
            Some(Ok(info)) => Ok(info.clone()),
            Some(Err(b)) => Err(RegistryError::Broken { plugin: format!("{}@{}", r.name, b.version), class: b.class, reason: b.reason.clone() }),
            None => Err(RegistryError::UnknownVersion {
                name: r.name.to_string(),
                version: r.version.clone().unwrap_or_default(),
                known: versions.iter().map(version).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// Removes a version; whether it existed.
    pub fn remove(&self, name: &PluginName, version: &str) -> bool {
        let mut removed = false;
        self.plugins.rcu(|current| {
            let mut next = Versions::clone(current);
            if let Some(versions) = next.get_mut(name) {
                let before = versions.len();
                versions.retain(|v| self::version(v) != version);
                removed = versions.len() < before;
                if versions.is_empty() {
                    next.remove(name);
                }
            }
            Arc::new(next)
        });
        removed
    }

    /// Every version that loaded.
    pub fn list(&self) -> Vec<PluginInfo> {
        self.plugins.load().values().flatten().filter_map(|e| e.as_ref().ok()).cloned().collect()
    }
}
