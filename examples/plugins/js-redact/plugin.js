import { Transform } from "./.turnpike/js/turnpike.js";

export default class Redact extends Transform {
  create(config) {
    this.field = config.field ?? "email";
  }

  process(record) {
    const data = record.json();
    if (this.field in data) data[this.field] = "***";
    return record.withValue(data);
  }
}
