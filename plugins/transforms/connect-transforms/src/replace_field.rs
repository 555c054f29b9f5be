//! `replace-field` (Kafka Connect's `ReplaceField`): keeps only some fields (`include`),
//! removes some (`exclude`), renames some (`renames`), in that order, as Kafka Connect does.
//! Paths may be nested; key order is kept throughout.

use serde::Deserialize;
use serde_json::{Map, Value};
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, NonJson, On};
use crate::path::{self, Path, Step as PathStep};
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    /// Path to new name, in the order written.
    #[serde(default)]
    renames: Map<String, Value>,
    #[serde(default)]
    on: On,
    #[serde(default)]
    on_non_json: NonJson,
}

/// What `include` keeps: whole values, or some members or elements of them.
#[derive(Debug, Default)]
struct Keep {
    whole: bool,
    names: Vec<(String, Keep)>,
    elements: Vec<(usize, Keep)>,
}

/// Renames inside one object (the parent of the renamed paths), applied together so that
/// `a: b, b: a` swaps rather than overwrites.
struct Renames {
    parent: Vec<PathStep>,
    names: Vec<(String, String)>,
}

pub struct ReplaceField {
    include: Option<Keep>,
    exclude: Vec<Path>,
    renames: Vec<Renames>,
    on: On,
    on_non_json: NonJson,
}

impl Smt for ReplaceField {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        if config.include.is_empty() && config.exclude.is_empty() && config.renames.is_empty() {
            return Err(ConfigError::new("name fields to include, exclude or rename"));
        }
        let include = if config.include.is_empty() {
            None
        } else {
            let mut keep = Keep::default();
            for (i, text) in config.include.iter().enumerate() {
                keep.add(Path::single(text, &format!("include[{i}]"), "include keeps")?.steps());
            }
            Some(keep)
        };
        let exclude = config.exclude.iter().enumerate().map(|(i, text)| Path::any(text, &format!("exclude[{i}]"))).collect::<Result<_, _>>()?;
        let mut renames: Vec<Renames> = Vec::new();
        for (text, new_name) in config.renames {
            let key = format!("renames.{text}");
            let path = Path::single(&text, &key, "a rename changes the name at")?;
            let Some((PathStep::Name(old), parent)) = path.steps().split_last() else {
                return Err(ConfigError::at(key, format!("{path} ends with an array element, which has no name to change")));
            };
            let new_name = match new_name {
                Value::String(n) if !n.is_empty() => n,
                _ => return Err(ConfigError::at(key, "the new name must be a non-empty text")),
            };
            match renames.iter_mut().find(|r| r.parent == parent) {
                Some(group) => group.names.push((old.clone(), new_name)),
                None => renames.push(Renames { parent: parent.to_vec(), names: vec![(old.clone(), new_name)] }),
            }
        }
        Ok(Self { include, exclude, renames, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for ReplaceField {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(mut value) = part::json_or_forward(record, out, self.on, self.on_non_json)? else { return Ok(()) };
        part::require_object(&value, self.on, "to replace fields in")?;
        if let Some(keep) = &self.include {
            value = keep.prune(value).unwrap_or_else(|| Value::Object(Map::new()));
        }
        for path in &self.exclude {
            path.remove_all(&mut value);
        }
        for group in &self.renames {
            if let Some(Value::Object(members)) = path::get_mut(&group.parent, &mut value) {
                rename(members, &group.names);
            }
        }
        part::emit(record, out, self.on, &value);
        Ok(())
    }
}

impl Keep {
    fn add(&mut self, steps: &[PathStep]) {
        let Some((step, rest)) = steps.split_first() else {
            self.whole = true;
            return;
        };
        let child = match step {
            PathStep::Name(n) => {
                let i = match self.names.iter().position(|(name, _)| name == n) {
                    Some(i) => i,
                    None => {
                        self.names.push((n.clone(), Keep::default()));
                        self.names.len() - 1
                    }
                };
                &mut self.names[i].1
            }
            // Kept sorted, so pruning yields elements in index order.
            PathStep::Index(at) => {
                let j = match self.elements.binary_search_by_key(at, |(i, _)| *i) {
                    Ok(j) => j,
                    Err(j) => {
                        self.elements.insert(j, (*at, Keep::default()));
                        j
                    }
                };
                &mut self.elements[j].1
            }
            // Refused when the config is read.
            PathStep::All => return,
        };
        child.add(rest);
    }

    /// What is left of `value`: the kept members in their original order, the kept
    /// elements in index order. `None` when nothing under it is kept, so a parent whose
    /// included children are all missing is left out too.
    fn prune(&self, value: Value) -> Option<Value> {
        if self.whole {
            return Some(value);
        }
        match value {
            Value::Object(members) => {
                let kept: Map<String, Value> = members
                    .into_iter()
                    .filter_map(|(name, v)| {
                        let keep = self.names.iter().find(|(n, _)| *n == name)?;
                        Some((name, keep.1.prune(v)?))
                    })
                    .collect();
                (!kept.is_empty()).then_some(Value::Object(kept))
            }
            Value::Array(mut items) => {
                let kept: Vec<Value> =
                    self.elements.iter().filter_map(|(at, keep)| keep.prune(items.get_mut(*at).map(Value::take)?)).collect();
                (!kept.is_empty()).then_some(Value::Array(kept))
            }
            _ => None,
        }
    }
}

/// Renames members in place: each keeps its position; when a new name meets an existing
/// member, the later of the two in the object wins, at the earlier one's position.
fn rename(members: &mut Map<String, Value>, names: &[(String, String)]) {
    if !names.iter().any(|(old, _)| members.contains_key(old)) {
        return;
    }
    for (name, v) in std::mem::take(members) {
        let name = names.iter().find(|(old, _)| *old == name).map_or(name, |(_, new)| new.clone());
        members.insert(name, v);
    }
}
