//! A transform that misbehaves on purpose, for the host's fault tests. It forwards records
//! unchanged, except records whose value contains `marker` (every record when no marker is
//! set), on which it commits its `fault`. The faults of its forwarded outputs (bad flags,
//! a part both forwarded and written, one input forwarded `copies` times) corrupt the batch
//! the SDK built, whatever the marker: no SDK writes them, so only a fixture can. So do the
//! faults of its passed inputs (out of order, out of range).

use std::cell::RefCell;

use turnpike_sdk::bindings::exports::turnpike::plugin::lazy_transform as lazy;
use turnpike_sdk::bindings::exports::turnpike::plugin::passing_transform as passing;
use turnpike_sdk::bindings::turnpike::plugin::batch_input;
use turnpike_sdk::bindings::turnpike::plugin::types as wit;
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
    /// Forwarding: a flag bit the contract does not define (8).
    UnknownFlag,
    /// Forwarding: one flag word fewer than there are outputs.
    MissingFlag,
    /// Forwarding: the first output's key both forwarded and written.
    ForwardedAndWritten,
    /// Forwarding: the first input forwarded whole `copies` times, and nothing else.
    ForwardCopies,
    /// Passing: the passed inputs in decreasing order.
    PassOutOfOrder,
    /// Passing: an input the batch does not have passed after the others.
    PassOutOfRange,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    fault: Fault,
    #[serde(default)]
    marker: Option<String>,
    #[serde(default = "one_gib_in_mib")]
    output_mib: usize,
    #[serde(default)]
    copies: u32,
}

fn one_gib_in_mib() -> usize {
    1024
}

struct Faulty {
    fault: Fault,
    marker: Option<Vec<u8>>,
    output_mib: usize,
    copies: u32,
}

impl Transform for Faulty {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        if config.fault == Fault::SlowCreate {
            spin();
        }
        if config.fault == Fault::ForwardCopies && config.copies == 0 {
            return Err(ConfigError::at("copies", "forward_copies needs copies: 1 or more"));
        }
        Ok(Faulty { fault: config.fault, marker: config.marker.map(String::into_bytes), output_mib: config.output_mib, copies: config.copies })
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
            Fault::UnknownFlag | Fault::MissingFlag | Fault::ForwardedAndWritten | Fault::ForwardCopies | Fault::PassOutOfOrder | Fault::PassOutOfRange => out.forward(record),
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

fn create_faulty(config: &str) -> Result<RefCell<Faulty>, wit::ConfigError> {
    let faulty = turnpike_sdk::parse_config::<Config>(config).and_then(Faulty::create).map_err(|e| wit::ConfigError { key: e.key, message: e.message })?;
    Ok(RefCell::new(faulty))
}

/// The transform export a host since `0.1.6` calls: the SDK's batch, then the configured
/// corruption. The faults of forwarded outputs need written rows, so for them every input is
/// written out (the batch a `0.1.5` host gets), and none passed.
struct CorruptPassing(RefCell<Faulty>);

impl passing::GuestTransformer for CorruptPassing {
    fn create(config: String) -> Result<passing::Transformer, wit::ConfigError> {
        Ok(passing::Transformer::new(CorruptPassing(create_faulty(&config)?)))
    }

    fn transform(&self, batch: wit::InputBatch) -> Result<passing::PassingBatch, wit::PluginError> {
        let mut faulty = self.0.borrow_mut();
        if let Fault::PassOutOfOrder | Fault::PassOutOfRange = faulty.fault {
            let mut out = turnpike_sdk::__private::run_batch_lazy_passing(&mut *faulty, &batch, batch_input::batch_data)?;
            match faulty.fault {
                Fault::PassOutOfOrder => out.passed.reverse(),
                _ => out.passed.push(out.passed.len() as u32 + 1_000),
            }
            return Ok(out);
        }
        let mut out = turnpike_sdk::__private::run_batch_lazy(&mut *faulty, &batch, batch_input::batch_data)?;
        corrupt(faulty.fault, faulty.copies, &mut out);
        Ok(passing::PassingBatch { outputs: out.outputs, forwarded: out.forwarded, passed: Vec::new() })
    }
}

/// The transform export a `0.1.5` host calls: the SDK's batch, then the configured corruption.
struct CorruptLazy(RefCell<Faulty>);

impl lazy::GuestTransformer for CorruptLazy {
    fn create(config: String) -> Result<lazy::Transformer, wit::ConfigError> {
        Ok(lazy::Transformer::new(CorruptLazy(create_faulty(&config)?)))
    }

    fn transform(&self, batch: wit::InputBatch) -> Result<lazy::ForwardingBatch, wit::PluginError> {
        let mut faulty = self.0.borrow_mut();
        let mut out = turnpike_sdk::__private::run_batch_lazy(&mut *faulty, &batch, batch_input::batch_data)?;
        corrupt(faulty.fault, faulty.copies, &mut out);
        Ok(out)
    }
}

/// Breaks a forwarding batch the way `fault` says (other faults, and a batch without
/// outputs, are left as they are).
fn corrupt(fault: Fault, copies: u32, out: &mut lazy::ForwardingBatch) {
    /// `u32`s per output row (`wit/types.wit`, `output-batch.records`).
    const OUTPUT_STRIDE: usize = 8;
    if out.forwarded.is_empty() {
        return;
    }
    let batch = &mut out.outputs;
    match fault {
        Fault::UnknownFlag => out.forwarded[0] |= 8,
        Fault::MissingFlag => {
            out.forwarded.pop();
        }
        Fault::ForwardedAndWritten => {
            // The key span of output 0 points at a byte of its own while its flag still
            // names the input's key.
            batch.data.push(b'x');
            batch.records[1] = (batch.data.len() - 1) as u32;
            batch.records[2] = 1;
        }
        Fault::ForwardCopies => {
            let first = batch.records[..OUTPUT_STRIDE].to_vec();
            let (timestamp, flags) = (batch.timestamps[0], out.forwarded[0]);
            batch.records = first.repeat(copies as usize);
            batch.timestamps = vec![timestamp; copies as usize];
            out.forwarded = vec![flags; copies as usize];
        }
        _ => {}
    }
}

struct FaultyPlugin;

impl lazy::Guest for FaultyPlugin {
    type Transformer = CorruptLazy;
}

impl passing::Guest for FaultyPlugin {
    type Transformer = CorruptPassing;
}

turnpike_sdk::bindings::export_transform_world!(FaultyPlugin with_types_in turnpike_sdk::bindings);
