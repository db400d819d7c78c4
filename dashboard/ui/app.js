// olmsync dashboard: a page of the JSON API under /api/v1/, no build step. The route and
// the list's filters live in the URL's hash (#/?health=Degraded, #/syncs/ns/name), so a
// view can be bookmarked and shared. Changes arrive on /api/v1/stream and re-read the view.

import { api, token, setToken, WriteHeader } from "./api.js";
import { renderList } from "./list.js";
import { renderSync, renderFile } from "./sync.js";
import { el, clear } from "./dom.js";

const main = document.getElementById("main");
const message = document.getElementById("message");

// say shows a message above the page: kind is "", "ok" or "error".
export function say(text, kind = "") {
  message.textContent = text;
  message.className = kind;
  message.hidden = !text;
}

// route reads the hash: the path's parts and the query.
function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(query || "") };
}

let rendering = null;
// render draws the view of the current route; a failed read says why, and a 401 asks
// for a token.
export async function render() {
  const r = route();
  const run = (async () => {
    try {
      if (r.parts[0] === "syncs" && r.parts.length >= 3) {
        if (r.parts[3] === "file") {
          await renderFile(main, r.parts[1], r.parts[2], r.query);
        } else {
          await renderSync(main, r.parts[1], r.parts[2], r.query);
        }
      } else {
        await renderList(main, r.query);
      }
    } catch (err) {
      if (err.status === 401) {
        askToken("Reading needs a token: paste one a TokenReview accepts (kubectl create token …).");
      }
      clear(main).append(el("p", { class: "muted" }, err.message));
    }
  })();
  rendering = run;
  await run;
}

// Re-render when asked several times in a short while only once.
let pending = null;
export function rerender() {
  if (pending) return;
  pending = setTimeout(async () => {
    pending = null;
    if (rendering) await rendering.catch(() => {});
    render();
  }, 250);
}

// The token form: shown on demand, the token kept in sessionStorage for the tab.
const form = document.getElementById("token-form");
const input = document.getElementById("token-input");
let afterToken = null;
export function askToken(why, then) {
  if (why) say(why);
  afterToken = then || null;
  form.hidden = false;
  input.value = "";
  input.focus();
}
form.addEventListener("submit", async (e) => {
  e.preventDefault();
  setToken(input.value.trim());
  form.hidden = true;
  say("");
  await whoami();
  stream();
  const then = afterToken;
  afterToken = null;
  if (then) await then(); else render();
});
document.getElementById("token-cancel").addEventListener("click", () => { form.hidden = true; afterToken = null; });
document.getElementById("token-button").addEventListener("click", () => askToken(""));

// act runs a write; without a token it asks for one first and runs it after.
export async function act(label, path) {
  if (!token()) {
    askToken(`${label} needs a token allowed to do it.`, () => act(label, path));
    return;
  }
  try {
    const done = await api(path, { method: "POST" });
    say(`${label}: done by ${done.by}`, "ok");
    rerender();
  } catch (err) {
    say(`${label} refused: ${err.message}`, "error");
    if (err.status === 401) askToken("The token was not accepted: paste another.", () => act(label, path));
  }
}

async function whoami() {
  const who = document.getElementById("who");
  try {
    const w = await api("/api/v1/whoami");
    who.textContent = w.authenticated ? w.username : (w.anonymousRead ? "anonymous (read-only)" : "");
  } catch {
    who.textContent = "";
  }
}

// stream reads /api/v1/stream with fetch (EventSource cannot send the token) and
// re-renders on each change; it reconnects after a pause when the stream ends.
let streamAbort = null;
async function stream() {
  if (streamAbort) streamAbort.abort();
  const abort = new AbortController();
  streamAbort = abort;
  const live = document.getElementById("live");
  const headers = token() ? { Authorization: "Bearer " + token() } : {};
  try {
    const resp = await fetch("/api/v1/stream", { headers, signal: abort.signal });
    if (!resp.ok) throw new Error("stream: " + resp.status);
    live.classList.add("on");
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (/^event: (change|resync)$/m.test(block)) rerender();
      }
    }
  } catch (err) {
    if (abort.signal.aborted) return;
  }
  live.classList.remove("on");
  if (streamAbort === abort) setTimeout(stream, 3000);
}

window.addEventListener("hashchange", () => { say(""); render(); });
whoami();
render();
stream();
export { WriteHeader };
