//! Predicates in the chain: a stage runs only on the records its predicate selects, and the
//! others pass that stage unchanged, in their place in the batch. The plugin sees a batch of
//! just the selected records, so a predicate works with every plugin, in any language.

use turnpike_batch_layout::{InputView, OutputColumns, OutputRef, OutputView, OutputWriter};
use turnpike_config::{Problem, RecordFacts, RecordSelector, TransformStep};
use turnpike_runtime::{Fault, InputBatch, OutputBatch, RecordError};

/// The compiled predicate of a validated step (`None`: the step runs on every record).
pub(crate) fn selector(step: &TransformStep) -> Result<Option<RecordSelector>, Vec<Problem>> {
    step.predicate.as_ref().map(|p| p.compile("predicate")).transpose()
}

/// The indexes of the records of `batch` that `selector` selects, in order. `routed[i]` is the
/// topic an earlier stage sent record `i` to, if any: a predicate tests the topic a record
/// has now (as in Kafka Connect), not the one it was read from.
pub(crate) fn selected(selector: &RecordSelector, batch: &InputBatch, routed: &[Option<String>]) -> Vec<usize> {
    let view = InputView::new(batch);
    (0..view.len())
        .filter(|&i| {
            let topic = routed.get(i).and_then(Option::as_deref).unwrap_or_else(|| view.topic(i));
            selector.selects(RecordFacts { topic, header_names: view.headers(i).map(|(k, _)| k), value: view.value(i) })
        })
        .collect()
}

/// The stage's output for the whole of `batch`: the plugin's outputs for the records at
/// `picked` (`part`, whose input `k` is record `picked[k]`) and every other record passed on
/// unchanged, in the order of `batch`. Errors and faults are renumbered the same way.
pub(crate) fn merge(batch: &InputBatch, picked: &[usize], part: Option<OutputBatch>, poisoned: Vec<(u32, Fault)>) -> (OutputBatch, Vec<(u32, Fault)>) {
    let input = InputView::new(batch);
    let mut writer = OutputWriter::default();
    let mut errors = Vec::new();
    // The plugin's outputs, by the input they derive from, each group in the plugin's order.
    let mut by_input: Vec<Vec<usize>> = vec![Vec::new(); picked.len()];
    if let Some(part) = &part {
        for (j, p) in OutputView::new(part).iter().enumerate() {
            by_input[p.input as usize].push(j);
        }
    }
    let mut next_picked = 0;
    for i in 0..input.len() {
        if picked.get(next_picked) == Some(&i) {
            if let Some(part) = &part {
                let view = OutputView::new(part);
                for &j in &by_input[next_picked] {
                    let p = view.get(j);
                    let out = OutputRef { input: i as u32, key: p.key, value: p.value, timestamp: p.timestamp, topic: p.topic };
                    writer.push(out, view.headers(&p));
                }
            }
            next_picked += 1;
        } else {
            let r = input.record(i);
            writer.push(OutputRef { input: i as u32, key: r.key, value: r.value, timestamp: r.timestamp, topic: None }, input.headers(i));
        }
    }
    if let Some(part) = part {
        errors.extend(part.errors.into_iter().map(|e| RecordError { input: picked[e.input as usize] as u32, error: e.error }));
    }
    let poisoned = poisoned.into_iter().map(|(k, fault)| (picked[k as usize] as u32, fault)).collect();
    let OutputColumns { data, topics, records, timestamps, headers } = writer.finish();
    (OutputBatch { data, topics, records, timestamps, headers, errors }, poisoned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_config::Predicate;
    use crate::batches::subset;
    use turnpike_runtime::{BatchBuilder, ErrorKind, PluginError, RecordRef};

    fn batch() -> InputBatch {
        let mut b = BatchBuilder::default();
        for (offset, topic, value) in [(0, "a", Some(&b"0"[..])), (1, "b", Some(b"1")), (2, "a", None), (3, "b", Some(b"3"))] {
            b.push(RecordRef { key: None, value, timestamp: Some(offset * 10), topic, partition: 0, offset }, [("h", &b"x"[..])]);
        }
        b.finish()
    }

    fn selector(json: &str) -> RecordSelector {
        serde_json::from_str::<Predicate>(json).unwrap().compile("p").unwrap()
    }

    #[test]
    fn unselected_records_pass_unchanged_in_their_place() {
        let batch = batch();
        let picked = selected(&selector(r#"{"topic_matches": "b"}"#), &batch, &[]);
        assert_eq!(picked, [1, 3]);
        let routed = [Some("b".to_owned()), Some("a".to_owned()), None, None];
        assert_eq!(selected(&selector(r#"{"topic_matches": "b"}"#), &batch, &routed), [0, 3], "the topic an earlier stage routed to counts");
        let sub = subset(&batch, &picked);
        assert_eq!(InputView::new(&sub).offset(1), 3, "the subset keeps where its records came from");
        // The plugin upper-cases record 0 of the subset twice, drops record 1 and fails it.
        let mut w = OutputWriter::default();
        for _ in 0..2 {
            w.push(OutputRef { input: 0, key: None, value: Some(b"ONE"), timestamp: None, topic: Some("routed") }, []);
        }
        let OutputColumns { data, topics, records, timestamps, headers } = w.finish();
        let error = RecordError { input: 1, error: PluginError { kind: ErrorKind::InvalidRecord, message: "no".into() } };
        let part = OutputBatch { data, topics, records, timestamps, headers, errors: vec![error] };
        let (out, _) = merge(&batch, &picked, Some(part), Vec::new());
        let view = OutputView::new(&out);
        let got: Vec<_> = view.iter().map(|p| (p.input, p.value, p.timestamp, p.topic, view.headers(&p).count())).collect();
        assert_eq!(
            got,
            [(0, Some(&b"0"[..]), Some(0), None, 1), (1, Some(&b"ONE"[..]), None, Some("routed"), 0), (1, Some(&b"ONE"[..]), None, Some("routed"), 0), (2, None, Some(20), None, 1)]
        );
        assert_eq!(out.errors.iter().map(|e| e.input).collect::<Vec<_>>(), [3], "the error names the record in the whole batch");
    }

    #[test]
    fn nothing_selected_passes_everything() {
        let batch = batch();
        let picked = selected(&selector(r#"{"has_header": "nope"}"#), &batch, &[]);
        let (out, _) = merge(&batch, &picked, None, Vec::new());
        let values: Vec<_> = OutputView::new(&out).iter().map(|p| (p.input, p.value)).collect();
        assert_eq!(values, [(0, Some(&b"0"[..])), (1, Some(&b"1"[..])), (2, None), (3, Some(&b"3"[..]))]);
    }
}
