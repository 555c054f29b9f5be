//! The plugins the tests need and users never get (`tests/components`): `faulty` (traps,
//! loops, leaks on request), `tagger` (tags records, routes them), `wrong_world` (implements
//! no Turnpike world), `partition_sink` (records what it was given, per partition), `store_probe`
//! and `half_filter` (forwards every record at an even offset: the benchmark's filter).
//! Compiled by the build script and embedded, like the built-ins.

include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));

/// The fixture whose library name is `name` (`faulty`, `tagger`, `wrong_world`,
/// `partition_sink`).
pub fn get(name: &str) -> Option<&'static [u8]> {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, bytes)| *bytes)
}
