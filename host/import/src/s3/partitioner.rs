//! How objects are keyed (`partitioner.class` and what each partitioner takes), and the time
//! zone of time folders and scheduled rotation. Confluent's Daily and Hourly partitioners
//! become s3-sink's time partitioner with their path format written out.

use serde_json::json;

use super::Config;
use crate::ctx::{int, list, literal, Ctx};

const PARTITIONERS: &str = "io.confluent.connect.storage.partitioner.";

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Partitioner {
    Default,
    Field,
    Time,
}

pub(super) fn partitioner(ctx: &mut Ctx, c: &mut Config) -> Partitioner {
    const TIME_ONLY: &str = "only used by time-based partitioners; Kafka Connect ignored it here";
    let class = ctx.value("partitioner.class");
    let short = class.as_deref().map(|cl| cl.strip_prefix(PARTITIONERS).unwrap_or(cl).to_owned());
    let (kind, preset) = match short.as_deref() {
        None | Some("DefaultPartitioner") => (Partitioner::Default, None),
        Some("FieldPartitioner") => (Partitioner::Field, None),
        Some("TimeBasedPartitioner") => (Partitioner::Time, None),
        Some("DailyPartitioner") => (Partitioner::Time, Some(("'year'=YYYY/'month'=MM/'day'=dd", 86_400_000))),
        Some("HourlyPartitioner") => (Partitioner::Time, Some(("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000))),
        Some(other) => {
            ctx.skip("partitioner.class", format!("{other} is not a partitioner s3-sink has (default, field, time); objects are partitioned by Kafka partition (the default)"));
            (Partitioner::Default, None)
        }
    };
    // A time partitioner needs a path format s3-sink can write; without one it falls back.
    let path_format = match preset {
        Some((format, _)) => Some(format.to_owned()),
        None => ctx.value("path.format"),
    };
    let kind = match (kind, path_format.as_deref().map(check_path_format)) {
        (Partitioner::Time, Some(Err(why))) => {
            ctx.skip("partitioner.class", "its path.format cannot be written by s3-sink (below); objects are partitioned by Kafka partition (the default) instead");
            ctx.skip("path.format", why);
            Partitioner::Default
        }
        (Partitioner::Time, None) => {
            ctx.skip("partitioner.class", "TimeBasedPartitioner without path.format; objects are partitioned by Kafka partition (the default) instead");
            Partitioner::Default
        }
        (k, _) => k,
    };
    if let Some(short) = &short {
        if !ctx.is_handled("partitioner.class") {
            let name = match kind {
                Partitioner::Default => "default",
                Partitioner::Field => "field",
                Partitioner::Time => "time",
            };
            c.set(ctx, "partitioner.class", json!(name));
            if preset.is_some() {
                ctx.note(format!("{short} became partitioner.class time with its path.format and partition.duration.ms written out"));
            }
        }
    }
    match kind {
        Partitioner::Field => match ctx.value("partition.field.name").map(|v| list(&v)) {
            Some(fields) if !fields.is_empty() => c.set(ctx, "partition.field.name", json!(fields)),
            _ => ctx.note("FieldPartitioner needs partition.field.name: add it to the sink config before applying"),
        },
        _ => ctx.skip("partition.field.name", "only used by FieldPartitioner; Kafka Connect ignored it here"),
    }
    if kind == Partitioner::Time {
        let format = path_format.unwrap_or_default();
        match preset {
            Some((_, duration)) => {
                c.0.insert("path.format".into(), json!(format));
                c.0.insert("partition.duration.ms".into(), json!(duration));
                for option in ["path.format", "partition.duration.ms"] {
                    ctx.skip(option, "the Daily/HourlyPartitioner sets its own; Kafka Connect ignored it here");
                }
            }
            None => {
                c.set(ctx, "path.format", json!(literal(&format)));
                match ctx.value("partition.duration.ms").and_then(|v| int(&v)).filter(|n| *n > 0) {
                    Some(n) => c.set(ctx, "partition.duration.ms", json!(n)),
                    None => {
                        ctx.skip("partition.duration.ms", "not a number of milliseconds above 0");
                        ctx.note("a time partitioner needs partition.duration.ms (3600000 for hourly folders): add it to the sink config before applying");
                    }
                }
            }
        }
        extractor(ctx, c);
    } else {
        for option in ["path.format", "partition.duration.ms", "timestamp.extractor", "timestamp.field"] {
            ctx.skip(option, TIME_ONLY);
        }
    }
    ctx.skip("locale", "s3-sink's path.format writes numbers only, which no locale changes");
    kind
}

fn extractor(ctx: &mut Ctx, c: &mut Config) {
    let given = ctx.value("timestamp.extractor");
    let kind = match given.as_deref() {
        None => {
            c.0.insert("timestamp.extractor".into(), json!("Wallclock"));
            ctx.note(
                "timestamp.extractor is written as Wallclock, Confluent's default (s3-sink's own default is Record): Record, the Kafka timestamp, puts a record in the same folder every time it is read",
            );
            "Wallclock"
        }
        Some(e) if e.eq_ignore_ascii_case("Wallclock") => "Wallclock",
        Some(e) if e.eq_ignore_ascii_case("Record") => "Record",
        Some(e) if e.eq_ignore_ascii_case("RecordField") => "RecordField",
        Some(other) => {
            ctx.skip("timestamp.extractor", format!("{other} is not an extractor s3-sink has (Record, RecordField, Wallclock); s3-sink uses Record, the Kafka timestamp"));
            "Record"
        }
    };
    if given.is_some() && !ctx.is_handled("timestamp.extractor") {
        c.set(ctx, "timestamp.extractor", json!(kind));
    }
    match (kind, ctx.value("timestamp.field")) {
        ("RecordField", Some(field)) => c.set(ctx, "timestamp.field", json!(literal(&field))),
        ("RecordField", None) => ctx.note("timestamp.extractor RecordField needs timestamp.field: add it to the sink config before applying"),
        _ => ctx.skip("timestamp.field", "only used with timestamp.extractor RecordField; Kafka Connect ignored it here"),
    }
}

/// `UTC` or a fixed offset, which is all s3-sink's `timezone` takes.
pub(super) fn timezone(ctx: &mut Ctx, c: &mut Config) {
    let Some(zone) = ctx.value("timezone") else { return };
    let utc = ["UTC", "GMT", "Z", "Etc/UTC", "Etc/GMT", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu", "GMT0", "Etc/GMT0"];
    let offset = zone.strip_prefix("UTC").or_else(|| zone.strip_prefix("GMT")).unwrap_or(&zone);
    let fixed = match offset.as_bytes() {
        [s @ (b'+' | b'-'), h1, h2, b':', m1, m2] if [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()) => {
            Some(format!("{}{}{}:{}{}", *s as char, *h1 as char, *h2 as char, *m1 as char, *m2 as char))
        }
        [s @ (b'+' | b'-'), h1, h2, m1, m2] if [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()) => Some(format!("{}{}{}:{}{}", *s as char, *h1 as char, *h2 as char, *m1 as char, *m2 as char)),
        [s @ (b'+' | b'-'), h1, h2] if h1.is_ascii_digit() && h2.is_ascii_digit() => Some(format!("{}{}{}:00", *s as char, *h1 as char, *h2 as char)),
        [s @ (b'+' | b'-'), h] if h.is_ascii_digit() => Some(format!("{}0{}:00", *s as char, *h as char)),
        _ => None,
    };
    if utc.iter().any(|u| u.eq_ignore_ascii_case(&zone)) {
        c.set(ctx, "timezone", json!("UTC"));
    } else if let Some(fixed) = fixed {
        c.set(ctx, "timezone", json!(fixed));
    } else {
        ctx.skip("timezone", format!("{zone:?} is not supported: s3-sink takes UTC or a fixed offset like +02:00 (no daylight-saving rules); paths and schedules are in UTC"));
        ctx.note(format!("time folders and scheduled rotation are in UTC instead of {zone}: folder names and boundaries shift by the zone's offset"));
    }
}

/// Why s3-sink cannot write `format` (its path.format takes YYYY, yyyy, MM, dd, HH, mm, ss
/// and quoted text), if it cannot.
fn check_path_format(format: &str) -> Result<(), String> {
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            loop {
                match chars.next() {
                    Some('\'') if chars.peek() == Some(&'\'') => {
                        chars.next();
                    }
                    Some('\'') => break,
                    Some(_) => {}
                    None => return Err(format!("{format:?} has a quote that is not closed")),
                }
            }
        } else if c.is_ascii_alphabetic() {
            let mut run = c.to_string();
            while chars.peek() == Some(&c) {
                run.push(c);
                chars.next();
            }
            if !["YYYY", "yyyy", "MM", "dd", "HH", "mm", "ss"].contains(&run.as_str()) {
                return Err(format!("`{run}` in {format:?} is not supported: s3-sink's path.format takes YYYY, MM, dd, HH, mm, ss and text in single quotes"));
            }
        }
    }
    Ok(())
}
