import { ConfigError, HttpError, RecordError, Transform, http } from "turnpike-sdk";

const KEYS = ["url", "field", "timeout"];

/**
 * Enriches JSON records: GETs `{url}/{record key}` and puts the JSON answer under `field`
 * (default `lookup`). A 404 leaves the record unchanged; a host the connector does not grant
 * stops the connector (retrying cannot help); any other failure is retried by the host.
 */
export default class Lookup extends Transform {
  create(config) {
    for (const key of Object.keys(config)) {
      // A misspelt key would otherwise be silently ignored.
      if (!KEYS.includes(key)) throw new ConfigError(`unknown key (expected one of ${KEYS.join(", ")})`, key);
    }
    try {
      http.checkUrl(config.url);
    } catch (e) {
      throw new ConfigError(config.url === undefined ? "required: the http:// or https:// URL to look keys up under" : e.message, "url");
    }
    this.url = config.url.replace(/\/+$/, "");
    this.field = config.field ?? "lookup";
    if (typeof this.field !== "string" || this.field === "") throw new ConfigError("name the field to put the answer under", "field");
    this.timeout = config.timeout ?? null;
    if (this.timeout !== null && !(typeof this.timeout === "number" && this.timeout > 0)) throw new ConfigError("expected seconds to wait for the service (a positive number)", "timeout");
  }

  transform(record) {
    const data = record.json();
    if (data === null || typeof data !== "object" || Array.isArray(data)) throw RecordError.invalid("the value is not a JSON object");
    const key = record.keyText();
    if (key === null) throw RecordError.invalid("the record has no key to look up");
    const url = `${this.url}/${encodeURIComponent(key)}`;
    let answer;
    try {
      answer = http.get(url, { headers: { accept: "application/json" }, timeout: this.timeout === null ? null : this.timeout * 1000 });
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      // Refused: the connector does not grant this host, and retrying cannot change that.
      throw e.refused ? RecordError.fatal(e.message) : RecordError.retriable(e.message);
    }
    if (answer.status === 404) return record;
    if (!answer.ok) throw RecordError.retriable(`${url} answered ${answer.status}`);
    try {
      data[this.field] = answer.json();
    } catch (e) {
      throw RecordError.retriable(`${url} answered something that is not JSON: ${e.message}`);
    }
    return record.withValue(data);
  }
}
