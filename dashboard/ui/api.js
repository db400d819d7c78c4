// The JSON API's client: every request carries the tab's token when there is one, and
// every write the header the API demands against cross-site requests.

export const WriteHeader = "X-Olmsync-Request";
const key = "olmsync.token";

export function token() { return sessionStorage.getItem(key) || ""; }
export function setToken(t) { if (t) sessionStorage.setItem(key, t); else sessionStorage.removeItem(key); }

// api fetches a path of the API and returns its JSON; an answer other than 200 throws an
// Error with the API's message and the status.
export async function api(path, opts = {}) {
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = "Bearer " + token();
  if (opts.method && opts.method !== "GET") headers[WriteHeader] = "1";
  const resp = await fetch(path, { method: opts.method || "GET", headers });
  let body = null;
  try { body = await resp.json(); } catch { body = null; }
  if (!resp.ok) {
    const err = new Error((body && body.error) || `${resp.status} ${resp.statusText}`);
    err.status = resp.status;
    throw err;
  }
  return body;
}
