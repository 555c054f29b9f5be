import { ConfigError, HttpError, RecordError, Sink, http } from "turnpike-sdk";

const KEYS = ["url", "timeout"];

/**
 * Buffers records in `write` and, in `flush`, POSTs them to `url` as one JSON array of
 * `{"topic", "partition", "offset", "key", "value"}` (key and value as text). The host
 * commits offsets only after a flush succeeds, so the buffer is kept until the webhook has
 * answered 2xx: a failed flush is retried with the same records (at least once delivery).
 */
export default class Webhook extends Sink {
  create(config) {
    for (const key of Object.keys(config)) {
      // A misspelt key would otherwise be silently ignored.
      if (!KEYS.includes(key)) throw new ConfigError(`unknown key (expected one of ${KEYS.join(", ")})`, key);
    }
    try {
      http.checkUrl(config.url);
    } catch (e) {
      throw new ConfigError(config.url === undefined ? "required: the http:// or https:// URL to POST records to" : e.message, "url");
    }
    this.url = config.url;
    this.timeout = config.timeout ?? null;
    if (this.timeout !== null && !(typeof this.timeout === "number" && this.timeout > 0)) throw new ConfigError("expected seconds to wait for the webhook (a positive number)", "timeout");
    this.buffer = [];
  }

  write(records) {
    for (const r of records) {
      this.buffer.push({ topic: r.topic, partition: r.partition, offset: r.offset, key: r.keyText(), value: r.value === null ? null : r.text() });
    }
  }

  flush() {
    if (this.buffer.length === 0) return;
    let answer;
    try {
      answer = http.post(this.url, this.buffer, { timeout: this.timeout === null ? null : this.timeout * 1000 });
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      // Refused: the connector does not grant this host; retrying cannot help.
      if (e.refused) throw RecordError.fatal(e.message);
      throw RecordError.retriable(e.message);
    }
    if (!answer.ok) throw RecordError.retriable(`${this.url} answered ${answer.status}`);
    this.buffer = [];
  }
}
