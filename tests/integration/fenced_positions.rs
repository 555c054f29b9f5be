//! A source's fenced position writer on the real broker: the writer its next owner opens
//! fences the one before, whose saves then fail for good, so a host that lost a source
//! cannot store a position over its successor's.

use std::sync::Arc;

use turnpike_kafka::{read_position, FencedPositions, KafkaError};
use turnpike_tests::{bootstrap, create_topic_with, unique};

#[tokio::test(flavor = "multi_thread")]
async fn a_newer_writer_fences_the_older_one() -> anyhow::Result<()> {
    let topic = unique("fenced-positions");
    create_topic_with(&topic, 1, &[("cleanup.policy", "compact")]).await?;
    let settings = vec![("bootstrap.servers".to_owned(), bootstrap())];
    let id = unique("turnpike-position-src");
    let (s, t, i) = (settings.clone(), topic.clone(), id.clone());
    tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        let old = FencedPositions::open(&s, &t, "src", &i)?;
        old.save(b"10")?;
        let new = FencedPositions::open(&s, &t, "src", &i)?;
        new.save(b"11")?;
        let refused = old.save(b"12").expect_err("the old writer is fenced");
        assert!(matches!(refused, KafkaError::Fenced(_)), "{refused}");
        assert!(refused.to_string().contains("runs on another host now"), "{refused}");
        let again = old.save(b"13").expect_err("and stays fenced");
        assert!(matches!(again, KafkaError::Fenced(_)), "{again}");
        new.save(b"14")?;
        let position = read_position(&s, &t, "src", Arc::default())?;
        assert_eq!(position.as_deref(), Some(&b"14"[..]), "only the new writer's saves count");
        Ok(())
    })
    .await??;
    Ok(())
}
