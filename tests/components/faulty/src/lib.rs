//! A transform that misbehaves on purpose, for the host's fault tests. It forwards records
//! unchanged, except records whose value contains `marker` (every record when no marker is
//! set), on which it commits its `fault`.

use turnpike_sdk::prelude::*;

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Fault {
    /// Panic (a trap).
    Trap,
    /// Spin forever.
    Loop,
    /// Allocate until allocation fails.
    Memory,
    /// Try to return `output_mib` MiB of output (default 1024: 1 GiB).
    HugeOutput,
    /// Spin forever inside `create`.
    SlowCreate,
    /// Keep 1 MiB per record for good (a leak), then forward it.
    Leak,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    fault: Fault,
    #[serde(default)]
    marker: Option<String>,
    #[serde(default = "one_gib_in_mib")]
    output_mib: usize,
}

fn one_gib_in_mib() -> usize {
    1024
}

struct Faulty {
    fault: Fault,
    marker: Option<Vec<u8>>,
    output_mib: usize,
}

impl Transform for Faulty {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        if config.fault == Fault::SlowCreate {
            spin();
        }
        Ok(Faulty { fault: config.fault, marker: config.marker.map(String::into_bytes), output_mib: config.output_mib })
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let value = record.value().unwrap_or_default();
        let hit = match &self.marker {
            None => true,
            Some(m) => value.windows(m.len()).any(|w| w == m.as_slice()),
        };
        if !hit {
            out.forward(record);
            return Ok(());
        }
        match self.fault {
            Fault::Trap => panic!("poison record at offset {}", record.offset()),
            Fault::Loop | Fault::SlowCreate => spin(),
            Fault::Memory => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            Fault::Leak => {
                std::hint::black_box(Box::leak(vec![1u8; 1 << 20].into_boxed_slice()));
                out.forward(record);
            }
            Fault::HugeOutput => {
                let chunk = vec![7u8; 1 << 20];
                for _ in 0..self.output_mib {
                    out.forward_with_value(record, &chunk);
                }
            }
        }
        Ok(())
    }
}

fn spin() -> ! {
    let mut x: u64 = 0;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

export_transform!(Faulty);
