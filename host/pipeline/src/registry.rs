//! The plugins the host knows, by name and version. Read on every connector start, written
//! rarely: the map is swapped atomically, never locked across an await.
//!
//! On a shared host a plugin name belongs to the team that uploaded it, or to no team (a
//! plugin every team may use). A team's connector finds its team's plugins and the shared
//! ones only ([`PluginRegistry::resolve_for`]); another team's is not there for it.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use turnpike_config::{PluginName, PluginRef, TeamName};
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
    /// The team that uploaded it. `None`: built in, loaded from the host's config file or
    /// uploaded without auth: shared with every team, changed by admins only.
    pub team: Option<TeamName>,
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
    /// The team whose version it is, as [`PluginInfo::team`].
    pub team: Option<TeamName>,
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

fn entry_team(e: &Entry) -> Option<&TeamName> {
    match e {
        Ok(p) => p.team.as_ref(),
        Err(b) => b.team.as_ref(),
    }
}

/// The team a plugin name belongs to: that of its versions. Uploads keep them one team's
/// ([`PluginRegistry::name_taken`]); should they disagree (a plugin of the host's config file
/// loaded under a name a team uploaded), the name is the team's, so it stays hidden from the
/// other teams.
fn owner(versions: &[Entry]) -> Option<&TeamName> {
    versions.iter().find_map(entry_team)
}

/// Whether a connector of team `user` may use a plugin of team `owner`: a shared plugin
/// (`None`) every connector may, a team's plugin only its team's connectors. Not the
/// operator's either: a team editor's next upload would run there, with the operator's
/// secrets and topics, as soon as it became `@latest` (found by review).
pub fn usable_by(owner: Option<&TeamName>, user: Option<&TeamName>) -> bool {
    owner.is_none() || owner == user
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

    /// Finds the version a reference names, among every plugin (for the operator).
    pub fn resolve(&self, r: &PluginRef) -> Result<PluginInfo, RegistryError> {
        self.resolve_for(r, None)
    }

    /// Finds the version a reference names for a connector of `team`: another team's plugin
    /// is unknown to it, in the same words as a name no one uploaded, and the names it is
    /// told of are those it may use.
    pub fn resolve_for(&self, r: &PluginRef, team: Option<&TeamName>) -> Result<PluginInfo, RegistryError> {
        let plugins = self.plugins.load();
        let Some(versions) = plugins.get(&r.name).filter(|versions| usable_by(owner(versions), team)) else {
            let known = plugins.iter().filter(|(_, versions)| usable_by(owner(versions), team)).map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(", ");
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

    /// The team plugin `name` belongs to: `None` if there is no such plugin, `Some(None)` if
    /// it is shared.
    pub fn team(&self, name: &PluginName) -> Option<Option<TeamName>> {
        self.plugins.load().get(name).map(|versions| owner(versions).cloned())
    }

    /// Whether `name` has a version (loaded or broken) of another team than `team`: then an
    /// upload by `team` under it is refused, so that one team's version never becomes
    /// another's `@latest`.
    pub fn name_taken(&self, name: &PluginName, team: Option<&TeamName>) -> bool {
        self.plugins.load().get(name).is_some_and(|versions| versions.iter().any(|e| entry_team(e) != team))
    }

    /// Every version that loaded.
    pub fn list(&self) -> Vec<PluginInfo> {
        self.plugins.load().values().flatten().filter_map(|e| e.as_ref().ok()).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broken(version: &str, team: Option<&str>) -> BrokenPlugin {
        BrokenPlugin { version: version.into(), class: FaultClass::WrongWorld, reason: "test".into(), team: team.map(|t| TeamName::parse(t).unwrap()) }
    }

    fn reference(name: &str) -> PluginRef {
        PluginRef::try_from(name.to_owned()).unwrap()
    }

    #[test]
    fn a_teams_plugin_is_unknown_to_other_teams_and_the_names_they_are_told_are_theirs() {
        let registry = PluginRegistry::default();
        registry.register_broken(PluginName::parse("mask").unwrap(), broken("1", Some("analytics")));
        registry.register_broken(PluginName::parse("payroll").unwrap(), broken("1", Some("hr")));
        registry.register_broken(PluginName::parse("shared").unwrap(), broken("1", None));
        let (analytics, hr) = (TeamName::parse("analytics").unwrap(), TeamName::parse("hr").unwrap());

        // Found (broken, here) where it may be used; unknown elsewhere.
        assert!(matches!(registry.resolve_for(&reference("mask"), Some(&analytics)), Err(RegistryError::Broken { .. })));
        assert!(matches!(registry.resolve_for(&reference("mask"), None), Err(RegistryError::UnknownPlugin { .. })), "the operator's connectors use shared plugins only");
        assert!(matches!(registry.resolve_for(&reference("shared"), Some(&hr)), Err(RegistryError::Broken { .. })));
        let Err(RegistryError::UnknownPlugin { known, .. }) = registry.resolve_for(&reference("mask"), Some(&hr)) else { panic!("another team's plugin is unknown") };
        assert_eq!(known, "payroll, shared");
        let Err(RegistryError::UnknownPlugin { known, .. }) = registry.resolve_for(&reference("nothing"), None) else { panic!("unknown") };
        assert_eq!(known, "shared");

        assert_eq!(registry.team(&PluginName::parse("mask").unwrap()), Some(Some(analytics.clone())));
        assert_eq!(registry.team(&PluginName::parse("shared").unwrap()), Some(None));
        assert_eq!(registry.team(&PluginName::parse("nothing").unwrap()), None);
    }

    #[test]
    fn a_name_is_taken_by_a_version_of_any_other_team() {
        let registry = PluginRegistry::default();
        let (mask, shared) = (PluginName::parse("mask").unwrap(), PluginName::parse("shared").unwrap());
        registry.register_broken(mask.clone(), broken("1", Some("analytics")));
        registry.register_broken(shared.clone(), broken("1", None));
        let (analytics, hr) = (TeamName::parse("analytics").unwrap(), TeamName::parse("hr").unwrap());
        assert!(!registry.name_taken(&mask, Some(&analytics)));
        assert!(registry.name_taken(&mask, Some(&hr)));
        assert!(registry.name_taken(&mask, None), "an admin's shared upload may not join a team's name either");
        assert!(registry.name_taken(&shared, Some(&analytics)), "nor a team's upload a shared name");
        assert!(!registry.name_taken(&shared, None));
        assert!(!registry.name_taken(&PluginName::parse("free").unwrap(), Some(&hr)));
        assert!(usable_by(None, Some(&hr)) && usable_by(None, None) && usable_by(Some(&hr), Some(&hr)));
        assert!(!usable_by(Some(&hr), Some(&analytics)) && !usable_by(Some(&hr), None), "nor by the operator's connectors");
    }
}
