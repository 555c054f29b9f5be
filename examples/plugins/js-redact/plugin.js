import { Transform } from "turnpike-sdk";

/** Replaces one JSON field (config `field`, default `email`) with `***`. */
export default class Redact extends Transform {
  create(config) {
    this.field = config.field ?? "email";
  }

  transform(record) {
    const data = record.json();
    if (data === null || typeof data !== "object" || !(this.field in data)) return record;
    data[this.field] = "***";
    return record.withValue(data);
  }
}
