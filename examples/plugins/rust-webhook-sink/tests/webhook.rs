//! The sink's logic, natively: `cargo test`, the endpoint answered by a responder.

use std::cell::RefCell;
use std::rc::Rc;

use rust_webhook_sink::Webhook;
use turnpike_sdk::http::{HttpError, Response};
use turnpike_sdk::testing::{self, TestRecord};

fn answering(status: u16, seen: Rc<RefCell<Vec<serde_json::Value>>>) {
    testing::respond_http(move |request| {
        seen.borrow_mut().push(serde_json::from_slice(&request.body).unwrap());
        Ok(Response { status, headers: Vec::new(), body: Vec::new() })
    });
}

#[test]
fn posts_the_buffer_at_flush_and_keeps_it_while_the_endpoint_fails() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut sink: Webhook = testing::create_sink(r#"{"url": "http://hooks.example/in"}"#).unwrap();
    testing::write(&mut sink, [TestRecord::value("a"), TestRecord::value("b")]).unwrap();
    assert!(seen.borrow().is_empty(), "nothing sent before the flush");

    answering(503, seen.clone());
    let failed = testing::flush(&mut sink).unwrap_err();
    assert_eq!(failed.kind, turnpike_sdk::ErrorKind::Retriable);

    answering(200, seen.clone());
    testing::flush(&mut sink).unwrap();
    let posts = seen.borrow();
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[1], posts[0], "the same records again after the failure");
    assert_eq!(posts[1].as_array().unwrap().len(), 2);
    assert_eq!(posts[1][1]["value"], "b");
}

#[test]
fn a_refused_endpoint_is_fatal_and_a_bad_url_is_a_config_error() {
    testing::respond_http(|_| Err(HttpError { message: "not in http.allow".into(), refused: true }));
    let mut sink: Webhook = testing::create_sink(r#"{"url": "http://hooks.example/in"}"#).unwrap();
    testing::write(&mut sink, [TestRecord::value("a")]).unwrap();
    assert_eq!(testing::flush(&mut sink).unwrap_err().kind, turnpike_sdk::ErrorKind::Fatal);
    assert!(testing::create_sink::<Webhook>(r#"{"url": "ftp://x"}"#).is_err());
}
