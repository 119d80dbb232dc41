import { z } from 'zod';
import type { AccessTokenSource, AppTokenRequest } from '../../../src/auth/token-manager.js';
import { CrmTransientError, CrmUnauthorizedError } from '../../../src/crm/errors.js';
import { HUBSPOT_COMPANY_OBJECT_TYPE_ID, HUBSPOT_PROVIDER } from '../provider.js';

/**
 * HubSpot's webhooks journal (2026-03), read to recover company changes whose webhooks never arrived (an
 * outage of the connector, a dropped delivery). The journal keeps 3 days of the events of an app's journal
 * subscriptions; it is read with a client-credentials token of the app, not with the portal's OAuth token.
 * Shapes as in HubSpot's published 2026-03 spec (webhooksJournal.json): batch reads answer
 * `{status, results: [{currentOffset, expiresAt, url}], ...}`; `url` is a file holding the entries. The file's
 * content is not in the spec: it is read leniently (journal-entries.ts). Not tried against HubSpot itself.
 */

export const HUBSPOT_JOURNAL_PATHS = {
  token: '/oauth/2026-03/token',
  subscriptions: '/webhooks-journal/subscriptions/2026-03',
  local: '/webhooks-journal/journal-local/2026-03',
} as const;

/**
 * What the client-credentials token is asked for: read the journal, manage the portal's subscription, and read
 * the object the subscription is for. HubSpot's journal guide asks for the subscribed object type's own scopes
 * besides the journal's; companies are read with `crm.objects.companies.read`, one of the app's install scopes
 * (a client-credentials token can carry only scopes the app lists).
 */
export const HUBSPOT_JOURNAL_SCOPES = [
  'developer.webhooks_journal.read',
  'developer.webhooks_journal.subscriptions.read',
  'developer.webhooks_journal.subscriptions.write',
  'crm.objects.companies.read',
] as const;

/** Company events the subscription asks the journal to keep, and the properties whose changes matter. */
export const HUBSPOT_JOURNAL_ACTIONS = ['CREATE', 'UPDATE', 'DELETE', 'MERGE', 'RESTORE'] as const;

export const HUBSPOT_JOURNAL_LIMITS = {
  /** Entries asked for in one batch read. */
  batchCount: 100,
  /** Batch reads in one recovery pass: what is left waits for the next pass. */
  maxBatches: 10,
  /** How far back the journal reaches (HubSpot keeps 3 days). */
  retentionMs: 3 * 24 * 3_600_000,
  requestTimeoutMs: 15_000,
} as const;

const tokenSchema = z.looseObject({
  access_token: z.string().min(1),
  expires_in: z.coerce.number().positive(),
});

export const journalFetchSchema = z.looseObject({
  currentOffset: z.string().min(1),
  expiresAt: z.string().optional(),
  url: z.string().min(1),
});

export const journalBatchSchema = z.looseObject({
  status: z.string().optional(),
  results: z.array(journalFetchSchema),
});

export interface HubSpotJournalConfig {
  apiUrl: string;
  /**
   * The app's client-credentials token (`journalTokenRequest` below), through the token manager's
   * `appToken`: one per app, shared by every portal's reader.
   */
  tokens: AccessTokenSource;
  /** The portal (installation) whose journal is read. */
  portalId: string;
  /** Company properties whose changes the subscription keeps (name, domain, the slug). */
  properties: readonly string[];
  fetch?: typeof fetch;
}

/** The app's credentials, which a client-credentials token is asked for with. */
export interface JournalAppCredentials {
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  fetch?: typeof fetch;
}

/** A pass over the journal: the entries' raw JSON, and where the next pass starts. */
export interface JournalPass {
  entries: unknown[];
  /** The offset of the last entry read; `null` when the journal held nothing past the start. */
  offset: string | null;
  /** True when the start offset had expired: the pass began at the journal's earliest entry. */
  restarted: boolean;
}

export class HubSpotJournal {
  private readonly fetch: typeof fetch;

  constructor(private readonly config: HubSpotJournalConfig) {
    this.fetch = config.fetch ?? fetch;
  }

  /** Creates or updates the portal's company subscription (the endpoint upserts). */
  async subscribe(): Promise<void> {
    await this.call('POST', HUBSPOT_JOURNAL_PATHS.subscriptions, {
      subscriptionType: 'OBJECT',
      portalId: Number(this.config.portalId),
      objectTypeId: HUBSPOT_COMPANY_OBJECT_TYPE_ID,
      actions: [...HUBSPOT_JOURNAL_ACTIONS],
      objectIds: [],
      properties: [...this.config.properties],
    });
  }

  /** The newest entry's offset, where a reader that starts now begins; null for an empty journal. */
  async latestOffset(): Promise<string | null> {
    const batch = await this.batch(`batch/latest/1`);
    return batch?.results.at(-1)?.currentOffset ?? null;
  }

  /**
   * The entries after `offset` (from the earliest when null or expired), at most `maxBatches` batch reads.
   * A file that cannot be fetched fails the pass, which keeps its start: nothing is skipped.
   */
  async readAfter(offset: string | null): Promise<JournalPass> {
    const { batchCount, maxBatches } = HUBSPOT_JOURNAL_LIMITS;
    let batch = offset ? await this.batch(`batch/${encodeURIComponent(offset)}/next/${batchCount}`) : null;
    const restarted = offset !== null && batch === null;
    batch ??= await this.batch(`batch/earliest/${batchCount}`);
    let at = restarted ? null : offset;
    const entries: unknown[] = [];
    for (let i = 0; batch !== null && batch.results.length > 0; i++) {
      for (const result of batch.results) {
        entries.push(...(await this.file(result.url)));
        at = result.currentOffset;
      }
      if (batch.results.length < batchCount || i + 1 >= maxBatches || at === null) break;
      batch = await this.batch(`batch/${encodeURIComponent(at)}/next/${batchCount}`);
    }
    return { entries, offset: at, restarted };
  }

  /** A batch read of the portal's local journal; null when HubSpot answers 404 (an expired or unknown offset). */
  private async batch(path: string): Promise<z.infer<typeof journalBatchSchema> | null> {
    const query = `installPortalId=${encodeURIComponent(this.config.portalId)}`;
    const res = await this.call('GET', `${HUBSPOT_JOURNAL_PATHS.local}/${path}?${query}`, undefined, [404]);
    if (res === null) return null;
    const parsed = journalBatchSchema.safeParse(res);
    if (!parsed.success) {
      throw new CrmTransientError(`HubSpot's journal answered an unreadable batch`, HUBSPOT_PROVIDER);
    }
    return parsed.data;
  }

  private async file(url: string): Promise<unknown[]> {
    const res = await this.fetch(url, {
      signal: AbortSignal.timeout(HUBSPOT_JOURNAL_LIMITS.requestTimeoutMs),
    });
    const text = await res.text();
    if (!res.ok) {
      throw new CrmTransientError(`a journal file answered ${res.status}`, HUBSPOT_PROVIDER, res.status);
    }
    return journalFileEntries(text);
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    absent: readonly number[] = [],
  ): Promise<unknown> {
    let token = await this.config.tokens.current();
    for (let attempt = 0; ; attempt++) {
      const res = await this.fetch(`${this.config.apiUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(HUBSPOT_JOURNAL_LIMITS.requestTimeoutMs),
      });
      const json: unknown = await res.json().catch(() => null);
      if (res.ok) return json;
      if (absent.includes(res.status)) return null;
      // A token HubSpot no longer takes (revoked, rotated secret): drop it and ask once for a new one.
      if (res.status === 401 && attempt === 0) {
        token = await this.config.tokens.refreshAfterRejection(token);
        continue;
      }
      throw new CrmTransientError(
        `HubSpot's webhooks journal answered ${res.status} to ${method} ${path.split('?')[0]}`,
        HUBSPOT_PROVIDER,
        res.status,
      );
    }
  }
}

/** Asks HubSpot for a client-credentials token of the app, for the token manager's `appToken`. */
export function journalTokenRequest(app: JournalAppCredentials): AppTokenRequest {
  const fetchFn = app.fetch ?? fetch;
  return async () => {
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      scope: HUBSPOT_JOURNAL_SCOPES.join(' '),
    });
    const res = await fetchFn(`${app.apiUrl}${HUBSPOT_JOURNAL_PATHS.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
      signal: AbortSignal.timeout(HUBSPOT_JOURNAL_LIMITS.requestTimeoutMs),
    });
    const json: unknown = await res.json().catch(() => null);
    const parsed = tokenSchema.safeParse(json);
    if (!res.ok || !parsed.success) {
      throw new CrmUnauthorizedError(
        `HubSpot refused the app's client-credentials token for the webhooks journal (${res.status}): check HUBSPOT_CLIENT_ID, HUBSPOT_CLIENT_SECRET and the app's journal scopes`,
        HUBSPOT_PROVIDER,
        res.status,
      );
    }
    return { accessToken: parsed.data.access_token, expiresAt: Date.now() + parsed.data.expires_in * 1000 };
  };
}

/**
 * The entries of a journal file. Its format is not in HubSpot's spec: a JSON array, an object holding one
 * (`results`, `events`, `entries`), or JSON lines are all read; anything else is no entry.
 */
export function journalFileEntries(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  try {
    const json: unknown = JSON.parse(trimmed);
    if (Array.isArray(json)) return json;
    if (typeof json === 'object' && json !== null) {
      for (const key of ['results', 'events', 'entries']) {
        const list = (json as Record<string, unknown>)[key];
        if (Array.isArray(list)) return list;
      }
      return [json];
    }
    return [];
  } catch {
    return trimmed.split('\n').flatMap((line) => {
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        return [];
      }
    });
  }
}
