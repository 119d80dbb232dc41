import { z } from 'zod';

export const faultSettingsSchema = z.strictObject({
  /** Share of API requests answered with 503, from 0 to 1. */
  failShare: z.number().min(0).max(1).optional(),
  /** Every API request is answered after this many milliseconds. */
  delayMs: z.number().int().min(0).max(120_000).optional(),
  /** Replaces the sandbox-wide rate limit (keys registered with their own limit keep theirs). */
  rateLimitPerMinute: z.number().int().min(1).optional(),
  /**
   * Requests per key per second (fixed 1-s windows), on top of the per-minute limit: the burst throttle of a
   * real service, answered 429 with `Retry-After: 1`.
   */
  ratePerSecond: z.number().int().min(1).optional(),
  /**
   * Rate-limit headers on every API answer (429s included), for the limit nearest to running out: `ietf`
   * sends `RateLimit-Limit`, `-Remaining`, `-Reset` (seconds) and `RateLimit-Policy` (`25;w=1`), as in the
   * IETF draft; `x-ratelimit` sends `X-RateLimit-Limit`, `-Remaining` and `-Reset` (Unix seconds, as GitHub
   * does). The interface publishes no such headers: without this the sandbox sends none, like the service.
   */
  rateLimitHeaders: z.enum(['ietf', 'x-ratelimit']).optional(),
  /** Keys that answer 401 until the faults are cleared. */
  revokedKeys: z.array(z.string()).optional(),
});
export type FaultSettings = z.infer<typeof faultSettingsSchema>;

/**
 * Fault injection for reliability tests. Failures are spread evenly rather than drawn at random, so a test
 * that sets `failShare: 0.5` sees exactly every second request fail and can assert on counts.
 */
export class FaultInjector {
  private settings: FaultSettings = {};
  private failureCredit = 0;
  private revoked = new Set<string>();

  get current(): FaultSettings {
    return structuredClone(this.settings);
  }

  /** Merges with the faults already set; a field left out keeps its value. */
  set(settings: FaultSettings): FaultSettings {
    this.settings = { ...this.settings, ...settings };
    this.revoked = new Set(this.settings.revokedKeys ?? []);
    this.failureCredit = 0;
    return this.current;
  }

  clear(): void {
    this.settings = {};
    this.revoked = new Set();
    this.failureCredit = 0;
  }

  get delayMs(): number {
    return this.settings.delayMs ?? 0;
  }

  get rateLimitPerMinute(): number | undefined {
    return this.settings.rateLimitPerMinute;
  }

  get ratePerSecond(): number | undefined {
    return this.settings.ratePerSecond;
  }

  get rateLimitHeaders(): FaultSettings['rateLimitHeaders'] {
    return this.settings.rateLimitHeaders;
  }

  get revokedKeys(): ReadonlySet<string> {
    return this.revoked;
  }

  /** Whether this request should fail; call once per request. */
  shouldFail(): boolean {
    const share = this.settings.failShare ?? 0;
    if (share <= 0) return false;
    this.failureCredit += share;
    if (this.failureCredit >= 1 - 1e-9) {
      this.failureCredit -= 1;
      return true;
    }
    return false;
  }
}
