import type { Connection, HttpRequest, HttpRequestOptions } from 'jsforce';
import type { AccessTokenSource } from '../../../src/auth/token-manager.js';
import type { UsageListener } from '../../../src/crm/connector.js';
import {
  CrmError,
  CrmRateLimitedError,
  CrmTransientError,
  CrmUnauthorizedError,
} from '../../../src/crm/errors.js';
import type { RequestGate } from '../../../src/crm/request-gate.js';
import type { Logger } from '../../../src/log.js';
import { lazyRequire } from '../../../src/util/lazy-require.js';
import { describeFailure, type SalesforceFailure, toCrmError } from '../errors.js';
import {
  CALL_OPTIONS_CLIENT,
  ERROR_CODES,
  HEADERS,
  REQUEST_TIMEOUT_MS,
  RETRY_DEFAULTS,
  SALESFORCE_PROVIDER,
} from '../provider.js';
import { CALL_HEADER, proxyFromEnvironment, ResponseObserver } from './response-observer.js';
import type { SalesforceUsageTracker } from './usage.js';

/** jsforce (with its streaming and XML parts) loads with the first Salesforce client, not with this module. */
export const jsforce = lazyRequire<typeof import('jsforce')>('jsforce');

/**
 * Every call the connector makes to one org goes through `run`: the daily-usage pause for background work,
 * the shared request gate, the current access token, one refresh after INVALID_SESSION_ID, backoff for
 * REQUEST_LIMIT_EXCEEDED and whole-call UNABLE_TO_LOCK_ROW, and typed CRM errors for the rest. jsforce does
 * the HTTP: its own refresh machinery stays off (the TokenManager refreshes once per org across processes).
 */

export type Priority = 'urgent' | 'background';

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  rateLimitedRetryAfterMs: number;
  dailyLimitRetryAfterMs: number;
}

export interface SalesforceApiOptions {
  instanceUrl: string;
  apiVersion: string;
  tokens: AccessTokenSource;
  gate: RequestGate;
  usage: SalesforceUsageTracker;
  /** Told the org's usage (the tracker's snapshot) after each response that carried a reading. */
  onUsage?: UsageListener;
  logger?: Logger;
  retry?: Partial<RetryPolicy>;
  /** Passed to jsforce for REST calls (its own GET retries on 5xx/429, request timeout). */
  httpOptions?: HttpRequestOptions;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * jsforce 3.10 sends a connection's `callOptions` as `Sforce-Call-Options` on every HTTP call it makes (REST,
 * `conn.request`, Bulk API 2.0: `HttpApi.beforeSend`) and as the `CallOptions` header of its SOAP envelopes
 * (Metadata API), so each change the connector writes comes back with its client id in `changeOrigin`.
 */
export const CALL_OPTIONS = { client: CALL_OPTIONS_CLIENT };

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class SalesforceApi {
  readonly conn: Connection;
  /** This client's view of its responses (response-observer.ts). */
  private readonly responses: ResponseObserver;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: SalesforceApiOptions) {
    // No oauth2 client id and no refreshFn: jsforce then has no refresh delegate and reports 401s to us.
    this.conn = new (jsforce().Connection)({
      instanceUrl: options.instanceUrl,
      version: options.apiVersion,
      callOptions: CALL_OPTIONS,
    });
    this.retry = { ...RETRY_DEFAULTS, ...options.retry };
    this.sleep = options.sleep ?? defaultSleep;
    this.responses = new ResponseObserver(options.httpOptions?.httpProxy ?? proxyFromEnvironment() ?? null);
    this.watchLimitHeader();
  }

  get usage(): SalesforceUsageTracker {
    return this.options.usage;
  }

  get apiVersion(): string {
    return this.options.apiVersion;
  }

  /**
   * `conn.limitInfo` is only updated by REST calls; SOAP (Metadata API) and Bulk API 2.0 responses carry the
   * header too, so every response from this org's instance to this client is read through its observer.
   */
  private watchLimitHeader(): void {
    const { usage, onUsage } = this.options;
    this.responses.observeOrigin(this.options.instanceUrl, (headers) => {
      if (!usage.observe(headers[HEADERS.limitInfo]) || !onUsage) return;
      const reading = usage.snapshot();
      if (reading) onUsage(reading);
    });
  }

  /**
   * A REST call relative to `/services/data/vXX.X` (or a `/services/...` path, or an absolute URL).
   * `onHeaders` sees the response headers of this very call (jsforce returns only the body).
   */
  rest<T>(
    priority: Priority,
    request: { method: HttpRequest['method']; url: string; body?: unknown },
    onHeaders?: (headers: Record<string, string>) => void,
  ): Promise<T> {
    return this.run(priority, `${request.method} ${request.url.split('?')[0]}`, (conn) => {
      // The proxy, if any, is this client's observer's (response-observer.ts): a call naming it would bypass it.
      const { httpProxy: _proxy, ...httpOptions } = this.options.httpOptions ?? {};
      const options: HttpRequestOptions = { timeout: REQUEST_TIMEOUT_MS, ...httpOptions };
      // The tag lets the dispatcher hand this very call's headers back; it never leaves the process.
      const tagged = onHeaders ? this.responses.tagCall(onHeaders) : null;
      const headers: Record<string, string> = {
        ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(tagged ? { [CALL_HEADER]: tagged.tag } : {}),
      };
      const pending = conn.request<T>(
        {
          method: request.method,
          url: request.url,
          ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
          ...(Object.keys(headers).length > 0 ? { headers } : {}),
        },
        options,
      );
      return tagged ? Promise.resolve(pending).finally(tagged.done) : pending;
    });
  }

  async run<T>(priority: Priority, label: string, op: (conn: Connection) => Promise<T>): Promise<T> {
    if (priority === 'background') this.options.usage.admitBackground();
    let refreshed = false;
    let attempt = 0;
    for (;;) {
      await this.options.gate.acquire();
      const token = await this.options.tokens.current();
      this.conn.accessToken = token;
      try {
        return await this.responses.within(() => op(this.conn));
      } catch (err) {
        if (err instanceof CrmError) throw err;
        const failure = describeFailure(err);
        if (!failure) throw err;
        if (failure.code === ERROR_CODES.invalidSession || failure.status === 401) {
          if (refreshed) {
            throw new CrmUnauthorizedError(
              'Salesforce refused the access token again right after a refresh: reconnect the Salesforce org',
              SALESFORCE_PROVIDER,
              401,
              { cause: err },
            );
          }
          refreshed = true;
          this.options.logger?.info(
            { call: label },
            'salesforce session rejected; refreshing the access token once',
          );
          await this.options.tokens.refreshAfterRejection(token);
          continue;
        }
        if (
          failure.code === ERROR_CODES.requestLimitExceeded ||
          failure.code === ERROR_CODES.unableToLockRow
        ) {
          attempt++;
          if (attempt < this.retry.attempts) {
            const delay = Math.min(this.retry.baseDelayMs * 2 ** (attempt - 1), this.retry.maxDelayMs);
            this.options.logger?.warn(
              { call: label, code: failure.code, attempt, delayMs: delay },
              'salesforce call refused; retrying after a pause',
            );
            await this.sleep(delay);
            continue;
          }
          throw await this.giveUp(failure, err);
        }
        throw toCrmError(failure, err);
      }
    }
  }

  private async giveUp(failure: SalesforceFailure, cause: unknown): Promise<CrmError> {
    if (failure.code === ERROR_CODES.unableToLockRow) {
      return new CrmTransientError(
        `Salesforce kept the records locked after ${this.retry.attempts} attempts: ${failure.message}`,
        SALESFORCE_PROVIDER,
        undefined,
        { cause },
      );
    }
    const seen = this.options.usage.snapshot();
    const daily =
      /TotalRequests/i.test(failure.message) ||
      (seen?.used !== undefined && seen.limit !== undefined && seen.used >= seen.limit);
    const retryAfterMs = daily ? this.retry.dailyLimitRetryAfterMs : this.retry.rateLimitedRetryAfterMs;
    // Everyone working for this org holds off, not only this job.
    await this.options.gate.pause(retryAfterMs);
    return new CrmRateLimitedError(
      daily
        ? `Salesforce's daily API allocation for this org is spent (${failure.message}); work resumes as the 24-hour window rolls`
        : `Salesforce refused the call with REQUEST_LIMIT_EXCEEDED after ${this.retry.attempts} attempts: ${failure.message}`,
      SALESFORCE_PROVIDER,
      retryAfterMs,
      daily ? 'daily' : 'concurrent',
      403,
    );
  }
}
