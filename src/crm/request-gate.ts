/**
 * Pacing for one upstream identity (a CRM installation, a report-service key), shared by every process
 * through Redis (see ../ratelimit/redis-gate.ts). Connectors call `acquire` before each request and `pause`
 * when the upstream says the window is spent, so a 429 slows that identity only.
 */
export interface RequestGate {
  /** Resolves when one more request may be sent. */
  acquire(): Promise<void>;
  /** Everyone sharing this identity holds off for `ms`. */
  pause(ms: number): Promise<void>;
  /**
   * Deferrable callers (backfills, sweeps) sharing this identity hold off for `ms`; urgent ones go on, so the
   * last requests of a nearly spent window are real time's. A gate without lanes leaves it out (callers pause).
   */
  holdDeferrable?(ms: number): Promise<void>;
}

/**
 * A gate that learns the upstream's rate from its answers (ratelimit/redis-gate.ts with `adaptive`): the
 * report service publishes no limits, so its client tells the gate about each 429 and any rate-limit headers.
 */
export interface AdaptiveGate extends RequestGate {
  /** As `acquire`, resolving with the admission's time on the gate's clock, which `refused` takes. */
  admit(): Promise<number>;
  /**
   * The upstream refused (429) a request admitted at `admittedAt`: everyone holds off `pauseMs`, and the rate
   * comes down once for requests admitted since the last cut (a burst of 429s is one signal, not many).
   */
  refused(admittedAt: number, pauseMs: number, quota?: RateQuota): Promise<void>;
  /** The upstream stated its quota (rate-limit headers of any answer). */
  quota(quota: RateQuota): Promise<void>;
}

export function isAdaptiveGate(gate: RequestGate): gate is AdaptiveGate {
  const g = gate as Partial<AdaptiveGate>;
  return typeof g.admit === 'function' && typeof g.refused === 'function' && typeof g.quota === 'function';
}

/** For tests and one-off calls where nothing else shares the identity. */
export const OPEN_GATE: RequestGate = {
  acquire: async () => {},
  pause: async () => {},
};

/** Rate-limit headers read into one shape (ratelimit/quota-headers.ts); an adaptive gate takes it. */
export interface RateQuota {
  /** Requests the upstream allows per window. */
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** Until the current window ends. */
  resetMs: number;
  /** The window's length, when the upstream says it (`w=`). */
  windowMs?: number;
}
