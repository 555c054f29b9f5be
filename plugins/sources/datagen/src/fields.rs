//! Field kinds and how each value is drawn. Every value of record `n` comes from a
//! generator seeded by `(seed, n, field)`, so record `n` is the same on every run.

use serde::Deserialize;
use serde_json::Value;

/// One field of the generated JSON object. (Unknown keys are refused by [`Kind`]: `flatten`
/// hands it every key but `name`.)
#[derive(Debug, Clone, Deserialize)]
pub struct Field {
    /// The JSON key.
    pub name: String,
    /// How its value is made.
    #[serde(flatten)]
    pub kind: Kind,
}

/// How a field's value is made.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Kind {
    /// The record number: 0, 1, 2, …
    Sequence,
    /// A whole number in `[min, max]`.
    Int { min: i64, max: i64 },
    /// A decimal in `[min, max)`, with `decimals` digits (default 2).
    Float { min: f64, max: f64, #[serde(default = "two")] decimals: u32 },
    /// `true` or `false`.
    Bool,
    /// A first and last name.
    Name,
    /// An e-mail address.
    Email,
    /// A phone number (`+1-555-…`).
    Phone,
    /// A version-4-shaped UUID.
    Uuid,
    /// Milliseconds since the epoch: `start_ms + n × step_ms` (deterministic), or the wall
    /// clock when `start_ms` is omitted.
    Timestamp { start_ms: Option<i64>, #[serde(default = "thousand")] step_ms: i64 },
    /// One of the given values.
    OneOf { values: Vec<Value> },
    /// Always this value.
    Const { value: Value },
    /// Random lower-case letters.
    String { #[serde(default = "eight")] length: usize },
}

fn two() -> u32 {
    2
}
fn thousand() -> i64 {
    1_000
}
fn eight() -> usize {
    8
}

impl Kind {
    /// A problem with the field's settings, if any.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Kind::Int { min, max } if min > max => Err(format!("min ({min}) is above max ({max})")),
            Kind::Float { min, max, .. } if min.partial_cmp(max) != Some(std::cmp::Ordering::Less) => Err(format!("min ({min}) must be below max ({max})")),
            Kind::Float { decimals, .. } if *decimals > 9 => Err("decimals must be 0 to 9".into()),
            Kind::OneOf { values } if values.is_empty() => Err("values must list at least one value".into()),
            Kind::String { length } if *length > 4096 => Err("length must be at most 4096".into()),
            _ => Ok(()),
        }
    }

    /// The value for record `n`, drawn from `rng`; `now_ms` is the wall clock.
    pub fn value(&self, n: u64, rng: &mut Rng, now_ms: i64) -> Value {
        match self {
            Kind::Sequence => Value::from(n),
            Kind::Int { min, max } => Value::from(min + (rng.next() % ((max - min) as u64 + 1)) as i64),
            Kind::Float { min, max, decimals } => {
                let x = min + rng.unit() * (max - min);
                let scale = 10f64.powi(*decimals as i32);
                serde_json::Number::from_f64((x * scale).floor() / scale).map_or(Value::Null, Value::Number)
            }
            Kind::Bool => Value::from(rng.next() & 1 == 1),
            Kind::Name => Value::from(format!("{} {}", rng.pick(FIRST), rng.pick(LAST))),
            Kind::Email => {
                let (first, last) = (rng.pick(FIRST).to_ascii_lowercase(), rng.pick(LAST).to_ascii_lowercase());
                Value::from(format!("{first}.{last}{}@{}", rng.next() % 100, rng.pick(DOMAINS)))
            }
            Kind::Phone => Value::from(format!("+1-555-{:03}-{:04}", rng.next() % 1000, rng.next() % 10_000)),
            Kind::Uuid => {
                let (a, b) = (rng.next(), rng.next());
                Value::from(format!(
                    "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
                    a >> 32,
                    (a >> 16) & 0xffff,
                    a & 0xfff,
                    8 + (b >> 62),
                    (b >> 48) & 0xfff,
                    b & 0xffff_ffff_ffff
                ))
            }
            Kind::Timestamp { start_ms: Some(start), step_ms } => Value::from(start + step_ms * n as i64),
            Kind::Timestamp { start_ms: None, .. } => Value::from(now_ms),
            Kind::OneOf { values } => values[(rng.next() % values.len() as u64) as usize].clone(),
            Kind::Const { value } => value.clone(),
            Kind::String { length } => Value::from((0..*length).map(|_| (b'a' + (rng.next() % 26) as u8) as char).collect::<String>()),
        }
    }
}

const FIRST: &[&str] = &["Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Margaret", "Linus", "Radia", "Donald", "Frances", "John"];
const LAST: &[&str] = &["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Thompson", "Hamilton", "Torvalds", "Perlman", "Knuth", "Allen", "Backus"];
const DOMAINS: &[&str] = &["example.com", "example.org", "example.net"];

/// SplitMix64: small, fast, and good enough for test data.
pub struct Rng(u64);

impl Rng {
    /// The generator for field `field` of record `n` under `seed`.
    pub fn for_value(seed: u64, n: u64, field: usize) -> Self {
        let mut r = Rng(seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (field as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
        r.next();
        r
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}
