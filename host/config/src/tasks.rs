//! How many pipelines a connector runs: a fixed count (`tasks: 4`), or a range the host moves
//! within by the connector's lag (`tasks: { min: 1, max: 8, target_lag_per_task: 10000 }`).

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Problem, Ranged};

/// At most this many tasks per connector on one host.
pub const MAX_TASKS: u64 = 64;

/// A connector's task count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tasks {
    /// Always this many.
    Fixed(Ranged<1, MAX_TASKS>),
    /// Between `min` and `max`, by lag.
    Auto(AutoScale),
}

/// Scaling by lag: enough tasks that each has at most `target_lag_per_task` records to catch
/// up on, within `min..=max` and never more than the partitions this host reads. Up at once;
/// down only once fewer tasks would have been enough for `scale_down_after_s`, so a lag that
/// comes and goes does not start and stop pipelines all the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoScale {
    /// Tasks at least (1 to 64).
    pub min: Ranged<1, 64>,
    /// Tasks at most (1 to 64, at least `min`).
    pub max: Ranged<1, 64>,
    /// Records behind that one task is expected to carry (1 to 1,000,000,000).
    pub target_lag_per_task: Ranged<1, 1_000_000_000>,
    /// Seconds fewer tasks must have been enough before one is stopped (default 60; 1 to 3600).
    #[serde(default = "default_scale_down_after_s")]
    pub scale_down_after_s: Ranged<1, 3600>,
}

fn default_scale_down_after_s() -> Ranged<1, 3600> {
    Ranged::constant(60)
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks::Fixed(Ranged::constant(1))
    }
}

impl Tasks {
    /// How many tasks a run starts with.
    pub fn initial(&self) -> usize {
        match self {
            Tasks::Fixed(n) => n.get() as usize,
            Tasks::Auto(auto) => auto.min.get() as usize,
        }
    }

    /// The most tasks this setting ever runs.
    pub fn most(&self) -> u64 {
        match self {
            Tasks::Fixed(n) => n.get(),
            Tasks::Auto(auto) => auto.max.get(),
        }
    }

    /// Whether it is the default, one fixed task (not written out).
    pub fn is_one(&self) -> bool {
        *self == Tasks::default()
    }

    /// What the types cannot say: `min` above `max`.
    pub(crate) fn problems(&self, key: &str) -> Vec<Problem> {
        match self {
            Tasks::Auto(auto) if auto.min > auto.max => {
                vec![Problem::new(format!("{key}.min"), format!("min ({}) is above max ({}); make min at most max", auto.min, auto.max))]
            }
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tasks::Fixed(n) => n.fmt(f),
            Tasks::Auto(a) => write!(f, "{}..={} by lag", a.min, a.max),
        }
    }
}

impl Serialize for Tasks {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Tasks::Fixed(n) => n.serialize(serializer),
            Tasks::Auto(auto) => auto.serialize(serializer),
        }
    }
}

/// By hand rather than `untagged`, so a mistake reads as what to write, not as "did not match
/// any variant".
impl<'de> Deserialize<'de> for Tasks {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TasksVisitor;
        impl<'de> Visitor<'de> for TasksVisitor {
            type Value = Tasks;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of tasks (1 to 64) or { min, max, target_lag_per_task }")
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Tasks, E> {
                Ranged::try_from(value).map(Tasks::Fixed).map_err(E::custom)
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Tasks, E> {
                u64::try_from(value).map_err(|_| E::custom(format!("{value} is out of range 1..={MAX_TASKS}"))).and_then(|v| self.visit_u64(v))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Tasks, A::Error> {
                AutoScale::deserialize(de::value::MapAccessDeserializer::new(map)).map(Tasks::Auto)
            }
        }
        deserializer.deserialize_any(TasksVisitor)
    }
}

impl utoipa::PartialSchema for Tasks {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::OneOfBuilder::new()
            .item(<Ranged<1, MAX_TASKS> as utoipa::PartialSchema>::schema())
            .item(utoipa::openapi::Ref::from_schema_name(<AutoScale as utoipa::ToSchema>::name()))
            .description(Some("A fixed number of tasks, or a range the host scales within by lag."))
            .into()
    }
}

impl utoipa::ToSchema for Tasks {
    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        schemas.push((<AutoScale as utoipa::ToSchema>::name().into(), <AutoScale as utoipa::PartialSchema>::schema()));
        <AutoScale as utoipa::ToSchema>::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<Tasks, String> {
        serde_yaml_ng::from_str(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_number_or_a_range_by_lag() {
        assert_eq!(parse("4"), Ok(Tasks::Fixed(Ranged::constant(4))));
        let auto = parse("{ min: 1, max: 8, target_lag_per_task: 1000 }").unwrap();
        let Tasks::Auto(a) = auto else { panic!("{auto:?}") };
        assert_eq!((a.min.get(), a.max.get(), a.target_lag_per_task.get(), a.scale_down_after_s.get()), (1, 8, 1000, 60));
        assert_eq!(serde_json::to_value(auto).unwrap()["max"], 8);
        assert_eq!(serde_json::to_value(Tasks::Fixed(Ranged::constant(3))).unwrap(), 3);
    }

    #[test]
    fn mistakes_say_what_to_write() {
        assert!(parse("0").unwrap_err().contains("0 is out of range 1..=64"));
        assert!(parse("-2").unwrap_err().contains("-2 is out of range 1..=64"));
        assert!(parse("many").unwrap_err().contains("a number of tasks (1 to 64) or { min, max, target_lag_per_task }"), "{:?}", parse("many"));
        assert!(parse("{ min: 1, max: 4 }").unwrap_err().contains("missing field `target_lag_per_task`"));
        assert!(parse("{ min: 1, max: 4, target_lag_per_task: 5, step: 2 }").unwrap_err().contains("unknown field `step`"));
        let inverted = parse("{ min: 5, max: 2, target_lag_per_task: 10 }").unwrap();
        assert_eq!(inverted.problems("tasks")[0].to_string(), "tasks.min: min (5) is above max (2); make min at most max");
    }
}
