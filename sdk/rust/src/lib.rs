//! Write [Turnpike](https://example.invalid/turnpike) plugins in Rust.
//!
//! A plugin is a type implementing one trait — [`Transform`] for single-message transforms,
//! [`Source`] to read from the outside world, [`Sink`] to write to it — set up once from its
//! typed configuration. The matching macro ([`export_transform!`], [`export_source!`],
//! [`export_sink!`]) turns it into a WebAssembly component when built with
//! `cargo build --target wasm32-wasip2`, and [`testing`] runs the same logic natively in
//! `cargo test`. [`http`] makes outgoing requests the connector grants. A stateless transform
//! can be a single function exported with [`transform_fn!`], which writes the trait impl.
//!
//! # Object storage
//! A [`Sink`] may write objects to the bucket its connector grants (`storage:`) through
//! [`storage`]: [`storage::put`] for a whole object, [`storage::Upload`] to stream one in
//! pieces, both under [`storage::prefix`]. The host does the network work and waits for it
//! before committing offsets, so an object "accepted" is one that will be durable by the
//! commit. A sink whose objects span several flushes calls [`storage::hold`] in
//! [`Sink::flush`] for each partition whose object is still open, so the host commits only
//! records in complete objects. In `cargo test` the calls go to an in-memory store that
//! [`testing::stored_objects`], [`testing::flush`] and [`testing::take_holds`] inspect.
//!
//! # SQL
//! A [`Source`] may query the database its connector grants (`database:`) through [`sql`]:
//! [`sql::dialect`], [`sql::tables`] (the granted tables, their columns and primary keys) and
//! [`sql::query`] for one read-only query with parameters. The host holds the connection and
//! the credentials, refuses anything but a query on a granted table, and caps the rows a query
//! returns. Values come back as text ([`sql::RowSet`]) and go back as text ([`sql::Param`]),
//! so a timestamp or a decimal used as a cursor round-trips exactly. In `cargo test` the calls
//! go to the [`testing::FakeDatabase`] installed with [`testing::set_sql`].
//!
//! # Speed in WebAssembly
//! Built for WebAssembly, a plugin allocates with [talc](https://crates.io/crates/talc)
//! (feature `talc`, on by default): plugins allocate per record, and talc did it faster than
//! Rust's default allocator there (in one run of each, the Kafka Connect transforms 5-12 % per
//! record, pii-mask ~4 %). `default-features = false` keeps Rust's default, or lets a plugin
//! set a `#[global_allocator]` of its own; in a Cargo workspace every member that uses the SDK
//! must turn it off, since features are merged across the members built together. Calls and
//! loops cost more in WebAssembly than natively (the runtime checks the call's deadline at
//! every function entry and loop, which is how a plugin that loops is stopped), so more
//! inlining pays. Turnpike's built-in plugins build with `-C llvm-args=-inline-threshold=1000`
//! (`rustflags` in their workspace's `.cargo/config.toml`, which a plugin project may copy):
//! the JSON-reading Kafka Connect transforms ran 13-19 % faster per record with it, pii-mask 6 %.
//!
//! # Example
//! ```
//! use turnpike_sdk::prelude::*;
//!
//! /// Upper-cases every record value.
//! struct Upper;
//!
//! impl Transform for Upper {
//!     type Config = NoConfig;
//!     fn create(_: NoConfig) -> Result<Self, ConfigError> {
//!         Ok(Upper)
//!     }
//!     fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
//!         let upper = record.value().unwrap_or_default().to_ascii_uppercase();
//!         out.forward_with_value(record, upper);
//!         Ok(())
//!     }
//! }
//!
//! export_transform!(Upper);
//!
//! let result = turnpike_sdk::testing::run(&mut Upper, [TestRecord::value("hi")]).unwrap();
//! assert_eq!(result.outputs[0].value.as_deref(), Some(&b"HI"[..]));
//! ```
#![deny(missing_docs)]

/// The plugin's allocator in WebAssembly (feature `talc`, on by default). Plugins allocate
/// per record (parsed JSON, output values), and talc did that faster than Rust's default
/// (dlmalloc): see "Speed in WebAssembly" above.
/// `WasmDynamicTalc` is for single-threaded WebAssembly, which every Turnpike guest is.
#[cfg(all(feature = "talc", target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

mod config;
mod error;
mod function;
#[cfg(test)]
mod golden;
pub mod http;
mod layout;
pub mod log;
mod output;
mod passes;
mod record;
mod sink;
mod source;
pub mod sql;
pub mod storage;
pub mod testing;
mod transform;

#[doc(hidden)]
pub mod bindings;

pub use config::{parse_config, NoConfig};
pub use error::{ConfigError, ErrorKind, RecordError};
pub use function::{IntoOutputs, Unchanged};
pub use output::{NewRecord, Output, Outputs};
pub use record::{Batch, Record};
pub use turnpike_batch_layout::is_valid_topic_name;
pub use sink::Sink;
pub use source::{Polled, Source};
pub use testing::TestRecord;
pub use transform::Transform;

#[doc(hidden)]
pub mod __private {
    pub use crate::sink::SinkResource;
    pub use crate::source::SourceResource;
    pub use crate::transform::{run_batch, run_batch_forwarding, run_batch_lazy, run_batch_lazy_passing, run_batch_passing, LazyTransformResource, PassingTransformResource};
}

/// Everything a plugin usually needs.
pub mod prelude {
    pub use crate::{
        export_sink, export_source, export_transform, http, log, transform_fn, Batch, ConfigError, ErrorKind, NewRecord, NoConfig, Output, Polled,
        Record, RecordError, Sink, Source, TestRecord, Transform, Unchanged,
    };
    pub use serde::Deserialize;
    /// JSON values, for plugins that read and write JSON records.
    pub use serde_json::Value as Json;
}

/// Exports a [`Transform`] implementation as the plugin's transform.
///
/// Use it once, in the plugin crate's `lib.rs`, with `crate-type = ["cdylib"]`. It expands to
/// nothing off WebAssembly, so the same crate also links natively into tests and benchmarks.
#[macro_export]
macro_rules! export_transform {
    ($t:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __TurnpikeTransformPlugin;
            impl $crate::bindings::exports::turnpike::plugin::passing_transform::Guest for __TurnpikeTransformPlugin {
                type Transformer = $crate::__private::PassingTransformResource<$t>;
            }
            impl $crate::bindings::exports::turnpike::plugin::lazy_transform::Guest for __TurnpikeTransformPlugin {
                type Transformer = $crate::__private::LazyTransformResource<$t>;
            }
            $crate::bindings::export_transform_world!(__TurnpikeTransformPlugin with_types_in $crate::bindings);
        };
    };
}
