//! The plugin catalogue: loading, uploading and deleting plugin versions, and the expensive
//! checks that run plugins without a connector (validation, dry runs), each bounded.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use turnpike_config::{ConnectorConfig, PluginName, PluginRef, Predicate, Problem, TeamName};
use turnpike_runtime::LoadError;

use super::{Host, HostError};
use crate::dry_run::{DryRunResult, SampleRecord};
use crate::registry::{BrokenPlugin, PluginInfo, RegistryError};
use crate::validation::{check_plugins, PluginChecks};

impl Host {
    /// Compiles a component (on a blocking thread) and registers it as `name@version`. A
    /// component that fails to load is registered as broken, so connectors using it fail
    /// with the reason, and the error is returned. For plugins the host is given (built-ins,
    /// files): shared with every team. Uploads go through [`Host::upload_plugin`].
    pub async fn load_plugin(&self, name: PluginName, version: String, bytes: Vec<u8>) -> Result<PluginInfo, HostError> {
        self.load_plugin_at(name, version, bytes, SystemTime::now(), None, true).await
    }

    /// [`Host::load_plugin`] of a saved upload, with its time and team.
    pub(super) async fn load_plugin_at(
        &self,
        name: PluginName,
        version: String,
        bytes: Vec<u8>,
        uploaded_at: SystemTime,
        team: Option<TeamName>,
        register_broken: bool,
    ) -> Result<PluginInfo, HostError> {
        let label = format!("{name}@{version}");
        match self.compile(bytes).await {
            Ok(plugin) => Ok(self.register(PluginInfo { name, version, plugin, uploaded_at, team })),
            Err(source) => {
                tracing::error!(plugin = %label, class = source.class().as_str(), error = %source, "plugin could not be loaded");
                if register_broken {
                    let broken = BrokenPlugin { version, class: source.class(), reason: source.to_string(), team };
                    self.registry().register_broken(name, broken);
                }
                Err(HostError::Load { name: label, source })
            }
        }
    }

    /// Compiles (or reads from the compiled cache) on a blocking thread.
    async fn compile(&self, bytes: Vec<u8>) -> Result<turnpike_runtime::Plugin, LoadError> {
        let runtime = self.runtime.clone();
        let cache = self.compiled_cache.clone();
        let started = Instant::now();
        let loaded = tokio::task::spawn_blocking(move || runtime.load_cached(&bytes, cache.as_deref()))
            .await
            .unwrap_or_else(|e| Err(LoadError::Engine(format!("compile task: {e}"))));
        tracing::debug!(load_ms = started.elapsed().as_millis() as u64, ok = loaded.is_ok(), "plugin compiled");
        loaded
    }

    /// Compiles one component once and registers it under several names, each running one
    /// of the transforms it holds (`(name, preset)`, see `turnpike_runtime::Plugin::preset`).
    /// For built-ins: shared with every team.
    pub async fn load_presets(&self, presets: Vec<(PluginName, String)>, version: String, bytes: Vec<u8>) -> Result<Vec<PluginInfo>, HostError> {
        let plugin = self.compile(bytes).await.map_err(|source| {
            let names: Vec<&str> = presets.iter().map(|(n, _)| n.as_str()).collect();
            HostError::Load { name: format!("{}@{version}", names.join(", ")), source }
        })?;
        let now = SystemTime::now();
        Ok(presets
            .into_iter()
            .map(|(name, preset)| self.register(PluginInfo { name, version: version.clone(), plugin: plugin.preset(&preset), uploaded_at: now, team: None }))
            .collect())
    }

    fn register(&self, info: PluginInfo) -> PluginInfo {
        tracing::info!(plugin = %info.label(), digest = info.plugin.digest(), size = info.plugin.size(), kind = info.plugin.kind().as_str(), "plugin registered");
        self.registry().register(info.clone());
        info
    }

    /// Uploads a component as `name@version` for `team` (`None`: shared with every team). The
    /// same bytes again are accepted without change (`Ok(false)`); other bytes under an
    /// existing version are refused. A name with versions of another team (or shared ones,
    /// for a team) is refused without saying whose: one team's upload must never become
    /// another's `@latest`. A component that does not load is refused and not registered, so
    /// it can never become `name@latest`. The version is reserved (one upload of a plugin at
    /// a time) from the check to the save, and saved before it is registered: a failed save
    /// changes nothing.
    pub(super) async fn upload_here(&self, name: PluginName, version: String, bytes: Vec<u8>, team: Option<TeamName>, uploaded_at: SystemTime) -> Result<(PluginInfo, bool), HostError> {
        let lock = self.plugin_locks.lock().unwrap_or_else(|p| p.into_inner()).entry(name.clone()).or_default().clone();
        let one_upload_per_plugin = lock.lock_owned().await;
        if self.registry().name_taken(&name, team.as_ref()) {
            tracing::warn!(plugin = %name, team = team.as_ref().map_or("", TeamName::as_str), "upload refused: the plugin name belongs to another team");
            return Err(HostError::NameTaken(name.to_string()));
        }
        let reference = PluginRef { name: name.clone(), version: Some(version.clone()) };
        let label = format!("{name}@{version}");
        if let Ok(existing) = self.registry().resolve(&reference) {
            if existing.plugin.digest() != turnpike_runtime::digest(&bytes) {
                return Err(HostError::VersionExists(existing.label()));
            }
            return Ok((existing, false));
        }
        let versions: Vec<String> = self.registry().list().iter().filter(|p| p.name == name).map(|p| p.version.clone()).collect();
        if let Some(other) = turnpike_state::case_collision(&version, versions.iter().map(String::as_str)) {
            return Err(HostError::Invalid(vec![Problem::new("version", format!("{version:?} differs from the existing version {other:?} only in case; choose another version"))]));
        }
        let max = self.sandbox.max_plugin_versions.get();
        if self.registry().list().len() as u64 >= max {
            return Err(HostError::Full(format!("the host already has {max} plugin versions, its maximum (sandbox.max_plugin_versions); delete unused ones first")));
        }
        let compiling = permit(&self.compiles, "uploads are being compiled", "sandbox.max_concurrent_compiles")?;
        let plugin = match self.compile(bytes.clone()).await {
            Ok(plugin) => plugin,
            Err(source) => {
                tracing::warn!(plugin = %label, class = source.class().as_str(), error = %source, "upload refused: the component does not load");
                return Err(HostError::Load { name: label, source });
            }
        };
        drop(compiling);
        if let Some(store) = self.store.as_ref().filter(|_| self.cluster.get().is_none()) {
            store.save_plugin(&name, &version, &bytes, team.as_ref()).map_err(HostError::NotSaved)?;
        }
        let info = self.register(PluginInfo { name: name.clone(), version, plugin, uploaded_at, team });
        // Registered and saved: the next upload of this plugin need not wait for connectors
        // to switch.
        drop(one_upload_per_plugin);
        self.follow_latest(&name).await;
        Ok((info, true))
    }

    /// The team plugin `name` belongs to: `None` if there is no such plugin, `Some(None)` if
    /// every team may use it. For the API, which answers another team's plugin as unknown.
    pub fn plugin_team(&self, name: &PluginName) -> Option<Option<TeamName>> {
        self.registry().team(name)
    }

    /// Connectors whose current run uses `name@version`, whose config names that version, or
    /// whose config follows `name@latest` while that version is the latest (between two
    /// runs it is what they would start).
    pub fn plugin_users(&self, name: &PluginName, version: &str) -> Vec<String> {
        let label = format!("{name}@{version}");
        let latest = self.registry().resolve(&PluginRef { name: name.clone(), version: None }).ok().is_some_and(|p| p.version == version);
        let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors
            .values()
            .filter(|r| {
                r.status.plugins().contains(&label)
                    || r.definition.config().plugin_refs().iter().any(|(_, p)| p.name == *name && (p.version.as_deref() == Some(version) || (latest && p.version.is_none())))
            })
            .map(|r| r.definition.config().name.to_string())
            .collect()
    }

    /// Deletes a plugin version that no connector uses: its saved file first (if that fails,
    /// nothing changed), then the registry entry, then its compiled code once no other
    /// version has the same bytes.
    pub(super) fn delete_plugin_here(&self, name: &PluginName, version: &str) -> Result<(), HostError> {
        let users = self.plugin_users(name, version);
        if !users.is_empty() {
            return Err(HostError::InUse { plugin: format!("{name}@{version}"), connectors: users });
        }
        let reference = PluginRef { name: name.clone(), version: Some(version.to_owned()) };
        let digest = match self.registry().resolve(&reference) {
            Ok(info) => Some(info.plugin.digest().to_owned()),
            Err(RegistryError::Broken { .. }) => None,
            Err(_) => return Err(HostError::Plugin(RegistryError::UnknownVersion { name: name.to_string(), version: version.to_owned(), known: String::new() })),
        };
        if let Some(store) = self.store.as_ref().filter(|_| self.cluster.get().is_none()) {
            store.remove_plugin(name, version).map_err(HostError::NotSaved)?;
        }
        self.registry().remove(name, version);
        let still_used = |d: &str| self.registry().list().iter().any(|p| p.plugin.digest() == d);
        if let (Some(digest), Some(cache)) = (digest, &self.compiled_cache) {
            if !still_used(&digest) {
                prune_compiled(cache, &digest);
            }
        }
        Ok(())
    }

    /// Checks a connector without creating or changing anything: its rules, the operator's
    /// maxima, that every plugin resolves, and that every plugin accepts its configuration
    /// (each plugin's `create` runs in a fresh instance). Every problem is returned at once;
    /// on success, the plugin versions it would run.
    pub async fn validate_connector(&self, config: &ConnectorConfig) -> Result<Vec<String>, HostError> {
        let checked = self.checked(config);
        let _checking = permit(&self.checks, "dry runs and validations are running", "sandbox.max_concurrent_checks")?;
        let checks = match &checked {
            Ok(connector) => PluginChecks::of(connector),
            // Its plugins are checked as written, so their problems come with the others.
            Err(_) => PluginChecks::as_written(config),
        };
        let (labels, plugin_problems) = check_plugins(self.registry(), checks, &self.shared.secrets).await;
        // Its team's secrets only, as at its start.
        let secrets = self.shared.secrets.for_team(config.team.clone());
        let mut problems = checked.err().unwrap_or_default();
        let rules = problems.clone();
        // A malformed reference is a rule's problem already; the plugin check finds it again.
        problems.extend(plugin_problems.into_iter().filter(|p| !rules.contains(p)));
        // A storage grant that is well formed is tried: the bucket exists and the keys work.
        if let (Some(access), true) = (&config.storage, problems.is_empty()) {
            let checked = match crate::storage::credentials(access, &secrets) {
                Ok((credentials, _)) => crate::storage::check(access, credentials).await,
                Err(e) => Err(e),
            };
            if let Err(e) = checked {
                problems.extend(e.problems(&access.bucket));
            }
        }
        // So is a database grant: the database answers and the password works.
        if let (Some(access), true) = (&config.database, problems.is_empty()) {
            let checked = match crate::database::check(access, &secrets) {
                Ok(check) => check.await,
                Err(e) => Err(e),
            };
            if let Err(e) = checked {
                problems.extend(e.problems(access));
            }
        }
        if problems.is_empty() {
            Ok(labels)
        } else {
            Err(HostError::Invalid(problems))
        }
    }

    /// Runs a transform plugin on sample records, in a fresh instance, with no broker, for
    /// `team` (`None`: the operator). The plugin and the config's references are resolved as
    /// at the start of a connector of that team (another team's plugin and secrets are not
    /// there), and what the references resolved to is hidden in everything the answer holds.
    pub async fn dry_run(
        &self,
        plugin: &PluginRef,
        config: &serde_json::Value,
        predicate: Option<&Predicate>,
        samples: &[SampleRecord],
        team: Option<&TeamName>,
        http: turnpike_runtime::HttpGrant,
    ) -> Result<DryRunResult, HostError> {
        let selector = predicate.map(|p| p.compile("predicate")).transpose().map_err(HostError::Invalid)?;
        let info = self.registry().resolve_for(plugin, team)?;
        let secrets = self.shared.secrets.for_team(team.cloned());
        let resolved = turnpike_config::resolve_at(config, "config", &secrets).map_err(HostError::Invalid)?;
        let _checking = permit(&self.checks, "dry runs and validations are running", "sandbox.max_concurrent_checks")?;
        let scrub = turnpike_runtime::Scrub::new(resolved.secret_values);
        Ok(crate::dry_run::dry_run(&info, &resolved.value, selector.as_ref(), &scrub, samples, http).await?)
    }
}

/// A slot for an expensive operation, or `Busy` at once (never a queue that starves the
/// running connectors).
pub(super) fn permit(slots: &Arc<Semaphore>, what: &str, setting: &str) -> Result<OwnedSemaphorePermit, HostError> {
    slots.clone().try_acquire_owned().map_err(|_| HostError::Busy(format!("too many {what} at once (the limit is {setting}); try again shortly")))
}

/// Removes the compiled artefacts of `digest` (one per engine configuration).
fn prune_compiled(dir: &std::path::Path, digest: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let file = entry.file_name();
        if file.to_str().is_some_and(|f| f.starts_with(&format!("{digest}-")) && f.ends_with(".cwasm")) {
            if let Err(e) = std::fs::remove_file(entry.path()) {
                tracing::warn!(file = %entry.path().display(), error = %e, "could not remove compiled plugin code");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expensive_operation_past_its_slots_is_busy_at_once() {
        let slots = Arc::new(Semaphore::new(1));
        let held = permit(&slots, "checks", "sandbox.max_concurrent_checks").expect("the first gets its slot");
        let refused = permit(&slots, "checks", "sandbox.max_concurrent_checks").unwrap_err();
        assert!(matches!(&refused, HostError::Busy(m) if m.contains("sandbox.max_concurrent_checks")), "{refused}");
        drop(held);
        assert!(permit(&slots, "checks", "sandbox.max_concurrent_checks").is_ok());
    }

    #[tokio::test]
    async fn a_plugin_name_with_another_teams_versions_is_taken_without_naming_the_team() {
        let host = Host::new(crate::Runtime::new().expect("engine"), Vec::new(), crate::SandboxConfig::default());
        let (mask, analytics, hr) = (PluginName::parse("mask").unwrap(), TeamName::parse("analytics").unwrap(), TeamName::parse("hr").unwrap());
        // A version that did not load still holds the name for its team.
        host.registry().register_broken(mask.clone(), BrokenPlugin { version: "1".into(), class: turnpike_runtime::FaultClass::WrongWorld, reason: "test".into(), team: Some(analytics.clone()) });
        for other in [Some(hr), None] {
            let refused = host.upload_plugin(mask.clone(), "2".into(), b"not wasm".to_vec(), other).await.unwrap_err();
            assert!(matches!(&refused, HostError::NameTaken(_)), "{refused}");
            assert_eq!(refused.to_string(), r#"plugin name "mask" is taken; choose another name"#);
        }
        // Its own team gets past the name to the component, which here does not load.
        let own = host.upload_plugin(mask.clone(), "2".into(), b"not wasm".to_vec(), Some(analytics.clone())).await.unwrap_err();
        assert!(matches!(own, HostError::Load { .. }), "{own}");
        assert_eq!(host.plugin_team(&mask), Some(Some(analytics)));
        assert_eq!(host.plugin_team(&PluginName::parse("free").unwrap()), None);
    }
}
