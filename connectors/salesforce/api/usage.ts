import type { ApiUsage } from '../../../src/crm/connector.js';
import { CrmQuotaPausedError } from '../../../src/crm/errors.js';
import { SALESFORCE_PROVIDER, USAGE_RECHECK_MS } from '../provider.js';

/**
 * The org's rolling 24-hour API allocation as the last response reported it (`Sforce-Limit-Info:
 * api-usage=used/limit`). Once usage reaches `pauseShare`, background work stops here instead of spending
 * what is left of an allocation the org's own integrations share. Urgent calls still go out, and each of
 * their answers updates the reading; while paused, one background call per `recheckMs` is let through as a
 * probe, so work resumes by itself when usage falls back below the share.
 *
 * One tracker per installation per process: pass the same instance to every connector of that installation.
 */

const LIMIT_INFO = /(?:^|[;,\s])api-usage=(\d+)\/(\d+)/;

export interface UsageTrackerOptions {
  pauseShare: number;
  recheckMs?: number;
  now?: () => number;
}

interface Reading {
  used: number;
  limit: number;
  at: number;
}

export class SalesforceUsageTracker {
  private reading: Reading | null = null;
  private lastProbeAt = 0;
  private readonly recheckMs: number;
  private readonly now: () => number;

  constructor(private readonly options: UsageTrackerOptions) {
    if (!(options.pauseShare > 0 && options.pauseShare <= 1)) throw new Error('pauseShare must be in (0, 1]');
    this.recheckMs = options.recheckMs ?? USAGE_RECHECK_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Feeds the `Sforce-Limit-Info` header value of any response; other values are ignored. Says whether it
   * carried a reading.
   */
  observe(headerValue: string | undefined | null): boolean {
    if (!headerValue) return false;
    const m = LIMIT_INFO.exec(headerValue);
    if (!m) return false;
    const used = Number(m[1]);
    const limit = Number(m[2]);
    if (!(limit > 0)) return false;
    this.reading = { used, limit, at: this.now() };
    return true;
  }

  paused(): boolean {
    return this.reading !== null && this.reading.used >= this.reading.limit * this.options.pauseShare;
  }

  /**
   * Throws CrmQuotaPausedError when background work must wait. Lets one call through per `recheckMs` while
   * paused: its response is the fresh reading that lifts the pause.
   */
  admitBackground(): void {
    if (!this.paused()) return;
    const now = this.now();
    const last = Math.max(this.reading?.at ?? 0, this.lastProbeAt);
    const wait = last + this.recheckMs - now;
    if (wait <= 0) {
      this.lastProbeAt = now;
      return;
    }
    const r = this.reading!;
    throw new CrmQuotaPausedError(
      `Salesforce daily API usage is ${r.used.toLocaleString('en-US')} of ${r.limit.toLocaleString('en-US')} ` +
        `(${Math.round((r.used / r.limit) * 100)}%), at or above the ${Math.round(this.options.pauseShare * 100)}% ` +
        'share set by SALESFORCE_USAGE_PAUSE_SHARE: background work waits',
      SALESFORCE_PROVIDER,
      wait,
    );
  }

  snapshot(): ApiUsage | null {
    if (!this.reading) return null;
    const { used, limit } = this.reading;
    return {
      summary: `${used.toLocaleString('en-US')} of ${limit.toLocaleString('en-US')} daily API calls${this.paused() ? ' (background work paused)' : ''}`,
      used,
      limit,
    };
  }
}
