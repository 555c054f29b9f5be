//! Which protocol a consumer group runs, as the broker says (`consumer` for KIP-848, or
//! `classic`): a host reporting its own choice proves nothing about what the broker made of
//! its consumers. rdkafka has no wrapper for DescribeConsumerGroups, so this calls librdkafka.

#![allow(unsafe_code, reason = "librdkafka's DescribeConsumerGroups has no safe wrapper; see the safety comments")]

use std::ffi::{CStr, CString};

use anyhow::{bail, Result};
use rdkafka::admin::AdminClient;
use rdkafka::bindings as rd;
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;

/// How long the broker may take to answer.
const TIMEOUT_MS: i32 = 30_000;

/// The type of consumer group `group` on the test broker: `consumer`, `classic` or `unknown`;
/// an error for a group with no members.
/// Blocking: call it from a blocking thread or a test's synchronous part.
pub fn group_type(group: &str) -> Result<String> {
    let (kind, members) = describe(group)?;
    if members == 0 {
        bail!("the group has no members (it may not exist)");
    }
    Ok(kind)
}

/// How many members consumer group `group` has on the test broker now (0 for a group the
/// broker does not know). Blocking, as [`group_type`].
pub fn group_members(group: &str) -> Result<usize> {
    Ok(describe(group)?.1)
}

/// The group's type and member count, as the broker describes it.
fn describe(group: &str) -> Result<(String, usize)> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", crate::bootstrap()).create()?;
    let client = admin.inner().native_ptr();
    let group = CString::new(group)?;
    let mut groups = [group.as_ptr()];
    // SAFETY: the client is live while `admin` is; the queue is ours until destroyed below;
    // `groups` points at one NUL-terminated id alive for the call (librdkafka copies it);
    // null options mean the defaults.
    let queue = unsafe {
        let queue = rd::rd_kafka_queue_new(client);
        rd::rd_kafka_DescribeConsumerGroups(client, groups.as_mut_ptr(), groups.len(), std::ptr::null(), queue);
        queue
    };
    // SAFETY: polling our own queue; the event returned (if any) is ours to destroy.
    let event = unsafe { rd::rd_kafka_queue_poll(queue, TIMEOUT_MS) };
    let answer = if event.is_null() { Err(anyhow::anyhow!("the broker did not describe the group within {TIMEOUT_MS} ms")) } else { read_type(event) };
    // SAFETY: both are ours and not used after this.
    unsafe {
        if !event.is_null() {
            rd::rd_kafka_event_destroy(event);
        }
        rd::rd_kafka_queue_destroy(queue);
    }
    answer
}

/// The group type and member count in a DescribeConsumerGroups result event (which stays
/// the caller's).
fn read_type(event: *mut rd::rd_kafka_event_t) -> Result<(String, usize)> {
    // SAFETY: `event` is a live event; every pointer read from it lives as long as it does,
    // and the strings are NUL-terminated.
    unsafe {
        if rd::rd_kafka_event_error(event) != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            bail!("describing the group: {}", CStr::from_ptr(rd::rd_kafka_event_error_string(event)).to_string_lossy());
        }
        let result = rd::rd_kafka_event_DescribeConsumerGroups_result(event);
        if result.is_null() {
            bail!("the broker's answer was not a group description");
        }
        let mut count = 0usize;
        let groups = rd::rd_kafka_DescribeConsumerGroups_result_groups(result, &mut count);
        if count != 1 || groups.is_null() {
            bail!("{count} group descriptions for one group");
        }
        let description = *groups;
        let error = rd::rd_kafka_ConsumerGroupDescription_error(description);
        if !error.is_null() {
            bail!("describing the group: {}", CStr::from_ptr(rd::rd_kafka_error_string(error)).to_string_lossy());
        }
        // A group the broker does not have is described without an error, as an empty
        // classic group: callers that want a type refuse one without members.
        let members = rd::rd_kafka_ConsumerGroupDescription_member_count(description);
        let kind = match rd::rd_kafka_ConsumerGroupDescription_type(description) {
            rd::rd_kafka_consumer_group_type_t::RD_KAFKA_CONSUMER_GROUP_TYPE_CONSUMER => "consumer",
            rd::rd_kafka_consumer_group_type_t::RD_KAFKA_CONSUMER_GROUP_TYPE_CLASSIC => "classic",
            _ => "unknown",
        };
        Ok((kind.to_owned(), members))
    }
}
