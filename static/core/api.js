// api.js — the dashboard's JSON API client. Every request goes to /api/...
// with parameters encoded by URLSearchParams; failures throw ApiError with
// the server's message.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function apiUrl(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, String(v));
  const s = q.toString();
  return `/api/${path}${s ? `?${s}` : ''}`;
}

export async function getJSON(path, params) {
  const res = await fetch(apiUrl(path, params), { cache: 'no-store' });
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
    throw new ApiError(res.status, msg);
  }
  return res.json();
}

// Runs fns (returning promises) with at most `limit` in flight.
export async function pooled(fns, limit = 6) {
  const out = new Array(fns.length);
  let next = 0;
  async function worker() {
    while (next < fns.length) {
      const i = next++;
      out[i] = await fns[i]();
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, fns.length) }, worker));
  return out;
}
