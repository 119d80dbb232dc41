import type { RateQuota } from '../crm/request-gate.js';

/**
 * Rate-limit headers an upstream may send, read into one shape. The report service publishes none; if it ever
 * sends them, the gate takes its rate from them instead of guessing (see redis-gate.ts). Two families:
 *
 * - IETF draft (draft-ietf-httpapi-ratelimit-headers, versions up to -07): `RateLimit-Limit`,
 *   `RateLimit-Remaining`, `RateLimit-Reset` (delta seconds), and the window in `RateLimit-Policy: 100;w=60`
 *   or in the limit itself (`RateLimit-Limit: 100, 100;w=60`). The later structured form
 *   (`RateLimit: "default";r=50;t=30`, `RateLimit-Policy: "default";q=100;w=60`) is read too.
 * - The common `X-RateLimit-Limit`, `-Remaining`, `-Reset`; `-Reset` is delta seconds, or Unix seconds (GitHub,
 *   Twitter) when it is larger than any sensible delta.
 *
 * Anything unreadable gives `undefined`: the headers are advice, never a reason to fail a call.
 */

/** A Reset above this many seconds is a Unix time, not a delay (no window is a decade long). */
const EPOCH_THRESHOLD_S = 300_000_000;

export function parseQuotaHeaders(headers: Headers, now = Date.now()): RateQuota | undefined {
  return structured(headers) ?? draft(headers, 'ratelimit-', now) ?? draft(headers, 'x-ratelimit-', now);
}

function draft(headers: Headers, prefix: string, now: number): RateQuota | undefined {
  const limitField = headers.get(`${prefix}limit`);
  const remaining = whole(headers.get(`${prefix}remaining`));
  const reset = number(headers.get(`${prefix}reset`));
  if (limitField === null || remaining === undefined || reset === undefined) return undefined;
  // `100` or `100, 100;w=60, 1000;w=3600`: the first item is the limit that applies now.
  const limit = whole(limitField.split(',')[0]?.split(';')[0] ?? null);
  if (limit === undefined || limit <= 0) return undefined;
  const resetMs =
    reset > EPOCH_THRESHOLD_S ? Math.max(0, reset * 1000 - now) : Math.max(0, Math.round(reset * 1000));
  const windowS =
    windowOf(limitField, limit) ??
    (prefix === 'ratelimit-' ? windowOf(headers.get('ratelimit-policy'), limit) : undefined);
  return {
    limit,
    remaining: Math.min(remaining, limit),
    resetMs,
    ...(windowS === undefined ? {} : { windowMs: windowS * 1000 }),
  };
}

/** The `w=` of a policy item whose quota is `limit` (or of the first item that has one), in seconds. */
function windowOf(field: string | null, limit: number): number | undefined {
  if (field === null) return undefined;
  const windows = field.split(',').flatMap((item) => {
    const [quota, ...rest] = item.trim().split(';');
    for (const param of rest) {
      const [name, value] = param.split('=').map((x) => x.trim());
      const w = name === 'w' ? number(value ?? null) : undefined;
      if (w !== undefined && w > 0) return [{ quota: whole(quota ?? null), w }];
    }
    return [];
  });
  return (windows.find((x) => x.quota === limit) ?? windows[0])?.w;
}

/** The structured form: `RateLimit: "p";r=50;t=30` with `RateLimit-Policy: "p";q=100;w=60`. */
function structured(headers: Headers): RateQuota | undefined {
  const current = headers.get('ratelimit');
  const policy = headers.get('ratelimit-policy');
  if (current === null || policy === null) return undefined;
  const now = params(current.split(',')[0] ?? '');
  const name = now.name;
  const policyItem =
    policy
      .split(',')
      .map(params)
      .find((p) => p.name === name) ?? params(policy.split(',')[0] ?? '');
  const remaining = whole(now.values.get('r') ?? null);
  const resetS = number(now.values.get('t') ?? null);
  const limit = whole(policyItem.values.get('q') ?? null);
  const windowS = number(policyItem.values.get('w') ?? null);
  if (remaining === undefined || resetS === undefined || limit === undefined || limit <= 0) return undefined;
  return {
    limit,
    remaining: Math.min(remaining, limit),
    resetMs: Math.round(resetS * 1000),
    ...(windowS === undefined || windowS <= 0 ? {} : { windowMs: windowS * 1000 }),
  };
}

function params(item: string): { name: string; values: Map<string, string> } {
  const [name = '', ...rest] = item.trim().split(';');
  const values = new Map<string, string>();
  for (const p of rest) {
    const [k, v] = p.split('=').map((x) => x.trim());
    if (k && v !== undefined) values.set(k, v);
  }
  return { name: name.replace(/^"|"$/g, ''), values };
}

function number(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value);
}

function whole(value: string | null): number | undefined {
  const n = number(value);
  return n !== undefined && Number.isInteger(n) ? n : undefined;
}
