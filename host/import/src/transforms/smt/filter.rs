//! Confluent's Filter SMT: its JsonPath condition becomes the step's `json_path` predicate
//! (Apache's Filter has no options and needs no converter).

use super::builder::Builder;

/// Confluent's `Filter$Value`: a `filter` step whose predicate is the condition, negated for
/// `include` (the filter drops what its predicate selects; include keeps what matches).
pub(super) fn confluent_filter(b: &mut Builder<'_>) -> Result<(), String> {
    let condition = b.take("filter.condition").ok_or("Filter needs `filter.condition`, which is not given")?;
    let kind = b.take("filter.type").map(|t| t.to_ascii_lowercase()).ok_or("Filter needs `filter.type` (include or exclude), which is not given")?;
    let include = match kind.as_str() {
        "include" => true,
        "exclude" => false,
        other => return Err(format!("filter.type {other:?} is not include or exclude")),
    };
    b.used("filter.condition", "— the step's predicate.json_path");
    b.used("filter.type", "— the step's predicate.negate (include: true, exclude: false)");
    if let Some(op) = [" =~ ", " in ", " nin ", " subsetof ", " anyof ", " noneof ", " size ", " empty ", ".length()"].iter().find(|op| condition.contains(**op)) {
        b.step
            .notes
            .push(format!("its filter.condition uses `{}`, which is Jayway JsonPath, not RFC 9535: rewrite it (e.g. `=~ /re/` as `search(@.x, 're')`), or the connector is refused", op.trim()));
    }
    // Turnpike never fails a record over the condition: a value without the field (or a null
    // value) is selected by no query, so `exclude` keeps it and `include` drops it.
    let kept = if include { "drops" } else { "keeps" };
    let same = if include { "exclude" } else { "include" };
    match b.take("missing.or.null.behavior").map(|m| m.to_ascii_lowercase()) {
        Some(m) if m == same => b.used("missing.or.null.behavior", "— the predicate's behaviour: a record without the field, or a null value, is never selected"),
        Some(m) => {
            b.step.skipped.push((
                "missing.or.null.behavior".into(),
                format!("{m:?} cannot be kept: with filter.type {kind}, Turnpike {kept} a record whose field is missing or whose value is null (as {same} would)"),
            ));
        }
        None => b.step.notes.push(format!("missing.or.null.behavior was not set, so Kafka Connect failed records whose field is missing or null; Turnpike {kept} them (as `{same}` would)")),
    }
    b.step.json_path = Some((condition, include));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::ok;

    #[test]
    fn confluent_filter_missing_behaviour() {
        let s = ok(CONFLUENT_FILTER_VALUE, &[("filter.condition", "$[?(@.a == 1)]"), ("filter.type", "include"), ("missing.or.null.behavior", "exclude")]);
        assert_eq!(s.json_path, Some(("$[?(@.a == 1)]".to_owned(), true)));
        assert!(s.skipped.is_empty());
        let s = ok(CONFLUENT_FILTER_VALUE, &[("filter.condition", "$[?(@.a == 1)]"), ("filter.type", "exclude"), ("missing.or.null.behavior", "fail")]);
        assert_eq!(s.json_path, Some(("$[?(@.a == 1)]".to_owned(), false)));
        assert_eq!(s.skipped[0].0, "missing.or.null.behavior");
    }

    const CONFLUENT_FILTER_VALUE: &str = "io.confluent.connect.transforms.Filter$Value";
}
