import { ConfigError, Record, Source, emit } from "turnpike-sdk";

const KEYS = ["name", "limit", "per_poll"];

/** An optional whole number of at least `least` (`fallback` when absent). */
function count(config, key, fallback, least) {
  const value = config[key] ?? fallback;
  if (value === null) return null;
  if (!Number.isSafeInteger(value) || value < least) throw new ConfigError(`expected a whole number of at least ${least}, got ${JSON.stringify(value)}`, key);
  return value;
}

/**
 * Counts 0, 1, 2, …: one `{"n": i, "source": name}` record (key `String(i)`) per number. The
 * position after record i is `String(i)`, so a restarted connector carries on right after the
 * last number Kafka stored: nothing missing, at most the unacknowledged tail produced again.
 */
export default class Sequence extends Source {
  create(config, position) {
    for (const key of Object.keys(config)) {
      // A misspelt key would otherwise be silently ignored.
      if (!KEYS.includes(key)) throw new ConfigError(`unknown key (expected one of ${KEYS.join(", ")})`, key);
    }
    if (typeof config.name !== "string" || config.name === "") throw new ConfigError("name this sequence (text), e.g. name: orders", "name");
    this.name = config.name;
    this.limit = count(config, "limit", null, 0);
    this.perPoll = count(config, "per_poll", 100, 1);
    this.next = 0;
    if (position !== null) {
      const text = new TextDecoder().decode(position);
      // A position this plugin did not write cannot be resumed from: say so rather than guess.
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new ConfigError(`the stored position ${JSON.stringify(text)} is not a number this source wrote`);
      this.next = Number(text) + 1;
    }
  }

  poll(maxRecords) {
    let n = Math.min(maxRecords, this.perPoll);
    if (this.limit !== null) n = Math.max(0, Math.min(n, this.limit - this.next));
    const items = [];
    for (let i = this.next; i < this.next + n; i++) {
      items.push(emit(new Record({ n: i, source: this.name }, { key: String(i) }), String(i)));
    }
    this.next += n;
    return items;
  }
}
