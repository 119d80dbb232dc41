import type { Request, RequestHandler, Response } from 'express';
import { countingUnit } from '../util/counting-unit.js';

/**
 * Per-address limits for the routes anyone may call without credentials, kept in this process's memory so a
 * flood costs no Redis write. A fixed window per address; the table holds at most `capacity` addresses and
 * forgets the oldest first, so a flood from many addresses cannot grow it without bound. Addresses are counted
 * by countingUnit (an IPv6 client by its /64). With several `serve`
 * processes each counts on its own: the limit per address is then per process.
 */
export class AddressWindow {
  private readonly counts = new Map<string, { count: number; resetAt: number }>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly capacity = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The count of `address` in its current window (0 when it has none). */
  count(address: string): number {
    const entry = this.counts.get(countingUnit(address));
    return entry && entry.resetAt > this.now() ? entry.count : 0;
  }

  /** Counts one more for `address`; returns the new count. */
  hit(address: string): number {
    const unit = countingUnit(address);
    const now = this.now();
    const entry = this.counts.get(unit);
    if (entry && entry.resetAt > now) {
      entry.count += 1;
      return entry.count;
    }
    this.counts.delete(unit);
    if (this.counts.size >= this.capacity) {
      const oldest = this.counts.keys().next().value;
      if (oldest !== undefined) this.counts.delete(oldest);
    }
    this.counts.set(unit, { count: 1, resetAt: now + this.windowMs });
    return 1;
  }

  /** Seconds until the window of `address` ends, for `Retry-After`. */
  retryAfterSeconds(address: string): number {
    const entry = this.counts.get(countingUnit(address));
    return entry ? Math.max(1, Math.ceil((entry.resetAt - this.now()) / 1000)) : 1;
  }
}

/** OAuth install and callback: every request counts. */
export const OAUTH_REQUESTS_PER_MINUTE = 30;
/** Webhooks: only refused deliveries (401) count, so a busy legitimate sender is never slowed. */
export const WEBHOOK_REFUSALS_PER_MINUTE = 60;

function addressOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** Refuses an address's requests past `window.max` in its window (each request counts). */
export function limitRequests(window: AddressWindow, refuse: (res: Response) => void): RequestHandler {
  return (req, res, next) => {
    const address = addressOf(req);
    if (window.hit(address) <= window.max) return next();
    res.status(429).set('Retry-After', String(window.retryAfterSeconds(address)));
    refuse(res);
  };
}

/**
 * The refusal rule of the webhook routes, one for the Express limiter below and the direct path
 * (webhook-fast-path.ts), which share one window: an address that had `window.max` refused (401) answers in its
 * window is refused before any verification work. Returns the seconds it must wait (for `Retry-After`), or null
 * when its request may be handled.
 */
export function refusalWait(window: AddressWindow, address: string): number | null {
  return window.count(address) >= window.max ? window.retryAfterSeconds(address) : null;
}

/** The other half of the rule: an answer to `address` counts in its window when it refused the delivery (401). */
export function countAnswer(window: AddressWindow, address: string, status: number): void {
  if (status === 401) window.hit(address);
}

/** `refusalWait` and `countAnswer` as Express middleware: the count grows when an answer of 401 leaves. */
export function limitRefusals(window: AddressWindow, refuse: (res: Response) => void): RequestHandler {
  return (req, res, next) => {
    const address = addressOf(req);
    const wait = refusalWait(window, address);
    if (wait !== null) {
      res.status(429).set('Retry-After', String(wait));
      refuse(res);
      return;
    }
    res.on('finish', () => countAnswer(window, address, res.statusCode));
    next();
  };
}
