// The component's HTTP transport: a blocking client over wasi:http/outgoing-handler, as the
// Rust SDK's (sdk/rust/src/http.rs).
//
// Why not StarlingMonkey's `fetch`: under the host, a request the connector does not grant
// rejects `fetch` with a bare "NetworkError when attempting to fetch resource", the same as a
// connection refused, so a plugin could not tell "fix the grant" (stop) from "the server is
// down" (retry). wasi:http hands back the host's `error-code` (HTTP-request-denied,
// destination-IP-prohibited), and calling it directly keeps plugin methods synchronous.
//
// The generated bindings are passed in by the build's entry module (which imports
// `wasi:http/outgoing-handler` and `wasi:http/types`), so nothing here imports a module that
// only exists inside the component.

import { HttpError, Response, splitUrl } from "./http.js";

const encoder = new TextEncoder();
// componentize-js gives imported resources a disposer under this symbol; disposing a child
// resource (a stream, a pollable) before its parent is what wasi:http requires.
const dispose = Symbol.dispose || Symbol.for("dispose");

/** Error codes that mean the host refused the request (not granted, or internal address). */
const REFUSALS = new Set(["HTTP-request-denied", "destination-IP-prohibited"]);


/** `tag` and, if any, its payload, as text. */
function codeText(code) {
  if (code === null || typeof code !== "object" || !("tag" in code)) return String(code);
  if (code.val === undefined || code.val === null) return code.tag;
  return `${code.tag} (${typeof code.val === "object" ? JSON.stringify(code.val, (_, v) => (typeof v === "bigint" ? String(v) : v)) : code.val})`;
}

/** Why the host refuses, per refusal code (its log, and the connector's error, say more). */
const REFUSAL_ADVICE = {
  "HTTP-request-denied": "the connector's http.allow list does not grant this host and port",
  "destination-IP-prohibited": "it resolves to an internal address, which only a grant naming that address itself reaches",
};

/** The HttpError of a wasi:http `error-code`. */
function codeError(request, code) {
  if (code && REFUSALS.has(code.tag)) {
    return new HttpError(`${request.method} ${request.url} refused by the host (${code.tag}): ${REFUSAL_ADVICE[code.tag]}`, true);
  }
  return new HttpError(`${request.method} ${request.url} failed: ${codeText(code)}`);
}

/** The payload of an error a generated import threw (a result's `err`). */
const payloadOf = (e) => (e !== null && typeof e === "object" && "payload" in e ? e.payload : e);

const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"];

function method(name) {
  return METHODS.includes(name) ? { tag: name.toLowerCase() } : { tag: "other", val: name };
}

/** Calls a generated import that returns `result`, turning its `err` into an HttpError. */
function attempt(what, fn) {
  try {
    return fn();
  } catch (e) {
    throw new HttpError(`${what}: ${codeText(payloadOf(e))}`);
  }
}

/**
 * The `send` of http.js over wasi:http. `handle` is `wasi:http/outgoing-handler`'s, `types`
 * the `wasi:http/types` module of the generated bindings.
 */
export function wasiTransport({ handle, types }) {
  const { Fields, OutgoingRequest, OutgoingBody, IncomingBody, RequestOptions } = types;
  return function send(request) {
    const [scheme, authority, path] = splitUrl(request.url);
    const entries = request.headers.map(([k, v]) => [k.toLowerCase(), encoder.encode(v)]);
    // A known length rather than chunked encoding, which not every endpoint accepts.
    if (request.body.length > 0 && request.header("content-length") === null) entries.push(["content-length", encoder.encode(String(request.body.length))]);
    const headers = attempt("bad request header", () => Fields.fromList(entries));
    const outgoing = new OutgoingRequest(headers);
    attempt(`${request.url} is not a valid request`, () => {
      outgoing.setMethod(method(request.method));
      outgoing.setScheme({ tag: scheme === "https" ? "HTTPS" : "HTTP" });
      outgoing.setAuthority(authority);
      outgoing.setPathWithQuery(path);
    });
    const body = attempt("request body unavailable", () => outgoing.body());
    const options = new RequestOptions();
    if (request.timeout !== null && request.timeout !== undefined) {
      const nanos = BigInt(Math.max(0, Math.round(request.timeout * 1e6)));
      attempt("bad timeout", () => {
        options.setFirstByteTimeout(nanos);
        options.setBetweenBytesTimeout(nanos);
      });
    }
    // Sent first, so the host reads the body while it is written.
    let pending;
    try {
      pending = handle(outgoing, options);
    } catch (e) {
      body[dispose]?.();
      throw codeError(request, payloadOf(e));
    }
    // A refused or failed request closes the body stream, possibly before the whole body is
    // written: the error code the response then carries says why, so it takes precedence
    // over the write's bare "closed".
    let writeError = null;
    try {
      const out = body.write();
      try {
        for (let at = 0; at < request.body.length; at += 4096) out.blockingWriteAndFlush(request.body.subarray(at, at + 4096));
      } finally {
        out[dispose]?.();
      }
    } catch (e) {
      writeError = new HttpError(`${request.method} ${request.url}: writing the request body failed: ${codeText(payloadOf(e))}`);
    }
    if (writeError === null) {
      try {
        OutgoingBody.finish(body, undefined);
      } catch (e) {
        writeError = codeError(request, payloadOf(e));
      }
    } else {
      body[dispose]?.();
    }
    const ready = pending.subscribe();
    ready.block();
    ready[dispose]?.();
    const got = pending.get();
    pending[dispose]?.();
    // option<result<result<incoming-response, error-code>>>
    if (got !== undefined && got !== null && got.tag === "ok" && got.val.tag === "err") throw codeError(request, got.val.val);
    if (writeError !== null) {
      if (got?.tag === "ok") got.val.val[dispose]?.();
      throw writeError;
    }
    if (got === undefined || got === null || got.tag !== "ok") throw new HttpError(`${request.url}: the response was already taken`);
    return readResponse(request, got.val.val, IncomingBody);
  };
}

/** Status, headers and the whole body of an incoming response. */
function readResponse(request, response, IncomingBody) {
  const status = response.status();
  const fields = response.headers();
  const headers = fields.entries();
  fields[dispose]?.();
  const incoming = attempt("response body unavailable", () => response.consume());
  const stream = attempt("response body stream unavailable", () => incoming.stream());
  const chunks = [];
  let size = 0;
  try {
    for (;;) {
      let chunk;
      try {
        chunk = stream.blockingRead(65536n);
      } catch (e) {
        const p = payloadOf(e);
        if (p && p.tag === "closed") break;
        const detail = p && p.tag === "last-operation-failed" && p.val && typeof p.val.toDebugString === "function" ? p.val.toDebugString() : codeText(p);
        throw new HttpError(`${request.method} ${request.url}: reading the response failed: ${detail}`);
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    stream[dispose]?.();
  }
  IncomingBody.finish(incoming)[dispose]?.();
  response[dispose]?.();
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return new Response(status, { headers, body });
}
