// Small helpers to build the page with DOM calls only: no HTML strings, so nothing the
// API returns is ever parsed as markup.

const svgTags = new Set(["svg", "g", "rect", "text", "tspan", "path", "title", "defs", "marker", "line", "circle"]);

export function el(tag, attrs = {}, ...children) {
  const svg = svgTags.has(tag);
  const e = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export function clear(e) { e.replaceChildren(); return e; }

export function badge(text, cls = text) { return text ? el("span", { class: "badge " + cls }, text) : null; }

// ago says how long ago a time was, as kubectl does.
export function ago(t) {
  if (!t) return "never";
  const s = Math.max(0, Math.round((Date.now() - new Date(t).getTime()) / 1000));
  if (s < 60) return s + "s ago";
  if (s < 3600) return Math.floor(s / 60) + "m ago";
  if (s < 86400) return Math.floor(s / 3600) + "h ago";
  return Math.floor(s / 86400) + "d ago";
}

// short is a revision with its hash cut to 8 characters.
export function short(rev) { return (rev || "").replace(/(sha1:[0-9a-f]{8})[0-9a-f]+/, "$1"); }
