// Outgoing HTTP from a plugin, blocking and small, as the Rust SDK's `turnpike_sdk::http`.
//
// The host refuses every request unless the connector lists the host in its `http.allow`
// grant (and refuses private, loopback and link-local addresses unless the grant names the
// address itself); a refusal throws HttpError with `refused` true, never a trap. Calls block
// (the component calls wasi:http synchronously), so plugin methods stay synchronous.
//
// This module imports nothing component-only, so it loads under plain node: the component
// glue plugs in the wasi:http transport (wasi-http.js), and natively requests go to the
// responder a test installs with `testing.respondHttp`.

import { toBytes } from "./record.js";
import { transport } from "./http-transport.js";

const decoder = new TextDecoder();
const HTTP_ERROR = Symbol.for("turnpike-sdk.HttpError");

/**
 * A request that got no response. `refused` is true when the host refused it (not in the
 * connector's `http.allow`, or an internal address): retrying will not help until the grant
 * changes. Any status code, 404 or 500 included, is a Response, not an HttpError.
 */
export class HttpError extends Error {
  constructor(message, refused = false) {
    super(message);
    this.name = "HttpError";
    this.refused = Boolean(refused);
  }

  /** So `instanceof HttpError` holds across two copies of the SDK. */
  static [Symbol.hasInstance](value) {
    if (this !== HttpError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return value !== null && typeof value === "object" && value[HTTP_ERROR] === true;
  }

  get [HTTP_ERROR]() {
    return true;
  }
}

/** `[name, value]` pairs from an object or pairs. */
function headerPairs(headers) {
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers ?? {});
  return pairs.map(([k, v]) => [String(k), v]);
}

/** Whether a body is sent as JSON (not bytes or text). */
const isJson = (body) => body !== null && body !== undefined && typeof body !== "string" && !ArrayBuffer.isView(body) && !(body instanceof ArrayBuffer);

function firstHeader(headers, name) {
  const found = headers.find(([k]) => k.toLowerCase() === name.toLowerCase());
  return found ? found[1] : null;
}

/**
 * An HTTP request: `method` (GET, POST…), `url` (`http://host[:port]/path?query` or
 * `https://…`), `headers` (`[name, text]` pairs; an object is accepted), `body` (Uint8Array;
 * text is UTF-8, any other value is sent as JSON with `content-type: application/json` unless
 * the headers name one) and `timeout` (milliseconds to wait for the response, or null; the
 * host clamps it to the connector's maximum).
 */
export class Request {
  constructor(method, url, { headers = [], body = null, timeout = null } = {}) {
    this.method = String(method).toUpperCase();
    this.url = url;
    this.headers = headerPairs(headers).map(([k, v]) => [k, String(v)]);
    if (isJson(body) && this.header("content-type") === null) this.headers.push(["content-type", "application/json"]);
    this.body = toBytes(body) ?? new Uint8Array();
    this.timeout = timeout ?? null;
  }

  /** The first value of header `name` (case-insensitive), or null. */
  header(name) {
    return firstHeader(this.headers, name);
  }

  /** The body as UTF-8 text (a test's responder reads what was sent). */
  text() {
    return decoder.decode(this.body);
  }

  /** The body parsed as JSON. */
  json() {
    return JSON.parse(this.text());
  }
}

/**
 * An HTTP response, body read in full: `status`, `headers` (`[lower-case name, Uint8Array]`
 * pairs) and `body` (Uint8Array; a test's responder may give text or a JSON-able value).
 */
export class Response {
  constructor(status, { headers = [], body = null } = {}) {
    this.status = Number(status);
    this.headers = headerPairs(headers).map(([k, v]) => [k.toLowerCase(), toBytes(v) ?? new Uint8Array()]);
    this.body = toBytes(body) ?? new Uint8Array();
  }

  /** Whether the status is 2xx. */
  get ok() {
    return this.status >= 200 && this.status < 300;
  }

  /** The first value of header `name` (case-insensitive) as text, or null. */
  header(name) {
    const value = firstHeader(this.headers, name);
    return value === null ? null : decoder.decode(value);
  }

  /** The body as UTF-8 text (undecodable bytes replaced). */
  text() {
    return decoder.decode(this.body);
  }

  /** The body parsed as JSON (a SyntaxError if it is not: decide what that means). */
  json() {
    return JSON.parse(this.text());
  }
}

/**
 * `[scheme, authority, pathWithQuery]` of an `http://` or `https://` URL, split as the Rust
 * SDK splits it; HttpError (not refused) for anything else.
 */
export function splitUrl(url) {
  const bad = () => new HttpError(`${JSON.stringify(url)} is not an http:// or https:// URL`);
  if (typeof url !== "string") throw bad();
  const sep = url.indexOf("://");
  if (sep < 0) throw bad();
  const scheme = url.slice(0, sep);
  const rest = url.slice(sep + 3);
  if (scheme !== "http" && scheme !== "https") throw bad();
  const cuts = [rest.indexOf("/"), rest.indexOf("?")].filter((i) => i >= 0);
  const cut = cuts.length ? Math.min(...cuts) : -1;
  const authority = cut < 0 ? rest : rest.slice(0, cut);
  const path = cut < 0 ? "/" : rest.slice(cut);
  if (!authority) throw bad();
  return [scheme, authority, path];
}

/** Throws HttpError unless `send` would accept `url`, so a plugin can refuse a bad URL in
 * `create` (as a ConfigError) rather than at the first request. */
export function checkUrl(url) {
  splitUrl(url);
}

/** A Response from what a transport or responder returned. */
function asResponse(r) {
  if (r instanceof Response) return r;
  if (r !== null && typeof r === "object" && Number.isInteger(r.status)) return new Response(r.status, r);
  throw new TypeError(`the HTTP responder returned ${r === null ? "null" : typeof r}, not a Response`);
}

/**
 * Sends `request` (a Request, or `{method, url, headers, body, timeout}`) and reads the whole
 * response. Throws HttpError when no response came (refused, unreachable, timed out).
 */
export function send(request) {
  if (!(request instanceof Request)) request = new Request(request.method ?? "GET", request.url, request);
  splitUrl(request.url);
  return asResponse(transport()(request));
}

/** `GET url`. Options: `headers`, `timeout` (ms). */
export function get(url, { headers = [], timeout = null } = {}) {
  return send(new Request("GET", url, { headers, timeout }));
}

/** `POST body to url` (bytes, text, or a JSON-able value sent as JSON). Options: `headers`,
 * `timeout` (ms). */
export function post(url, body, { headers = [], timeout = null } = {}) {
  return send(new Request("POST", url, { headers, body, timeout }));
}
