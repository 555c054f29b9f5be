// What carries an HTTP request: wasi:http in the component (plugged in by the glue), a test's
// responder natively (installed by testing.respondHttp), or nothing. Apart from http.js so
// that `http`, as plugins see it, offers only requests.

import { HttpError } from "./http.js";

// On globalThis so that two copies of the SDK in one test process (the test's own and the
// plugin's) share one responder.
const state = (globalThis[Symbol.for("turnpike-sdk.http")] ??= { transport: null, responder: null });

/** Plugs in the transport that carries requests (the component glue does). */
export function setTransport(send) {
  state.transport = send;
}

/** Sets (or, with null, removes) the native tests' responder. */
export function setResponder(responder) {
  state.responder = responder;
}

function respond(request) {
  if (state.responder === null) throw new HttpError("no HTTP responder installed (testing.respondHttp)", true);
  return state.responder(request);
}

/** The function that sends a request now. */
export function transport() {
  return state.transport ?? respond;
}
