//! The transform's logic, natively: `cargo test`.

use rust_redact::Redact;
use turnpike_sdk::testing::{self, TestRecord};

#[test]
fn redacts_the_field_and_fails_what_is_not_json() {
    let mut t = testing::create::<Redact>(r#"{"field": "email"}"#).unwrap();
    let out = testing::run(&mut t, [TestRecord::value(r#"{"email":"a@b.c","n":1}"#), TestRecord::value("nope")]).unwrap();
    assert_eq!(out.values(), [r#"{"email":"***","n":1}"#]);
    assert_eq!(out.errors[0].0, 1);
}

#[test]
fn a_misspelt_key_is_refused() {
    assert!(testing::create::<Redact>(r#"{"feild": "email"}"#).is_err());
}
