import { setTimeout as delay } from 'node:timers/promises';
import type { Client } from '@hubspot/api-client';
import type { AccessTokenSource } from '../../../src/auth/token-manager.js';
import type { ApiUsage, UsageListener } from '../../../src/crm/connector.js';
import {
  CrmBadRequestError,
  CrmForbiddenError,
  CrmRateLimitedError,
  CrmTransientError,
  CrmUnauthorizedError,
} from '../../../src/crm/errors.js';
import { OPEN_GATE, type RequestGate } from '../../../src/crm/request-gate.js';
import { redactSecrets } from '../../../src/log.js';
import { lazyRequire } from '../../../src/util/lazy-require.js';
import {
  HUBSPOT_DEFAULT_API_VERSION,
  HUBSPOT_ERROR_CATEGORIES,
  HUBSPOT_PROVIDER,
  HUBSPOT_RATE_HEADERS,
  HUBSPOT_RATE_LIMITS,
  HUBSPOT_RATE_POLICIES,
  type HubSpotApiVersion,
  type HubSpotPaths,
  hubspotPaths,
} from '../provider.js';
import { HUBSPOT_RETRY_BUDGET } from '../retry-budget.js';
import { msUntilNextMidnightIn } from './portal-clock.js';
import { parseHubSpotError } from './wire.js';

/** The SDK loads with the first portal's client, not with this module. */
const hubspotSdk = lazyRequire<typeof import('@hubspot/api-client')>('@hubspot/api-client');

/**
 * Every HubSpot API call of one portal goes through here. The SDK's Client carries the base URL and builds the
 * request; pacing, retries and error typing are ours, because the SDK's limiter is a process-wide singleton and
 * its retry ignores `Retry-After`. Per call: wait for the shared gate, send, read the rate-limit headers (and
 * hold off when the window is nearly spent), then retry what is worth retrying, boundedly:
 * - 429 TEN_SECONDLY_ROLLING / SECONDLY: pause the gate for the window, retry; DAILY: CrmRateLimitedError
 *   until the next midnight in the portal's time zone (HubSpot resets daily limits then).
 * - 5xx and network errors: exponential backoff with jitter, then CrmTransientError.
 * - 401: one token refresh, one retry, then CrmUnauthorizedError. 403: CrmForbiddenError.
 */

export type HttpMethod = 'GET' | 'POST' | 'PATCH';

export interface HubSpotRequest {
  method: HttpMethod;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** Statuses handed back to the caller instead of thrown (409 on create, 207 on batch, 404 on read). */
  accept?: readonly number[];
  /** Search has its own per-second limit and is paced apart. */
  search?: boolean;
}

export interface HubSpotResponse {
  status: number;
  body: unknown;
}

export interface RetryPolicy {
  /** 429s retried after waiting out the window before giving up with CrmRateLimitedError. */
  maxRateLimitRetries: number;
  /** 5xx / network failures retried before giving up with CrmTransientError. */
  maxTransientRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The numbers are the retry budget's (./retry-budget.ts). */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { ...HUBSPOT_RETRY_BUDGET.http.budget };

export interface HubSpotHttpOptions {
  /** `HUBSPOT_API_URL`: the SDK's basePath. */
  apiUrl: string;
  /** `HUBSPOT_API_VERSION`: the date version in every path. */
  apiVersion?: HubSpotApiVersion;
  /** The portal's IANA time zone (account details `timeZone`); daily limits reset at its midnight. UTC when unknown. */
  timeZone?: string;
  tokens: AccessTokenSource;
  gate?: RequestGate;
  retry?: Partial<RetryPolicy>;
  /** When at most this share of the window is left, deferrable callers hold off (everyone, on a gate without lanes). */
  lowRemainingShare?: number;
  /** Told the usage (apiUsage) after each answer that carried rate-limit headers. */
  onUsage?: UsageListener;
  /** Injected in tests so waits are recorded instead of spent. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

interface RateSnapshot {
  max?: number;
  remaining?: number;
  intervalMs?: number;
  daily?: number;
  dailyRemaining?: number;
}

/** What one call carries from try to try: the token in use and the retries spent. */
interface AttemptState {
  token: string;
  refreshed: boolean;
  rateLimitRetries: number;
  transientRetries: number;
}

/** Numbered API versions (`/crm/v3/`, `/oauth/v1/`): HubSpot stops supporting them in September 2027. */
const LEGACY_PATH = /\/v[1-4]\//;

export class HubSpotHttp {
  /** The paths of the date version this client speaks. */
  readonly paths: HubSpotPaths;
  private readonly client: Client;
  private readonly gate: RequestGate;
  private readonly retry: RetryPolicy;
  private readonly lowRemainingShare: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private holdUntil = 0;
  private lastSearchAt = 0;
  private rate: RateSnapshot | null = null;

  constructor(private readonly options: HubSpotHttpOptions) {
    // One Client per portal. No accessToken in its config: the token is set per request (it changes on
    // refresh), no limiter and no retries (both would be process-wide, see the field notes).
    this.client = new (hubspotSdk().Client)({ basePath: options.apiUrl, numberOfApiCallRetries: 0 });
    this.paths = hubspotPaths(options.apiVersion ?? HUBSPOT_DEFAULT_API_VERSION);
    this.gate = options.gate ?? OPEN_GATE;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.lowRemainingShare = options.lowRemainingShare ?? 0.05;
    this.sleep = options.sleep ?? ((ms) => delay(ms).then(() => undefined));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  async request(req: HubSpotRequest): Promise<HubSpotResponse> {
    refuseLegacyPath(req.path);
    const attempt: AttemptState = {
      token: await this.options.tokens.current(),
      refreshed: false,
      rateLimitRetries: 0,
      transientRetries: 0,
    };

    for (;;) {
      await this.waitForHold();
      if (req.search) await this.paceSearch();
      await this.gate.acquire();

      let res: Response;
      try {
        res = await this.send(req, attempt.token);
      } catch (err) {
        await this.backOffOrGiveUp(
          attempt,
          () =>
            new CrmTransientError(
              `HubSpot could not be reached (${req.method} ${req.path}): ${describe(err)}`,
              HUBSPOT_PROVIDER,
              undefined,
              { cause: err },
            ),
        );
        continue;
      }

      this.observe(res.headers);
      const body = await readBody(res);
      const status = res.status;

      if ((status >= 200 && status < 300) || req.accept?.includes(status)) {
        await this.holdIfWindowNearlySpent();
        return { status, body };
      }

      if (status === 401) {
        await this.refreshOrGiveUp(attempt, body);
        continue;
      }

      if (status === 429) {
        await this.waitOutRateLimit(attempt, res.headers, body);
        continue;
      }

      if (status >= 500) {
        await this.backOffOrGiveUp(
          attempt,
          () =>
            new CrmTransientError(
              `HubSpot answered ${status} to ${req.method} ${req.path} ${attempt.transientRetries + 1} times: ${messageOf(body)}`,
              HUBSPOT_PROVIDER,
              status,
            ),
        );
        continue;
      }

      throw refusal(req, status, body);
    }
  }

  /** One send through the SDK's client, with this attempt's token. */
  private send(req: HubSpotRequest, token: string): Promise<Response> {
    return this.client.apiRequest({
      method: req.method,
      path: req.path,
      ...(req.query ? { qs: req.query } : {}),
      ...(req.body !== undefined ? { body: req.body } : {}),
      headers: { Authorization: `Bearer ${token}` },
    });
  }

  /** A network error or a 5xx: back off and go again, or throw once the transient retries are spent. */
  private async backOffOrGiveUp(attempt: AttemptState, giveUp: () => Error): Promise<void> {
    if (attempt.transientRetries >= this.retry.maxTransientRetries) throw giveUp();
    await this.sleep(this.backoff(attempt.transientRetries++));
  }

  /** A 401: one token refresh for the next try; a second 401 after it is final. */
  private async refreshOrGiveUp(attempt: AttemptState, body: unknown): Promise<void> {
    if (attempt.refreshed) {
      throw new CrmUnauthorizedError(
        `HubSpot refused the access token even after a refresh: ${messageOf(body)}`,
        HUBSPOT_PROVIDER,
        401,
      );
    }
    attempt.token = await this.options.tokens.refreshAfterRejection(attempt.token);
    attempt.refreshed = true;
  }

  /** A 429: the daily limit is final until the portal's midnight; a window limit is waited out, boundedly. */
  private async waitOutRateLimit(attempt: AttemptState, headers: Headers, body: unknown): Promise<void> {
    const error = parseHubSpotError(body);
    const policy = error.policyName;
    if (policy === HUBSPOT_RATE_POLICIES.daily) {
      throw new CrmRateLimitedError(
        `HubSpot's daily API limit for this portal is spent: ${messageOf(body)}`,
        HUBSPOT_PROVIDER,
        msUntilNextMidnightIn(this.options.timeZone, this.now()),
        policy,
      );
    }
    const wait = this.rateLimitWait(headers, policy);
    if (attempt.rateLimitRetries >= this.retry.maxRateLimitRetries) {
      throw new CrmRateLimitedError(
        `HubSpot kept answering 429 (${policy ?? 'no policy named'}) after ${attempt.rateLimitRetries} waits`,
        HUBSPOT_PROVIDER,
        wait,
        policy,
      );
    }
    attempt.rateLimitRetries++;
    await this.hold(wait);
  }

  /** The rate-limit headers last seen, for the admin page. */
  apiUsage(): ApiUsage | null {
    const r = this.rate;
    if (!r) return null;
    const window =
      r.max !== undefined && r.remaining !== undefined
        ? `${fmt(r.remaining)} of ${fmt(r.max)} requests left in the ${fmt((r.intervalMs ?? HUBSPOT_RATE_LIMITS.windowMs) / 1000)} s window`
        : undefined;
    const daily =
      r.daily !== undefined && r.dailyRemaining !== undefined
        ? `${fmt(r.daily - r.dailyRemaining)} of ${fmt(r.daily)} daily calls used`
        : undefined;
    const summary = [daily, window].filter(Boolean).join('; ');
    if (!summary) return null;
    if (r.daily !== undefined && r.dailyRemaining !== undefined) {
      return { summary, used: r.daily - r.dailyRemaining, limit: r.daily };
    }
    return { summary, used: (r.max ?? 0) - (r.remaining ?? 0), limit: r.max };
  }

  private observe(headers: Headers): void {
    const read = (name: string): number | undefined => {
      const v = headers.get(name);
      if (v === null || v.trim() === '') return undefined;
      const n = Number(v);
      return Number.isFinite(n) ? n : undefined;
    };
    const next: RateSnapshot = {
      max: read(HUBSPOT_RATE_HEADERS.max),
      remaining: read(HUBSPOT_RATE_HEADERS.remaining),
      intervalMs: read(HUBSPOT_RATE_HEADERS.intervalMs),
      daily: read(HUBSPOT_RATE_HEADERS.daily),
      dailyRemaining: read(HUBSPOT_RATE_HEADERS.dailyRemaining),
    };
    if (!Object.values(next).some((v) => v !== undefined)) return;
    this.rate = { ...this.rate, ...next };
    if (!this.options.onUsage) return;
    const usage = this.apiUsage();
    if (usage) this.options.onUsage(usage);
  }

  /**
   * Remaining is low: wait rather than collect 429s. The window's last requests are left to urgent work (a
   * backfill that spent the window would hold every score change back for the rest of it, 10 s): deferrable
   * callers hold off until the rolling window has freed the slots below the low water, at its average pace,
   * and urgent ones go on; a spent window holds everyone for the rest of it (an urgent caller would only
   * collect 429s), and so does a gate without lanes.
   */
  private async holdIfWindowNearlySpent(): Promise<void> {
    const r = this.rate;
    if (!r || r.max === undefined || r.remaining === undefined) return;
    const lowWater = Math.max(1, Math.ceil(r.max * this.lowRemainingShare));
    if (r.remaining > lowWater) return;
    const intervalMs = r.intervalMs ?? HUBSPOT_RATE_LIMITS.windowMs;
    if (r.remaining <= 0 || !this.gate.holdDeferrable) {
      await this.hold(intervalMs);
      return;
    }
    const slots = lowWater + 1 - r.remaining;
    await this.gate.holdDeferrable(Math.min(intervalMs, (intervalMs * slots) / Math.max(1, r.max)));
  }

  /** Holds this portal off: the gate tells every process, the local hold covers a gate that only paces. */
  private async hold(ms: number): Promise<void> {
    await this.gate.pause(ms);
    this.holdUntil = Math.max(this.holdUntil, this.now() + ms);
  }

  private async waitForHold(): Promise<void> {
    const wait = this.holdUntil - this.now();
    if (wait > 0) await this.sleep(wait);
  }

  private async paceSearch(): Promise<void> {
    const spacing = Math.ceil(1000 / HUBSPOT_RATE_LIMITS.searchPerSecond);
    const wait = this.lastSearchAt + spacing - this.now();
    if (wait > 0) await this.sleep(wait);
    this.lastSearchAt = this.now();
  }

  private rateLimitWait(headers: Headers, policy: string | undefined): number {
    const retryAfter = headers.get(HUBSPOT_RATE_HEADERS.retryAfter);
    if (retryAfter !== null && /^\d+(\.\d+)?$/.test(retryAfter.trim()))
      return Math.ceil(Number(retryAfter) * 1000);
    if (policy === HUBSPOT_RATE_POLICIES.secondly) return 1000;
    return this.rate?.intervalMs ?? HUBSPOT_RATE_LIMITS.windowMs;
  }

  /** Exponential with jitter: half the step fixed, half random, so retries of many callers spread out. */
  private backoff(attempt: number): number {
    const step = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** attempt);
    return Math.round(step / 2 + (step / 2) * this.random());
  }
}

/** A programming error, not HubSpot's answer: every path comes from `hubspotPaths`. */
function refuseLegacyPath(path: string): void {
  if (LEGACY_PATH.test(path)) {
    throw new CrmBadRequestError(
      `refusing to call HubSpot's numbered API path ${path}: use the date-versioned paths`,
      HUBSPOT_PROVIDER,
    );
  }
}

/** A status not worth retrying: 403 names the missing scope, anything else is a bad request. */
function refusal(req: HubSpotRequest, status: number, body: unknown): Error {
  if (status === 403) return new CrmForbiddenError(forbiddenMessage(body), HUBSPOT_PROVIDER, 403);
  return new CrmBadRequestError(
    `HubSpot refused ${req.method} ${req.path} (${status}): ${messageOf(body)}`,
    HUBSPOT_PROVIDER,
    status,
  );
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function messageOf(body: unknown): string {
  if (typeof body === 'string') return redactSecrets(body.slice(0, 300));
  const error = parseHubSpotError(body);
  const parts = [error.category, error.message].filter(Boolean);
  return parts.length > 0 ? redactSecrets(parts.join(': ').slice(0, 500)) : 'no error details';
}

function forbiddenMessage(body: unknown): string {
  const error = parseHubSpotError(body);
  if (error.category === HUBSPOT_ERROR_CATEGORIES.missingScopes) {
    const scopes = (error.errors ?? []).flatMap((e) => e.context?.requiredGranularScopes ?? []);
    const which = scopes.length > 0 ? ` (needs ${[...new Set(scopes)].join(', ')})` : '';
    return `the HubSpot app lacks a required scope${which}: reinstall the app to grant it`;
  }
  return `HubSpot refused access: ${messageOf(body)}`;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const code = cause && typeof cause === 'object' && 'code' in cause ? ` (${String(cause.code)})` : '';
    return `${err.message}${code}`;
  }
  return String(err);
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
