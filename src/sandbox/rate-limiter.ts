import { SandboxHttpError } from './http-error.js';
import { RATE_LIMIT_WINDOW_MS, RETRY_AFTER_HEADER } from './sandbox-facts.js';

interface Window {
  startedAt: number;
  count: number;
}

/** Where a key stands in one limiter's window, after the request just counted (or refused). */
export interface QuotaState {
  limit: number;
  remaining: number;
  /** Until the window ends. */
  resetMs: number;
  windowMs: number;
}

/**
 * Requests per key per window (a minute unless told), in fixed windows that start at a key's first request.
 * Simple, and it gives an exact `Retry-After`: the seconds until the key's window ends (at least 1).
 */
export class FixedWindowRateLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts one request for `key`; throws 429 when the key has used up `limit` in the current window. Returns
   * the key's quota after this request (for the optional RateLimit headers).
   */
  take(key: string, limit: number, headers?: (state: QuotaState) => Record<string, string>): QuotaState {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= this.windowMs) {
      window = { startedAt: now, count: 0 };
      this.windows.set(key, window);
    }
    const state = (): QuotaState => ({
      limit,
      remaining: Math.max(0, limit - window.count),
      resetMs: Math.max(0, window.startedAt + this.windowMs - now),
      windowMs: this.windowMs,
    });
    if (window.count >= limit) {
      const retryAfter = Math.max(1, Math.ceil((window.startedAt + this.windowMs - now) / 1000));
      const per =
        this.windowMs === 1_000 ? 'second' : this.windowMs === 60_000 ? 'minute' : `${this.windowMs} ms`;
      throw new SandboxHttpError(429, 'rate_limited', `rate limit of ${limit} requests per ${per} reached`, {
        ...headers?.(state()),
        [RETRY_AFTER_HEADER]: String(retryAfter),
      });
    }
    window.count += 1;
    return state();
  }

  reset(): void {
    this.windows.clear();
  }
}
