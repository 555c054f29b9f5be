//! Throughput beside trouble, on real Kafka: a neighbour connector keeps pace with its feed
//! while faulty plugins fail around it, and while another connector's plugin is hot-swapped.
//! Run them with `tests/run.sh`, which starts the broker.
//!
//! A test binary of its own: cargo runs test binaries one after another, so no other test of
//! the suite runs while these measure, and inside it one measurement runs at a time
//! ([`neighbour::one_at_a_time`]). Each compares what the neighbour wrote with what was fed to
//! it over the same window, so the verdict does not depend on how fast the machine is.

mod faults;
mod hot_swap;
mod neighbour;
