//! Per partition, the next offset to read: what a consumer commits once the records before
//! it are safely written.

use std::collections::BTreeMap;

/// Per partition, the next offset to read: what a commit records.
///
/// Keyed by topic, then partition, so that noting a record (once per record read) looks the
/// topic up by `&str` and allocates only for a topic not seen yet in this batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Offsets(BTreeMap<String, BTreeMap<i32, i64>>);

impl Offsets {
    /// Notes that the record at `offset` is done.
    pub fn done(&mut self, topic: &str, partition: i32, offset: i64) {
        let next = offset + 1;
        match self.0.get_mut(topic) {
            Some(partitions) => {
                let o = partitions.entry(partition).or_insert(next);
                *o = (*o).max(next);
            }
            None => {
                self.0.insert(topic.to_owned(), BTreeMap::from([(partition, next)]));
            }
        }
    }

    /// Sets a partition's next offset as given.
    fn set(&mut self, topic: &str, partition: i32, next: i64) {
        self.0.entry(topic.to_owned()).or_default().insert(partition, next);
    }

    /// Takes in offsets noted elsewhere (later ones win).
    pub fn merge(&mut self, other: &Offsets) {
        for (t, p, o) in other.iter() {
            self.done(t, p, o - 1);
        }
    }

    /// A partition's next offset, if noted.
    pub fn next(&self, topic: &str, partition: i32) -> Option<i64> {
        self.0.get(topic).and_then(|partitions| partitions.get(&partition)).copied()
    }

    /// Whether nothing is noted.
    pub fn is_empty(&self) -> bool {
        self.0.values().all(BTreeMap::is_empty)
    }

    /// `(topic, partition, next offset)` triples, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i32, i64)> {
        self.0.iter().flat_map(|(t, partitions)| partitions.iter().map(move |(p, o)| (t.as_str(), *p, *o)))
    }

    /// Drops the given partitions (revoked: their offsets are another consumer's now).
    pub fn forget(&mut self, partitions: &[(String, i32)]) {
        for (topic, partition) in partitions {
            if let Some(noted) = self.0.get_mut(topic) {
                noted.remove(partition);
                if noted.is_empty() {
                    self.0.remove(topic);
                }
            }
        }
    }

    /// Splits what was read at a sink's holds (`(topic, partition)` → the offset of its first
    /// record that is not durable yet): what may be committed now, with a held partition no
    /// further than its hold, and what stays to be committed later (the held partitions as
    /// read, when the hold is below that).
    pub fn split_at_holds(&self, holds: &BTreeMap<(String, i32), i64>) -> (Offsets, Offsets) {
        let (mut now, mut later) = (Offsets::default(), Offsets::default());
        for (topic, partition, read) in self.iter() {
            match holds.get(&(topic.to_owned(), partition)) {
                Some(&hold) if hold < read => {
                    now.set(topic, partition, hold.max(0));
                    later.set(topic, partition, read);
                }
                _ => now.set(topic, partition, read),
            }
        }
        (now, later)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_partition_commits_up_to_its_hold_and_stays_pending() {
        let mut read = Offsets::default();
        read.done("t", 0, 99);
        read.done("t", 1, 49);
        read.done("t", 2, 9);
        let holds = BTreeMap::from([(("t".to_owned(), 0), 40), (("t".to_owned(), 2), 10), (("u".to_owned(), 0), 5)]);
        let (now, later) = read.split_at_holds(&holds);
        assert_eq!(now.iter().collect::<Vec<_>>(), vec![("t", 0, 40), ("t", 1, 50), ("t", 2, 10)]);
        assert_eq!(later.iter().collect::<Vec<_>>(), vec![("t", 0, 100)]);
    }

    #[test]
    fn offsets_keep_the_next_offset_per_partition() {
        let mut o = Offsets::default();
        o.done("t", 0, 5);
        o.done("t", 0, 3);
        o.done("t", 1, 0);
        let mut other = Offsets::default();
        other.done("t", 0, 9);
        o.merge(&other);
        assert_eq!(o.iter().collect::<Vec<_>>(), [("t", 0, 10), ("t", 1, 1)]);
        o.done("s", 3, 7);
        assert_eq!(o.iter().collect::<Vec<_>>(), [("s", 3, 8), ("t", 0, 10), ("t", 1, 1)], "topics in order, then partitions");
        o.forget(&[("t".to_owned(), 0), ("t".to_owned(), 1), ("s".to_owned(), 3)]);
        assert!(o.is_empty(), "{o:?}");
        assert_eq!(o, Offsets::default(), "nothing left behind for a forgotten topic");
    }
}
