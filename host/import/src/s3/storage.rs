//! The connector's `storage:` grant: bucket, region, endpoint, path style, part size, and the
//! AWS credentials, which are written as references (or the host's chain), never as values.

use serde_json::{json, Map, Value};

use crate::ctx::{boolean, int, Ctx};

/// `storage:` from the bucket, region, endpoint and credentials.
pub(super) fn storage(ctx: &mut Ctx) -> Option<Value> {
    let Some(bucket) = ctx.value("s3.bucket.name") else {
        ctx.note("the config names no s3.bucket.name: add `storage: {bucket: …}` to the connector before applying (s3-sink writes nothing without it)");
        return None;
    };
    let mut s = Map::new();
    s.insert("bucket".into(), json!(bucket));
    ctx.map("s3.bucket.name", "storage.bucket");
    match ctx.value("s3.region") {
        Some(region) => {
            s.insert("region".into(), json!(region));
            ctx.map("s3.region", "storage.region");
        }
        None => {
            s.insert("region".into(), json!("us-west-2"));
            ctx.note("storage.region is us-west-2, Confluent's default, since s3.region was not given");
        }
    }
    let mut endpoint = None;
    if let Some(url) = ctx.value("store.url") {
        let authority = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")).map(|rest| rest.trim_end_matches('/'));
        match authority {
            Some(a) if !a.is_empty() && !a.contains(['/', '?', '#', '@']) => {
                let url = url.trim_end_matches('/').to_owned();
                s.insert("endpoint".into(), json!(url));
                ctx.map("store.url", "storage.endpoint");
                endpoint = Some(url);
            }
            _ => ctx.skip("store.url", "not an http:// or https:// URL of a host and port only; write storage.endpoint by hand"),
        }
    }
    match ctx.value("s3.path.style.access.enabled").as_deref().map(boolean) {
        Some(Some(on)) => {
            if on {
                s.insert("path_style".into(), json!(true));
            }
            ctx.map("s3.path.style.access.enabled", "storage.path_style");
        }
        Some(None) => ctx.skip("s3.path.style.access.enabled", "not true or false"),
        None if endpoint.is_some() => {
            s.insert("path_style".into(), json!(true));
            ctx.note("storage.path_style is true, Confluent's default, for the store at store.url");
        }
        None => {}
    }
    credentials(ctx, &mut s, endpoint.as_deref());
    if let Some(text) = ctx.value("s3.part.size") {
        const MIB: i64 = 1 << 20;
        match int(&text).map(|b| (b + MIB - 1) / MIB).filter(|m| (5..=512).contains(m)) {
            Some(mib) => {
                s.insert("part_size_mib".into(), json!(mib));
                ctx.map("s3.part.size", "storage.part_size_mib");
                if 2 * mib > 64 {
                    s.insert("max_buffered_mib".into(), json!(2 * mib));
                    ctx.note(format!("storage.max_buffered_mib is {}, two parts of {mib} MiB, the least the host allows", 2 * mib));
                }
            }
            None => ctx.skip("s3.part.size", "Turnpike's part size is 5 to 512 MiB (storage.part_size_mib); the default, 8 MiB, applies"),
        }
    }
    Some(Value::Object(s))
}

fn credentials(ctx: &mut Ctx, s: &mut Map<String, Value>, endpoint: Option<&str>) {
    const ID: &str = "aws.access.key.id";
    const SECRET: &str = "aws.secret.access.key";
    const PROVIDER: &str = "s3.credentials.provider.class";
    let id = ctx.value(ID);
    let secret = ctx.value(SECRET);
    match (id, secret) {
        (Some(id), Some(secret)) => {
            let id_ref = ctx.credential(ID, &id, "aws-access-key-id", "the AWS access key id");
            let secret_ref = ctx.credential(SECRET, &secret, "aws-secret-access-key", "the AWS secret access key");
            s.insert("credentials".into(), json!({"access_key_id": id_ref, "secret_access_key": secret_ref}));
            ctx.map(ID, "storage.credentials.access_key_id (a reference)");
            ctx.map(SECRET, "storage.credentials.secret_access_key (a reference)");
            ctx.skip(PROVIDER, "the static keys are used, as Kafka Connect used them");
        }
        (one, other) => {
            if one.is_some() || other.is_some() {
                for key in [ID, SECRET] {
                    ctx.skip(key, "needs both aws.access.key.id and aws.secret.access.key; the host's AWS credential chain is used instead");
                }
            }
            match ctx.value(PROVIDER).as_deref() {
                Some("com.amazonaws.auth.DefaultAWSCredentialsProviderChain" | "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider") => {
                    ctx.map(PROVIDER, "— the host's AWS credential chain, Turnpike's default");
                }
                Some(_) => ctx.skip(
                    PROVIDER,
                    "Turnpike signs with the host's AWS credential chain (environment, profile, web identity, instance role) or static keys given by reference; a provider class is not supported",
                ),
                None => {}
            }
            let on_this_machine = endpoint.is_none_or(|e| {
                let host = e.split_once("://").map_or(e, |(_, r)| r);
                host.starts_with("localhost") || host.starts_with("127.") || host.starts_with("[::1]")
            });
            if !on_this_machine {
                // The host's own AWS credentials never sign for a store a connector names; the
                // Confluent connector's default chain read these variables.
                s.insert("credentials".into(), json!({"access_key_id": "${env:AWS_ACCESS_KEY_ID}", "secret_access_key": "${env:AWS_SECRET_ACCESS_KEY}"}));
                ctx.note(
                    "the store at store.url needs credentials given in the connector: they are read from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY on the Turnpike host, \
as Confluent's default chain read them (or store them as secrets and write ${secret:NAME})",
                );
            }
        }
    }
    for key in ctx.open_keys("s3.credentials.provider.") {
        ctx.skip(&key, "Turnpike has no credential provider classes (no assumed role named in the connector): the host's AWS credential chain or static keys by reference");
    }
}
