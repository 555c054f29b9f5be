//! The step under construction, with a record of every option it was given: each ends up
//! used, skipped with a reason, or (by `finish`) reported as unknown, so the importer's
//! "nothing is dropped silently" holds for every SMT without each converter tracking it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Route, Step};

/// Collects a step and accounts for its options.
pub(super) struct Builder<'a> {
    /// The SMT's class as written, for "needs `option`" errors.
    class: &'a str,
    options: &'a BTreeMap<String, String>,
    taken: Vec<String>,
    pub(super) step: Step,
}

impl<'a> Builder<'a> {
    pub(super) fn new(class: &'a str, plugin: &'static str, options: &'a BTreeMap<String, String>) -> Self {
        let step = Step { plugin, config: Map::new(), used: Vec::new(), skipped: Vec::new(), notes: Vec::new(), route: Route::None, json_path: None };
        Self { class, options, taken: Vec::new(), step }
    }

    /// The SMT's class as written.
    pub(super) fn class(&self) -> &'a str {
        self.class
    }

    /// The trimmed value of `option` if given and not empty; marks it taken.
    pub(super) fn take(&mut self, option: &str) -> Option<String> {
        self.taken.push(option.to_owned());
        self.options.get(option).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
    }

    /// The value as written (not trimmed), if not empty.
    pub(super) fn take_raw(&mut self, option: &str) -> Option<String> {
        self.taken.push(option.to_owned());
        self.options.get(option).filter(|v| !v.is_empty()).cloned()
    }

    /// [`take`](Self::take), or why the SMT cannot run without `option`.
    pub(super) fn need(&mut self, option: &str) -> Result<String, String> {
        self.take(option).ok_or_else(|| format!("{} needs `{option}`, which is not given", self.class))
    }

    /// The value as written, even empty, or why the SMT cannot run without `option`.
    pub(super) fn need_raw(&mut self, option: &str) -> Result<String, String> {
        self.taken.push(option.to_owned());
        self.options.get(option).cloned().ok_or_else(|| format!("{} needs `{option}`, which is not given", self.class))
    }

    /// Whether `option` was given at all, even empty.
    pub(super) fn given(&self, option: &str) -> bool {
        self.options.contains_key(option)
    }

    pub(super) fn set(&mut self, option: &str, key: &str, value: Value) {
        self.step.config.insert(key.to_owned(), value);
        self.used(option, key);
    }

    pub(super) fn used(&mut self, option: &str, to: &str) {
        self.taken.push(option.to_owned());
        self.step.used.push((option.to_owned(), to.to_owned()));
    }

    pub(super) fn skip_if_given(&mut self, option: &str, why: &str) {
        self.taken.push(option.to_owned());
        if self.options.contains_key(option) {
            self.step.skipped.push((option.to_owned(), why.to_owned()));
        }
    }

    /// The step, every option not accounted for left out as unknown to the SMT.
    pub(super) fn finish(mut self, smt: &str) -> Step {
        let accounted: Vec<String> = self.step.used.iter().chain(&self.step.skipped).map(|(o, _)| o.clone()).collect();
        for option in self.options.keys() {
            if !accounted.contains(option) {
                let why = if self.taken.contains(option) {
                    "is empty, so it sets nothing".to_owned()
                } else {
                    format!("not an option of {}; Kafka Connect ignored it too", smt.trim_start_matches("Confluent"))
                };
                self.step.skipped.push((option.clone(), why));
            }
        }
        self.step
    }
}
