//! The source's logic, natively: `cargo test`.

use rust_sequence_source::Sequence;
use turnpike_sdk::testing;

#[test]
fn counts_from_zero_then_resumes_right_after_the_stored_position() {
    let mut s: Sequence = testing::create_source(r#"{"name": "gen", "per_poll": 2}"#, None).unwrap();
    let polled = testing::poll(&mut s, 10).unwrap();
    assert_eq!(polled.len(), 2, "per_poll caps a poll");
    assert_eq!(polled[0].record.value.as_deref(), Some(&br#"{"n":0,"source":"gen"}"#[..]));
    assert_eq!(polled[1].position.as_deref(), Some(&b"1"[..]));

    let mut resumed: Sequence = testing::create_source(r#"{"name": "gen"}"#, Some(b"41")).unwrap();
    let polled = testing::poll(&mut resumed, 1).unwrap();
    assert_eq!(polled[0].record.key.as_deref(), Some(&b"42"[..]));
}

#[test]
fn stops_at_the_limit_and_refuses_bad_config() {
    let mut s: Sequence = testing::create_source(r#"{"name": "gen", "limit": 3}"#, None).unwrap();
    assert_eq!(testing::poll(&mut s, 100).unwrap().len(), 3);
    assert!(testing::poll(&mut s, 100).unwrap().is_empty());
    assert!(testing::create_source::<Sequence>(r#"{"name": ""}"#, None).is_err());
    assert!(testing::create_source::<Sequence>(r#"{"name": "gen", "per_poll": 0}"#, None).is_err());
}
