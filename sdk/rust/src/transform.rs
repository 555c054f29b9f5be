//! The transform trait and the glue that exports it through the component model.

use std::cell::{OnceCell, RefCell};

use serde::de::DeserializeOwned;

use turnpike_batch_layout::{merge_passed, resolve_forwarded, InputView, LayoutError, OutputParts, PassParts};

use crate::bindings::exports::turnpike::plugin::lazy_transform as lazy;
use crate::bindings::exports::turnpike::plugin::passing_transform as passing;
use crate::bindings::turnpike::plugin::types as wit;
use crate::output::Outputs;
use crate::{parse_config, Batch, ConfigError, Output, Record, RecordError};

/// A single-message transform.
///
/// The host creates one value per running task with [`Transform::create`], then calls
/// [`Transform::transform_batch`] once per batch; by default that calls
/// [`Transform::transform`] for each record. State kept in `self` lives as long as the task.
pub trait Transform: Sized + 'static {
    /// The plugin's configuration, parsed from the connector's `config` mapping. Use
    /// `#[serde(deny_unknown_fields)]` so a misspelt key is reported, not ignored.
    type Config: DeserializeOwned;

    /// Builds the transform from its configuration. Called once per instance; return a
    /// [`ConfigError`] naming the key for a value you refuse.
    fn create(config: Self::Config) -> Result<Self, ConfigError>;

    /// Handles one record: send zero, one or more outputs through `out`, or return an error
    /// for this record (outputs already sent for it are then discarded).
    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError>;

    /// Handles a whole batch. Override only to work across records; the default calls
    /// [`Transform::transform`] per record and collects per-record errors. An `Err` fails the
    /// whole batch.
    fn transform_batch(&mut self, batch: Batch<'_>, outputs: &mut Outputs) -> Result<(), RecordError> {
        for record in batch.records() {
            let mark = outputs.mark();
            let result = self.transform(&record, &mut outputs.for_input(record.index()));
            if let Err(e) = result {
                outputs.rollback(mark);
                outputs.fail(record.index(), e);
            }
        }
        Ok(())
    }
}

/// Runs one batch through a transform: the whole per-batch path except the component-model
/// boundary, for a batch that came with its bytes, as a `passing-transform` returns it: inputs
/// forwarded whole as their one output listed in `passed`, other forwarded parts named, not
/// copied.
pub fn run_batch_passing<T: Transform>(transform: &mut T, batch: &wit::InputBatch) -> Result<passing::PassingBatch, wit::PluginError> {
    run_outputs(transform, Batch::sent(batch))
}

/// [`run_batch_passing`] with the passed inputs written out as forwarded outputs, as a
/// `0.1.5` host (`lazy-transform`) expects them.
pub fn run_batch_forwarding<T: Transform>(transform: &mut T, batch: &wit::InputBatch) -> Result<lazy::ForwardingBatch, wit::PluginError> {
    forwarding(run_outputs(transform, Batch::sent(batch))?, batch)
}

/// [`run_batch_passing`] for a batch that came without its bytes (`passing-transform`, the
/// export a `0.1.6` host calls): `fetch` gets them from the host (`batch-input.batch-data`)
/// the first time a record's key, value or headers are read, and not at all if none is.
pub fn run_batch_lazy_passing<T: Transform>(transform: &mut T, batch: &wit::InputBatch, fetch: fn() -> Vec<u8>) -> Result<passing::PassingBatch, wit::PluginError> {
    let fetched = OnceCell::new();
    run_outputs(transform, Batch::lazy(batch, &fetched, fetch))
}

/// [`run_batch_forwarding`] for a batch that came without its bytes (`lazy-transform`, the
/// export a `0.1.5` host calls).
pub fn run_batch_lazy<T: Transform>(transform: &mut T, batch: &wit::InputBatch, fetch: fn() -> Vec<u8>) -> Result<lazy::ForwardingBatch, wit::PluginError> {
    let fetched = OnceCell::new();
    forwarding(run_outputs(transform, Batch::lazy(batch, &fetched, fetch))?, batch)
}

/// The outputs of one batch, with the flags that name their forwarded parts and the inputs
/// passed on whole.
fn run_outputs<T: Transform>(transform: &mut T, batch: Batch<'_>) -> Result<passing::PassingBatch, wit::PluginError> {
    // Room for every output's own bytes: at most a new value per record, usually less (a lazy
    // batch's bytes are not known up front, so its outputs grow as they are written).
    let mut outputs = Outputs::with_capacity(batch.len(), batch.sent_bytes());
    match transform.transform_batch(batch, &mut outputs) {
        Ok(()) => Ok(outputs.finish(batch.positions())),
        Err(e) => Err(e.into_wit()),
    }
}

/// Passed inputs written out as forwarded outputs, in their places (what the host does with a
/// `passing-transform`'s result before resolving it).
fn forwarding(passing: passing::PassingBatch, batch: &wit::InputBatch) -> Result<lazy::ForwardingBatch, wit::PluginError> {
    let passing::PassingBatch { mut outputs, mut forwarded, passed } = passing;
    let parts = PassParts { records: &mut outputs.records, timestamps: &mut outputs.timestamps, forwarded: &mut forwarded };
    merge_passed(parts, &passed, InputView::new(batch)).map_err(sdk_bug)?;
    Ok(lazy::ForwardingBatch { outputs, forwarded })
}

/// A batch the SDK itself wrote wrong: no plugin code can cause it.
fn sdk_bug(e: LayoutError) -> wit::PluginError {
    wit::PluginError { kind: wit::ErrorKind::Fatal, message: format!("the SDK wrote an output batch it cannot resolve: {e}") }
}

/// [`run_batch_passing`] with the passed inputs and forwarded parts copied in, as the host
/// does: what [`crate::testing`] and the benchmarks' native side read.
pub fn run_batch<T: Transform>(transform: &mut T, batch: &wit::InputBatch) -> Result<wit::OutputBatch, wit::PluginError> {
    let lazy::ForwardingBatch { mut outputs, forwarded } = run_batch_forwarding(transform, batch)?;
    let parts = OutputParts { data: &mut outputs.data, records: &mut outputs.records, headers: &mut outputs.headers };
    resolve_forwarded(parts, &forwarded, InputView::new(batch), usize::MAX).map_err(sdk_bug)?;
    Ok(outputs)
}

/// The user's transform made from the connector's config.
fn create_transform<T: Transform>(config: &str) -> Result<RefCell<T>, wit::ConfigError> {
    parse_config::<T::Config>(config).and_then(T::create).map(RefCell::new).map_err(ConfigError::into_wit)
}

/// The component-model resource wrapping a user's transform for `passing-transform`, which
/// hosts since `0.1.6` call. Resource methods take `&self`; one instance is only ever called by
/// one host task at a time, so a `RefCell` suffices.
#[doc(hidden)]
pub struct PassingTransformResource<T>(RefCell<T>);

impl<T: Transform> passing::GuestTransformer for PassingTransformResource<T> {
    fn create(config: String) -> Result<passing::Transformer, wit::ConfigError> {
        Ok(passing::Transformer::new(PassingTransformResource(create_transform::<T>(&config)?)))
    }

    fn transform(&self, batch: wit::InputBatch) -> Result<passing::PassingBatch, wit::PluginError> {
        run_batch_lazy_passing(&mut *self.0.borrow_mut(), &batch, crate::bindings::turnpike::plugin::batch_input::batch_data)
    }
}

/// The same for `lazy-transform`, which `0.1.5` hosts call (a host calls one of the two).
#[doc(hidden)]
pub struct LazyTransformResource<T>(RefCell<T>);

impl<T: Transform> lazy::GuestTransformer for LazyTransformResource<T> {
    fn create(config: String) -> Result<lazy::Transformer, wit::ConfigError> {
        Ok(lazy::Transformer::new(LazyTransformResource(create_transform::<T>(&config)?)))
    }

    fn transform(&self, batch: wit::InputBatch) -> Result<lazy::ForwardingBatch, wit::PluginError> {
        run_batch_lazy(&mut *self.0.borrow_mut(), &batch, crate::bindings::turnpike::plugin::batch_input::batch_data)
    }
}

#[cfg(test)]
mod tests {
    use turnpike_batch_layout::{FORWARD_ALL, FORWARD_HEADERS, FORWARD_KEY};

    use super::*;
    use crate::testing::{self, input_batch};
    use crate::{NewRecord, NoConfig, TestRecord};

    /// Per record, by value: `fwd` forwards, `new` forwards with a new value, `emit` writes a
    /// record of its own, `first` forwards the batch's first record (another input), `fail`
    /// forwards and then fails.
    struct Scripted;

    impl Transform for Scripted {
        type Config = NoConfig;
        fn create(_: NoConfig) -> Result<Self, ConfigError> {
            Ok(Scripted)
        }
        fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
            match record.value() {
                Some(b"fwd") => out.forward(record),
                Some(b"new") => out.forward_with_value(record, "replaced"),
                Some(b"emit") => out.emit(NewRecord::new().value("made")),
                Some(b"fail") => {
                    out.forward(record);
                    return Err(RecordError::invalid("no"));
                }
                _ => {}
            }
            Ok(())
        }
        fn transform_batch(&mut self, batch: Batch<'_>, outputs: &mut Outputs) -> Result<(), RecordError> {
            let first = batch.records().next();
            for record in batch.records() {
                let mark = outputs.mark();
                if record.value() == Some(&b"first"[..]) {
                    outputs.for_input(record.index()).forward(first.as_ref().expect("a first record"));
                    continue;
                }
                if let Err(e) = self.transform(&record, &mut outputs.for_input(record.index())) {
                    outputs.rollback(mark);
                    outputs.fail(record.index(), e);
                }
            }
            Ok(())
        }
    }

    fn inputs() -> Vec<TestRecord> {
        ["fwd", "fail", "new", "emit", "first"].into_iter().map(|v| TestRecord::value(v).with_key(format!("k-{v}")).with_header("h", v)).collect()
    }

    /// Forwarded parts are named, never copied; another record of the batch is copied; a failed
    /// record's outputs are rolled back together with their flags.
    #[test]
    fn outputs_name_what_they_forward_and_carry_only_their_own_bytes() {
        let batch = input_batch(inputs());
        let Ok(out) = run_batch_forwarding(&mut Scripted, &batch) else { panic!("no batch error") };
        assert_eq!(out.forwarded, [FORWARD_ALL, FORWARD_KEY | FORWARD_HEADERS, 0, 0]);
        assert_eq!(out.outputs.data, b"replacedmadek-fwdfwdhfwd", "only written bytes, the copied first record's last");
        assert_eq!(out.outputs.errors.len(), 1);
        assert_eq!(out.outputs.errors[0].input, 1);
    }

    /// The same batch resolved as the host resolves it (and the test harness) reads as if every byte
    /// had been copied.
    #[test]
    fn resolved_outputs_read_as_copies() {
        let result = testing::run(&mut Scripted, inputs()).expect("no batch error");
        let read: Vec<_> = result.outputs.iter().map(|o| (o.input, o.key.clone(), o.value.clone(), o.headers.clone())).collect();
        let h = |v: &str| vec![("h".to_owned(), v.as_bytes().to_vec())];
        assert_eq!(
            read,
            [
                (0, Some(b"k-fwd".to_vec()), Some(b"fwd".to_vec()), h("fwd")),
                (2, Some(b"k-new".to_vec()), Some(b"replaced".to_vec()), h("new")),
                (3, None, Some(b"made".to_vec()), vec![]),
                (4, Some(b"k-fwd".to_vec()), Some(b"fwd".to_vec()), h("fwd")),
            ]
        );
        assert_eq!(result.errors.len(), 1);
    }

    thread_local! {
        /// What the fake host's `batch-data` returns, and how often it was called.
        static HOST_BYTES: std::cell::RefCell<(Vec<u8>, usize)> = const { std::cell::RefCell::new((Vec::new(), 0)) };
    }

    fn fetch() -> Vec<u8> {
        HOST_BYTES.with_borrow_mut(|(bytes, calls)| {
            *calls += 1;
            bytes.clone()
        })
    }

    /// The batch as a lazy transform receives it (its bytes with the fake host), and how many
    /// fetches running `transform` on it took.
    fn run_lazily<T: Transform>(transform: &mut T) -> (lazy::ForwardingBatch, usize) {
        let mut batch = input_batch(inputs());
        HOST_BYTES.set((std::mem::take(&mut batch.data), 0));
        let Ok(out) = run_batch_lazy(transform, &batch, fetch) else { panic!("no batch error") };
        (out, HOST_BYTES.with_borrow(|(_, calls)| *calls))
    }

    /// Keeps the records at even offsets, reading nothing but the offsets.
    struct EvenOffsets;

    impl Transform for EvenOffsets {
        type Config = NoConfig;
        fn create(_: NoConfig) -> Result<Self, ConfigError> {
            Ok(EvenOffsets)
        }
        fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
            if record.offset() % 2 == 0 {
                out.forward(record);
            }
            Ok(())
        }
    }

    /// A transform that reads only columns never fetches the batch's bytes from the host.
    #[test]
    fn a_lazy_batch_whose_bytes_are_not_read_is_never_fetched() {
        let (out, fetches) = run_lazily(&mut EvenOffsets);
        assert_eq!(fetches, 0);
        assert_eq!(out.forwarded, [FORWARD_ALL; 3], "offsets 0, 2 and 4 of five");
    }

    /// One that reads values fetches them once for the whole batch, and gives exactly what it
    /// gives with the bytes sent.
    #[test]
    fn a_lazy_batch_is_fetched_once_and_reads_as_if_sent() {
        let (lazily, fetches) = run_lazily(&mut Scripted);
        assert_eq!(fetches, 1);
        let Ok(sent) = run_batch_forwarding(&mut Scripted, &input_batch(inputs())) else { panic!("no batch error") };
        let columns = |o: &wit::OutputBatch| (o.data.clone(), o.topics.clone(), o.records.clone(), o.timestamps.clone(), o.headers.clone(), o.errors.len());
        assert_eq!(columns(&lazily.outputs), columns(&sent.outputs));
        assert_eq!(lazily.forwarded, sent.forwarded);
    }
}
