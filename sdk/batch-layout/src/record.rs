//! The records the writers take and the views hand out, borrowed from wherever they live.

/// One input record: as consumed from Kafka, or polled from a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// `None` for a null value (a tombstone).
    pub value: Option<&'a [u8]>,
    /// Milliseconds since the epoch.
    pub timestamp: Option<i64>,
    /// Source topic.
    pub topic: &'a str,
    /// Source partition.
    pub partition: i32,
    /// Source offset.
    pub offset: i64,
}

/// One output record of a transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputRef<'a> {
    /// Index of the input record it derives from.
    pub input: u32,
    /// `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// `None` for a tombstone.
    pub value: Option<&'a [u8]>,
    /// `None` lets the producer stamp it.
    pub timestamp: Option<i64>,
    /// The destination the plugin chose; `None` for the connector's output topic.
    pub topic: Option<&'a str>,
}

/// One record a source read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceRef<'a> {
    /// `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// `None` for a tombstone.
    pub value: Option<&'a [u8]>,
    /// `None` lets the producer stamp it.
    pub timestamp: Option<i64>,
    /// The destination the source chose; `None` for the connector's output topic.
    pub topic: Option<&'a str>,
    /// The source's position after this record; `None` if it does not move the position.
    pub position: Option<&'a [u8]>,
}

/// Where an input record came from. Every later stage's input derived from it keeps it, for
/// offsets and error reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// Index into the batch's `topics`.
    pub topic: u32,
    /// Partition.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
}
