// Errors a plugin reports on purpose, and how they cross the component boundary.
//
// A RecordError or ConfigError is a plugin saying "no" on purpose; anything else escaping a
// plugin method is a fault (a bug), which the component turns into a trap, as a Rust panic.

/** This record cannot be processed: the connector's error policy applies to it alone. */
export const INVALID_RECORD = "invalid_record";
/** A transient failure (a service is busy or down): the host retries with backoff. */
export const RETRIABLE = "retriable";
/** The plugin cannot go on: the host fails the connector and shows the message. */
export const FATAL = "fatal";

const KINDS = [INVALID_RECORD, RETRIABLE, FATAL];

/** The WIT `error-kind` spelling of each kind. */
const WIT_KINDS = { [INVALID_RECORD]: "invalid-record", [RETRIABLE]: "retriable", [FATAL]: "fatal" };

// Brands rather than `instanceof` alone: a test may load the SDK twice (its own copy in
// node_modules and the one the plugin imports), and an error made by one copy must still be
// recognised by the other.
const RECORD_ERROR = Symbol.for("turnpike-sdk.RecordError");
const CONFIG_ERROR = Symbol.for("turnpike-sdk.ConfigError");

/**
 * A record (or a whole batch, poll, write or flush, when thrown from one) that failed on
 * purpose. `kind` tells the host what to do: INVALID_RECORD (the default), RETRIABLE or FATAL.
 */
export class RecordError extends Error {
  constructor(message, kind = INVALID_RECORD) {
    if (!KINDS.includes(kind)) {
      // A typo in a kind would otherwise silently become some other behaviour.
      throw new TypeError(`RecordError kind must be one of ${KINDS.map((k) => JSON.stringify(k)).join(", ")}, not ${JSON.stringify(kind)}`);
    }
    super(message);
    this.name = "RecordError";
    this.kind = kind;
  }

  /** The record is bad (the usual case). */
  static invalid(message) {
    return new RecordError(message, INVALID_RECORD);
  }

  /** A transient failure worth retrying. */
  static retriable(message) {
    return new RecordError(message, RETRIABLE);
  }

  /** The plugin cannot continue. */
  static fatal(message) {
    return new RecordError(message, FATAL);
  }

  /** So `instanceof RecordError` holds across two copies of the SDK. */
  static [Symbol.hasInstance](value) {
    // Subclasses keep the ordinary prototype check.
    if (this !== RecordError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return value !== null && typeof value === "object" && value[RECORD_ERROR] === true;
  }

  get [RECORD_ERROR]() {
    return true;
  }
}

/** A configuration `create` refuses. `key` names the offending key (a dotted path), if one. */
export class ConfigError extends Error {
  constructor(message, key = null) {
    super(message);
    this.name = "ConfigError";
    this.key = key ?? null;
  }

  /** So `instanceof ConfigError` holds across two copies of the SDK. */
  static [Symbol.hasInstance](value) {
    if (this !== ConfigError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return value !== null && typeof value === "object" && value[CONFIG_ERROR] === true;
  }

  get [CONFIG_ERROR]() {
    return true;
  }
}

/**
 * A RecordError from what a plugin method threw, or null for a fault. A ConfigError thrown
 * after `create` (a plugin validating lazily) is fatal: the configuration will not get better.
 */
export function recordErrorOf(e) {
  if (e instanceof RecordError) return e;
  if (e instanceof ConfigError) return RecordError.fatal(e.key ? `${e.key}: ${e.message}` : e.message);
  return null;
}

/** The WIT `plugin-error` of a RecordError. */
export function witError(e) {
  return { kind: WIT_KINDS[e.kind], message: String(e.message) };
}

/** A RecordError from a WIT `plugin-error` (the native testing helpers read batches back). */
export function fromWitError(e) {
  const kind = Object.keys(WIT_KINDS).find((k) => WIT_KINDS[k] === e.kind) ?? INVALID_RECORD;
  return new RecordError(e.message, kind);
}

/** The WIT `config-error` of anything `create` threw: a ConfigError keeps its key. */
export function witConfigError(e) {
  if (e instanceof ConfigError) return { key: e.key ?? undefined, message: String(e.message) };
  return { key: undefined, message: describe(e) };
}

/** `Name: message` of a thrown value, whatever it is. */
export function describe(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  try {
    return `a non-Error value: ${typeof e === "string" ? e : JSON.stringify(e)}`;
  } catch {
    return `a non-Error value: ${String(e)}`;
  }
}
