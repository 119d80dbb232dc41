import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  type AdaptiveGate,
  isAdaptiveGate,
  OPEN_GATE,
  type RateQuota,
  type RequestGate,
} from '../crm/request-gate.js';
import { parseQuotaHeaders } from '../ratelimit/quota-headers.js';
import { MAX_QUERY_LENGTH } from '../report-query.js';
import { RETRY_BUDGET } from '../retry-budget.js';
import {
  ReportBadRequestError,
  type ReportErrorDetails,
  ReportForbiddenError,
  ReportGraphQLError,
  ReportInvalidRequestError,
  ReportNetworkError,
  ReportNotFoundError,
  ReportRateLimitedError,
  ReportResponseError,
  ReportServerError,
  type ReportServiceError,
  ReportUnauthorizedError,
  ReportUnexpectedStatusError,
  ReportWriteScopeError,
  WRITE_SCOPE_ADVICE,
} from './errors.js';
import { reportKeyIdentity } from './key-identity.js';
import {
  type Report,
  reportSchema,
  type SearchHit,
  type SearchParams,
  type SearchResult,
  searchHitSchema,
} from './schemas.js';
import { slugProblem } from './slug.js';
import {
  type DocumentInput,
  documentBody,
  receiptId,
  type StreamedBody,
  type SubmissionInput,
  submissionBody,
  type WriteReceipt,
} from './submissions.js';

/** The service's own rule for `q` (REST and GraphQL): letters, numbers, spaces, hyphens; at most 120. */
const SERVICE_Q_RULE = /^[\p{L}\p{N} -]*$/u;
export const SEARCH_LIMIT_MAX = 50;

/** Keys the REST search body may hold its list under; the body's shape is not published. */
const SEARCH_LIST_KEYS = ['results', 'items', 'data', 'reports', 'hits', 'nodes', 'edges'] as const;
const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-correlation-id', 'x-amzn-requestid'];

export interface CallObservation {
  endpoint: string;
  /** HTTP status, or `network` when there was no answer. */
  outcome: number | 'network';
  durationMs: number;
}

export interface ReportClientOptions {
  /** `{base_url}`: includes the fixed prefix, not `/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Per attempt. */
  timeoutMs?: number;
  /** Retries after the first attempt, for 5xx, network errors and 429. */
  maxRetries?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * A `Retry-After` longer than this is not slept through: the 429 is thrown so the queue can reschedule the
   * job instead of holding a worker.
   */
  maxRetryAfterMs?: number;
  /**
   * Shared pacing for this key (all processes). An adaptive gate is told of every 429 and of any rate-limit
   * headers, and learns the key's rate from them.
   */
  gate?: RequestGate;
  onCall?: (observation: CallObservation) => void;
  fetch?: typeof fetch;
  /** Replaced in tests so backoff does not cost wall time. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

interface Attempt {
  endpoint: string;
  method: 'GET' | 'POST';
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  /** A body streamed as it is written, with its own content type (a document upload). */
  streamed?: StreamedBody;
  /**
   * Writes: a 403 means the `write` scope is missing, and a lost connection is not retried, because the
   * request may have been applied and a second one would create a second submission.
   */
  write?: boolean;
  /** A 2xx without a JSON body is an answer (`undefined`), not an error. */
  emptyOk?: boolean;
}

const meSchema = z
  .object({ data: z.object({ me: z.object({ sandbox: z.boolean() }).loose() }).loose() })
  .loose();
const graphqlEnvelopeSchema = z
  .object({
    data: z.unknown().optional(),
    errors: z.array(z.object({ message: z.string().optional() }).loose()).optional(),
  })
  .loose();
const graphqlSearchSchema = z.object({ search: z.array(searchHitSchema) }).loose();

/** The fields requested from GraphQL `search`; the published schema promises only `slug` and `score`. */
export const GRAPHQL_SEARCH_QUERY = `query Search($q: String, $industry: String, $limit: Int) {
  search(q: $q, industry: $industry, limit: $limit) { slug score { overall band } }
}`;
const ME_QUERY = 'query Me { me { sandbox } }';

export class ReportClient {
  /** This key at this address (key-identity.ts): what the report cache is partitioned by. */
  readonly keyIdentity: string;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly gate: RequestGate;
  private readonly adaptive: AdaptiveGate | null;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(private readonly options: ReportClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.keyIdentity = reportKeyIdentity(this.baseUrl, options.apiKey);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxRetries = options.maxRetries ?? RETRY_BUDGET.reportsHttp.maxRetries;
    this.baseDelayMs = options.baseDelayMs ?? RETRY_BUDGET.reportsHttp.baseDelayMs;
    this.maxDelayMs = options.maxDelayMs ?? RETRY_BUDGET.reportsHttp.maxDelayMs;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? RETRY_BUDGET.reportsHttp.maxRetryAfterMs;
    this.gate = options.gate ?? OPEN_GATE;
    this.adaptive = isAdaptiveGate(this.gate) ? this.gate : null;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.sleep = options.sleep ?? ((ms) => sleep(ms));
    this.random = options.random ?? Math.random;
  }

  /** Fetches one published report. Throws `ReportNotFoundError` when it is unknown or unpublished. */
  async getReport(slug: string): Promise<Report> {
    // Checked before the request: a slug such as `..` would otherwise leave the reports path with our key.
    const problem = slugProblem(slug);
    if (problem) throw invalid('getReport', problem);
    const endpoint = 'GET /v1/reports/:slug';
    const body = await this.send({
      endpoint,
      method: 'GET',
      path: `/v1/reports/${encodeURIComponent(slug)}`,
    });
    return parseWith(reportSchema, body, endpoint, 'report');
  }

  async search(params: SearchParams): Promise<SearchResult> {
    const endpoint = 'GET /v1/search';
    const query = new URLSearchParams();
    if (params.q !== undefined) query.set('q', checkQ(params.q, endpoint));
    if (params.industry !== undefined) query.set('industry', params.industry);
    if (params.stage !== undefined) query.set('stage', params.stage);
    if (params.min_score !== undefined) {
      if (!Number.isFinite(params.min_score)) throw invalid(endpoint, 'min_score must be a finite number');
      query.set('min_score', String(params.min_score));
    }
    if (params.limit !== undefined) query.set('limit', String(checkLimit(params.limit, endpoint)));
    const body = await this.send({ endpoint, method: 'GET', path: '/v1/search', query });
    return readSearchBody(body, endpoint);
  }

  /** GraphQL `search`. Arguments travel as variables, never inside the query text. */
  async graphqlSearch(params: Pick<SearchParams, 'q' | 'industry' | 'limit'>): Promise<SearchHit[]> {
    const endpoint = 'POST /v1/graphql search';
    const variables: Record<string, unknown> = {};
    if (params.q !== undefined) variables.q = checkQ(params.q, endpoint);
    if (params.industry !== undefined) variables.industry = params.industry;
    if (params.limit !== undefined) variables.limit = checkLimit(params.limit, endpoint);
    const data = await this.graphql(GRAPHQL_SEARCH_QUERY, variables, endpoint);
    const parsed = graphqlSearchSchema.safeParse(data);
    if (!parsed.success) {
      throw new ReportResponseError(
        'GraphQL search answered an unreadable shape',
        { endpoint, body: data },
        issuesOf(parsed.error),
      );
    }
    return parsed.data.search;
  }

  /** `me { sandbox }`: also the cheapest way to check that a key is valid. */
  async me(): Promise<{ sandbox: boolean }> {
    const endpoint = 'POST /v1/graphql me';
    const data = await this.graphql(ME_QUERY, {}, endpoint);
    return parseWith(meSchema, { data }, endpoint, 'me').data.me;
  }

  /**
   * `POST /v1/submissions` (scope `write`). Throws `ReportWriteScopeError` for a key without `write`, and
   * `ReportResponseError` when a 2xx carries no id.
   */
  async createSubmission(input: SubmissionInput): Promise<WriteReceipt> {
    const endpoint = 'POST /v1/submissions';
    let body: Record<string, string>;
    try {
      body = submissionBody(input);
    } catch (err) {
      throw invalid(endpoint, err instanceof z.ZodError ? issuesOf(err).join('; ') : String(err));
    }
    const answer = await this.send({ endpoint, method: 'POST', path: '/v1/submissions', body, write: true });
    const id = receiptId(answer);
    if (id === undefined) {
      throw new ReportResponseError(
        `${endpoint}: the answer carries no submission id (looked at id, data.id, submission.id)`,
        { endpoint, body: answer },
        ['no id'],
      );
    }
    return { id, answer };
  }

  /** `POST /v1/submissions/:id/documents` (scope `write`), as a multipart upload of one file. */
  async uploadDocument(
    submissionId: string,
    document: DocumentInput,
  ): Promise<{ id: string | undefined; answer: unknown }> {
    const endpoint = 'POST /v1/submissions/:id/documents';
    if (submissionId.length === 0) throw invalid(endpoint, 'submission id must not be empty');
    if (document.bytes.byteLength === 0) throw invalid(endpoint, 'the document is empty');
    const answer = await this.send({
      endpoint,
      method: 'POST',
      path: `/v1/submissions/${encodeURIComponent(submissionId)}/documents`,
      streamed: documentBody(document),
      write: true,
      emptyOk: true,
    });
    return { id: receiptId(answer), answer };
  }

  /** A raw GraphQL call; returns `data`, throws `ReportGraphQLError` when the answer has `errors`. */
  async graphql(
    query: string,
    variables: Record<string, unknown>,
    endpoint = 'POST /v1/graphql',
  ): Promise<unknown> {
    const body = await this.send({
      endpoint,
      method: 'POST',
      path: '/v1/graphql',
      body: { query, variables },
    });
    const envelope = graphqlEnvelopeSchema.safeParse(body);
    if (!envelope.success) {
      throw new ReportResponseError(
        'GraphQL answer is not a JSON object',
        { endpoint, body },
        issuesOf(envelope.error),
      );
    }
    const errors = envelope.data.errors ?? [];
    if (errors.length > 0) {
      const messages = errors.map((e) => e.message ?? 'unnamed error');
      throw new ReportGraphQLError(`GraphQL error: ${messages.join('; ')}`, { endpoint, body }, messages);
    }
    return envelope.data.data;
  }

  private async send(attempt: Attempt): Promise<unknown> {
    for (let n = 0; ; n++) {
      try {
        return await this.once(attempt, n);
      } catch (err) {
        const e = err as ReportServiceError;
        if (!e.retryable || n >= this.maxRetries) throw e;
        if (attempt.write && e instanceof ReportNetworkError) throw e;
        let delay = this.backoff(n);
        // The gate was paused for the whole wait when the 429 arrived (once), however long it is.
        if (e instanceof ReportRateLimitedError && e.retryAfterMs !== undefined) {
          if (e.retryAfterMs > this.maxRetryAfterMs) throw e;
          delay = e.retryAfterMs;
        }
        await this.sleep(delay);
      }
    }
  }

  /** Full jitter: spreads retries of many workers so they do not return together. */
  private backoff(attempt: number): number {
    const ceiling = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** attempt);
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  private async once(attempt: Attempt, n: number): Promise<unknown> {
    let admittedAt = 0;
    if (this.adaptive) admittedAt = await this.adaptive.admit();
    else await this.gate.acquire();
    const url = `${this.baseUrl}${attempt.path}${attempt.query && [...attempt.query].length > 0 ? `?${attempt.query}` : ''}`;
    const started = performance.now();
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(url, {
        method: attempt.method,
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          accept: 'application/json',
          ...(attempt.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(attempt.streamed
            ? {
                'content-type': attempt.streamed.contentType,
                'content-length': String(attempt.streamed.length),
              }
            : {}),
        },
        body: attempt.streamed
          ? attempt.streamed.stream()
          : attempt.body === undefined
            ? undefined
            : JSON.stringify(attempt.body),
        ...(attempt.streamed ? { duplex: 'half' as const } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
      });
      // A service that quotes the key back (say, in a 401's message) must not put it into our errors, and
      // from there into logs and the queue's job records.
      text = withoutSecret(await response.text(), this.options.apiKey);
    } catch (err) {
      this.observe(attempt.endpoint, 'network', started);
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new ReportNetworkError(
        timedOut
          ? `${attempt.endpoint} timed out after ${this.timeoutMs} ms`
          : `${attempt.endpoint} failed: ${err instanceof Error ? err.message : String(err)}`,
        { endpoint: attempt.endpoint, cause: err },
        timedOut,
      );
    }
    this.observe(attempt.endpoint, response.status, started);
    const body = parseBody(text, response.headers.get('content-type'));
    const quota = parseQuotaHeaders(response.headers);
    if (response.status === 429) {
      const err = statusError(response, body.value, attempt.endpoint, attempt.write === true);
      await this.throttled(err, admittedAt, n, quota);
      throw err;
    }
    if (quota) await this.tellQuota(quota);
    if (response.ok) {
      if (attempt.emptyOk && body.kind !== 'json') return undefined;
      if (body.kind !== 'json') {
        throw new ReportResponseError(
          `${attempt.endpoint} answered ${response.status} without a JSON body`,
          {
            endpoint: attempt.endpoint,
            status: response.status,
            requestId: requestIdOf(response.headers, undefined),
            body: body.value,
          },
          ['body is not JSON'],
        );
      }
      return body.value;
    }
    throw statusError(response, body.value, attempt.endpoint, attempt.write === true);
  }

  /**
   * Everyone on this key holds off for the service's Retry-After (or, without one, this caller's backoff),
   * however long: the job may give up and be delayed, the others should not spend the key meanwhile.
   */
  private async throttled(
    err: ReportServiceError,
    admittedAt: number,
    n: number,
    quota: RateQuota | undefined,
  ): Promise<void> {
    const retryAfterMs = err instanceof ReportRateLimitedError ? err.retryAfterMs : undefined;
    const pauseMs = retryAfterMs ?? (quota && quota.remaining <= 0 ? quota.resetMs : this.backoff(n));
    if (this.adaptive) await this.adaptive.refused(admittedAt, pauseMs, quota);
    else await this.gate.pause(pauseMs);
  }

  /** Rate-limit headers are advice for the gate: a failure to record them never fails the call. */
  private async tellQuota(quota: RateQuota): Promise<void> {
    try {
      await this.adaptive?.quota(quota);
    } catch {
      // The next answer carries them again.
    }
  }

  private observe(endpoint: string, outcome: number | 'network', started: number): void {
    this.options.onCall?.({ endpoint, outcome, durationMs: performance.now() - started });
  }
}

function withoutSecret(text: string, secret: string): string {
  return secret.length > 0 && text.includes(secret) ? text.replaceAll(secret, '[REDACTED]') : text;
}

function parseBody(text: string, contentType: string | null): { kind: 'json' | 'text'; value: unknown } {
  if (text.length === 0) return { kind: 'text', value: '' };
  const looksJson = (contentType ?? '').includes('json') || /^\s*[[{]/.test(text);
  if (looksJson) {
    try {
      return { kind: 'json', value: JSON.parse(text) as unknown };
    } catch {
      // A body that claims JSON but is not stays as text: the error body format is not published.
    }
  }
  return { kind: 'text', value: text };
}

function statusError(
  response: Response,
  body: unknown,
  endpoint: string,
  write: boolean,
): ReportServiceError {
  const status = response.status;
  const details: ReportErrorDetails = {
    endpoint,
    status,
    requestId: requestIdOf(response.headers, body),
    body,
  };
  const said = messageOf(body);
  const suffix = said ? `: ${said}` : '';
  if (status === 400)
    return new ReportBadRequestError(`${endpoint} refused the request (400)${suffix}`, details);
  if (status === 401) {
    return new ReportUnauthorizedError(
      `the report-service API key is missing, invalid or revoked (401)${suffix}`,
      details,
    );
  }
  if (status === 403 && write) {
    return new ReportWriteScopeError(
      `the report-service API key lacks the \`write\` scope that ${endpoint} needs (403; read-only and legacy keys cannot write): ${WRITE_SCOPE_ADVICE}`,
      details,
    );
  }
  if (status === 403) {
    return new ReportForbiddenError(
      `the report-service API key lacks the scope ${endpoint} needs (403)${suffix}`,
      details,
    );
  }
  if (status === 404)
    return new ReportNotFoundError(`${endpoint}: not found or not published (404)`, details);
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    return new ReportRateLimitedError(
      `rate limit for this API key exceeded (429)${suffix}`,
      details,
      retryAfterMs,
    );
  }
  if (status >= 500)
    return new ReportServerError(`${endpoint} failed on the service side (${status})${suffix}`, details);
  return new ReportUnexpectedStatusError(
    `${endpoint} answered an unexpected status ${status}${suffix}`,
    details,
  );
}

/** `Retry-After` is delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function requestIdOf(headers: Headers, body: unknown): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const v = headers.get(name);
    if (v) return v;
  }
  const fromBody = findKey(body, ['request_id', 'requestId', 'correlation_id', 'correlationId']);
  return typeof fromBody === 'string' ? fromBody : undefined;
}

function messageOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim().slice(0, 200) || undefined;
  const m = findKey(body, ['message', 'detail', 'error_description', 'title']);
  if (typeof m === 'string') return m.slice(0, 200);
  const e = findKey(body, ['error']);
  return typeof e === 'string' ? e.slice(0, 200) : undefined;
}

/** Looks for a key at the top level or one level down (`{error: {message}}`). */
function findKey(body: unknown, keys: string[]): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  for (const k of keys) if (record[k] !== undefined) return record[k];
  for (const v of Object.values(record)) {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const inner = v as Record<string, unknown>;
      for (const k of keys) if (inner[k] !== undefined) return inner[k];
    }
  }
  return undefined;
}

function checkQ(q: string, endpoint: string): string {
  if (q.length > MAX_QUERY_LENGTH)
    throw invalid(endpoint, `q is ${q.length} characters; at most ${MAX_QUERY_LENGTH}`);
  if (!SERVICE_Q_RULE.test(q))
    throw invalid(endpoint, 'q may hold only letters, numbers, spaces and hyphens');
  return q;
}

function checkLimit(limit: number, endpoint: string): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT_MAX) {
    throw invalid(endpoint, `limit must be a whole number from 1 to ${SEARCH_LIMIT_MAX}`);
  }
  return limit;
}

function invalid(endpoint: string, message: string): ReportInvalidRequestError {
  return new ReportInvalidRequestError(`${endpoint}: ${message}`, { endpoint });
}

function parseWith<T>(schema: z.ZodType<T>, body: unknown, endpoint: string, what: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issues = issuesOf(parsed.error);
  throw new ReportResponseError(
    `${endpoint}: the ${what} does not have the published shape (${issues[0]})`,
    { endpoint, body },
    issues,
  );
}

function issuesOf(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`);
}

/**
 * The REST search body is not published. Plausible shapes are a bare array or an object holding the list
 * under a common key (possibly one level down, `{data: {items: []}}`); anything else is a clear error.
 */
export function readSearchBody(body: unknown, endpoint = 'GET /v1/search'): SearchResult {
  const found = locateList(body);
  if (!found) {
    const keys = typeof body === 'object' && body !== null ? Object.keys(body).join(', ') : typeof body;
    throw new ReportResponseError(
      `${endpoint}: unrecognised search body (expected a list of reports; got ${keys || 'an empty object'})`,
      { endpoint, body },
      ['no list of results found'],
    );
  }
  const hits: SearchHit[] = [];
  const issues: string[] = [];
  for (const [i, raw] of found.list.entries()) {
    // GraphQL-style connections wrap each item: `{node: {...}}`.
    const item =
      typeof raw === 'object' && raw !== null && 'node' in raw ? (raw as { node: unknown }).node : raw;
    const parsed = searchHitSchema.safeParse(item);
    if (parsed.success) hits.push(parsed.data);
    else issues.push(`item ${i}: ${issuesOf(parsed.error)[0]}`);
  }
  if (hits.length === 0 && issues.length > 0) {
    throw new ReportResponseError(`${endpoint}: no search result has a slug`, { endpoint, body }, issues);
  }
  return { hits, shape: found.shape, skipped: issues };
}

function locateList(body: unknown): { list: unknown[]; shape: string } | null {
  if (Array.isArray(body)) return { list: body, shape: 'array' };
  if (typeof body !== 'object' || body === null) return null;
  const record = body as Record<string, unknown>;
  for (const key of SEARCH_LIST_KEYS) {
    const v = record[key];
    if (Array.isArray(v)) return { list: v, shape: key };
  }
  for (const key of SEARCH_LIST_KEYS) {
    const v = record[key];
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const inner = locateList(v);
      if (inner) return { list: inner.list, shape: `${key}.${inner.shape}` };
    }
  }
  return null;
}
