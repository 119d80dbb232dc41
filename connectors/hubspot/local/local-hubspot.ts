import { randomInt } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import {
  HUBSPOT_ACCESS_TOKEN_SECONDS,
  HUBSPOT_COMPANY_OBJECT_TYPE_ID,
  HUBSPOT_RATE_LIMITS,
  HUBSPOT_WEBHOOK,
} from '../provider.js';
import { computeHubSpotSignatureV3 } from '../webhooks/webhook-signature.js';
import {
  type LocalCompanySnapshot,
  LocalCompanyStore,
  type LocalNote,
  type SeedCompany,
} from './company-store.js';
import { LocalJournal } from './journal.js';
import { RollingBudget } from './rolling-budget.js';
import {
  createLocalHubSpotApp,
  LOCAL_INSTALLER,
  type LocalFaults,
  type LocalHubSpotContext,
  NO_FAULTS,
} from './routes.js';
import { LocalTokenRegistry } from './token-registry.js';
import { LocalHubSpotUsageError } from './usage-error.js';

/**
 * A local HubSpot for tests and the demo (never for production): one portal in memory, with the endpoints
 * the connector uses, HubSpot's status codes, headers and error bodies, a configurable rate budget, expiring
 * tokens, injectable faults, call counters and signed webhooks for a person's edits.
 */

/** Known test credentials: pass them as HUBSPOT_CLIENT_ID / HUBSPOT_CLIENT_SECRET against the stand-in. */
export const LOCAL_HUBSPOT_CLIENT_ID = 'local-hubspot-client-id';
export const LOCAL_HUBSPOT_CLIENT_SECRET = 'local-hubspot-client-secret';
export const LOCAL_HUBSPOT_PORTAL_ID = '62515';
/** The `sourceId` HubSpot puts on a person's edit: a user of the portal. */
export const LOCAL_PERSON_SOURCE_ID = 'userId:7001';
/** The stand-in is a developer test account by default, so fixture scores may be written to it. */
export const LOCAL_TEST_ACCOUNT_TYPE = 'DEVELOPER_TEST';

export interface LocalHubSpotOptions {
  portalId?: string;
  clientId?: string;
  clientSecret?: string;
  /** Access-token lifetime; HubSpot's is 30 minutes. */
  accessTokenTtlMs?: number;
  rotateRefreshTokens?: boolean;
  /** Accepted forever, with every scope: a private-app token (`HUBSPOT_ACCESS_TOKEN`). */
  privateAppToken?: string;
  /** Per-portal budget; HubSpot's is 110 per 10 s. */
  rateLimit?: { max: number; intervalMs: number };
  searchPerSecond?: number;
  /** Reported to private-app tokens in the daily headers. */
  dailyLimit?: number;
  /** Leave `hub_id` out of token responses (the connector must then introspect). */
  omitHubIdInTokenResponse?: boolean;
  /** Where signed webhooks for `notify: true` edits go (the app's `/webhooks/hubspot`). */
  webhookUrl?: string;
  /** `generic` sends `object.*` events with objectTypeId 0-2 (what a 2026.03 project subscribes to). */
  webhookFormat?: 'generic' | 'legacy';
  appId?: number;
  /** The portal's time zone in account details; HubSpot's own default is `US/Eastern`. */
  timeZone?: string;
  /** Account details' `accountType`: a developer test account unless a test asks for a production one. */
  accountType?: string;
  /** The portal's HubSpot-defined note -> company association type id, as its labels API answers (190 here). */
  noteToCompanyTypeId?: number;
  now?: () => number;
  random?: () => number;
}

export interface LocalHubSpotServer {
  url: string;
  close(): Promise<void>;
}

export interface NotifyOptions {
  /** POST a signed v3 webhook to `webhookUrl` for this change. */
  notify?: boolean;
}

export interface WebhookDelivery {
  status: number;
  events: Record<string, unknown>[];
}

export interface LocalHubSpotStats {
  calls: Record<string, number>;
  statuses: Record<string, number>;
  writes: { batches: number; records: number; unchangedRecords: number; propertyWrites: number };
  /** Records written per batch update, in order. */
  batchSizes: number[];
  webhooksSent: number;
}

export class LocalHubSpot {
  readonly app: Express;
  readonly portalId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly store: LocalCompanyStore;
  private readonly tokens: LocalTokenRegistry;
  private readonly ctx: LocalHubSpotContext;
  private readonly now: () => number;
  private webhooksSent = 0;
  private nextEventId = 1;

  constructor(private readonly options: LocalHubSpotOptions = {}) {
    this.now = options.now ?? Date.now;
    this.portalId = options.portalId ?? LOCAL_HUBSPOT_PORTAL_ID;
    this.clientId = options.clientId ?? LOCAL_HUBSPOT_CLIENT_ID;
    this.clientSecret = options.clientSecret ?? LOCAL_HUBSPOT_CLIENT_SECRET;
    this.store = new LocalCompanyStore(this.now);
    this.tokens = new LocalTokenRegistry({
      clientId: this.clientId,
      clientSecret: this.clientSecret,
      portalId: this.portalId,
      accessTokenTtlMs: options.accessTokenTtlMs ?? HUBSPOT_ACCESS_TOKEN_SECONDS * 1000,
      rotateRefreshTokens: options.rotateRefreshTokens ?? false,
      privateAppToken: options.privateAppToken,
      now: this.now,
    });
    const rate = options.rateLimit ?? {
      max: HUBSPOT_RATE_LIMITS.publishedPerWindow,
      intervalMs: HUBSPOT_RATE_LIMITS.windowMs,
    };
    this.ctx = {
      portalId: this.portalId,
      store: this.store,
      tokens: this.tokens,
      budget: new RollingBudget(rate.max, rate.intervalMs, this.now),
      searchBudget: new RollingBudget(
        options.searchPerSecond ?? HUBSPOT_RATE_LIMITS.searchPerSecond,
        1000,
        this.now,
      ),
      dailyLimit: options.dailyLimit ?? 250_000,
      dailyUsed: { count: 0 },
      faults: { ...NO_FAULTS },
      random: options.random ?? Math.random,
      includeHubIdInTokenResponse: !options.omitHubIdInTokenResponse,
      authorizeDecision: { value: 'approve' },
      signedIn: { user: { ...LOCAL_INSTALLER, hubId: this.portalId }, grantable: null },
      calls: {},
      statuses: {},
      timeZone: { value: options.timeZone ?? 'Etc/UTC' },
      accountType: { value: options.accountType ?? LOCAL_TEST_ACCOUNT_TYPE },
      requiredProperties: new Set(),
      noteToCompanyTypeId: { value: options.noteToCompanyTypeId ?? 190 },
      journal: new LocalJournal(this.now),
    };
    this.app = createLocalHubSpotApp(this.ctx);
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<LocalHubSpotServer> {
    const server: Server = createServer(this.app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const { port: bound } = server.address() as AddressInfo;
    return {
      url: `http://${host}:${bound}`,
      close: () =>
        new Promise<void>((resolve, reject) => {
          server.closeAllConnections();
          server.close((err) => (err ? reject(err) : resolve()));
        }),
    };
  }

  // ---- OAuth helpers ----------------------------------------------------------------------------------------

  /** A code as HubSpot's consent screen would hand to the app's callback (single use). */
  issueAuthCode(
    input: {
      redirectUri?: string;
      scopes?: readonly string[];
      user?: { userId: string; email: string; hubId: string };
    } = {},
  ): string {
    return this.tokens.issueAuthCode(input);
  }

  /** Every refresh token is refused from now on (`invalid_grant` / `BAD_REFRESH_TOKEN`). */
  /** What account details say the portal is (`STANDARD`: production). */
  setAccountType(accountType: string): void {
    this.ctx.accountType.value = accountType;
  }

  revokeRefreshTokens(): void {
    this.tokens.revokeRefreshTokens();
  }

  /** Every access token issued so far answers 401 from now on. */
  expireAccessTokens(): void {
    this.tokens.expireAccessTokens();
  }

  /**
   * Who is signed in to HubSpot at the consent screen from now on: a user of `hubId` (this portal unless given)
   * who may grant only `grantable` scopes (all when absent). `signInAs()` puts the installer back.
   */
  signInAs(
    user: { userId: string; email: string; hubId?: string } = LOCAL_INSTALLER,
    grantable: readonly string[] | null = null,
  ): void {
    this.ctx.signedIn = {
      user: { userId: user.userId, email: user.email, hubId: user.hubId ?? this.portalId },
      grantable,
    };
  }

  /** What `GET /oauth/authorize` does: approve (redirect with a code) or deny (`error=access_denied`). */
  setAuthorizeDecision(decision: 'approve' | 'deny'): void {
    this.ctx.authorizeDecision.value = decision;
  }

  // ---- data helpers -----------------------------------------------------------------------------------------

  /** `n` sample companies, or the given property maps. Seeding sends no webhooks. */
  seedCompanies(input: number | readonly SeedCompany[]): LocalCompanySnapshot[] {
    return this.store.seed(input);
  }

  getCompany(id: string): LocalCompanySnapshot | undefined {
    return this.store.snapshotOf(id);
  }

  /** Notes associated with a company (alert activities). */
  notesFor(companyId: string): LocalNote[] {
    return this.store.notesFor(companyId);
  }

  async createCompany(values: SeedCompany, options: NotifyOptions = {}): Promise<LocalCompanySnapshot> {
    const company = this.store.create(values, 'person');
    this.journal('creation', company.id);
    if (options.notify) await this.notify([this.event('creation', company.id)]);
    return company;
  }

  /** A person's edit in HubSpot. */
  async setCompanyProperty(
    id: string,
    name: string,
    value: string,
    options: NotifyOptions = {},
  ): Promise<LocalCompanySnapshot> {
    const company = this.store.setByPerson(id, name, value);
    this.journal('propertyChange', company.id, {
      propertyName: name,
      propertyValue: value,
      sourceId: LOCAL_PERSON_SOURCE_ID,
    });
    if (options.notify) {
      await this.notify([
        this.event('propertyChange', company.id, {
          propertyName: name,
          propertyValue: value,
          sourceId: LOCAL_PERSON_SOURCE_ID,
        }),
      ]);
    }
    return company;
  }

  async deleteCompany(id: string, options: NotifyOptions = {}): Promise<void> {
    this.store.delete(id);
    this.journal('deletion', id);
    if (options.notify) await this.notify([this.event('deletion', id)]);
  }

  /** Restores a deleted company (HubSpot's recycling bin), as a person does in the UI. */
  async restoreCompany(id: string, options: NotifyOptions = {}): Promise<LocalCompanySnapshot> {
    const company = this.store.restore(id);
    this.journal('restore', id);
    if (options.notify) await this.notify([this.event('restore', id)]);
    return company;
  }

  /**
   * A portal validation rule making `property` required. API writes through 2026-09 and later paths are then
   * refused, record by record, for records that would be left without a value.
   */
  requireProperty(property: string): void {
    this.ctx.requiredProperties.add(property);
  }

  /** `mergedId` is merged into `primaryId`, which survives. */
  async mergeCompanies(primaryId: string, mergedId: string, options: NotifyOptions = {}): Promise<void> {
    const { moved } = this.store.merge(primaryId, mergedId);
    this.journal('merge', primaryId, {
      primaryObjectId: Number(primaryId),
      mergedObjectIds: [Number(mergedId)],
      newObjectId: Number(primaryId),
      numberOfPropertiesMoved: moved,
    });
    if (options.notify) {
      await this.notify([
        this.event('merge', primaryId, {
          primaryObjectId: Number(primaryId),
          mergedObjectIds: [Number(mergedId)],
          newObjectId: Number(primaryId),
          numberOfPropertiesMoved: moved,
        }),
      ]);
    }
  }

  // ---- faults and counters ----------------------------------------------------------------------------------

  injectFaults(faults: Partial<LocalFaults>): void {
    Object.assign(this.ctx.faults, faults);
  }

  clearFaults(): void {
    Object.assign(this.ctx.faults, NO_FAULTS);
  }

  /** Changes the per-portal budget (and starts a fresh window). */
  setRateLimit(max: number, intervalMs: number): void {
    this.ctx.budget.max = max;
    this.ctx.budget.intervalMs = intervalMs;
    this.ctx.budget.reset();
  }

  stats(): LocalHubSpotStats {
    return {
      calls: { ...this.ctx.calls },
      statuses: { ...this.ctx.statuses },
      writes: { ...this.store.writes },
      batchSizes: [...this.store.batchSizes],
      webhooksSent: this.webhooksSent,
    };
  }

  resetStats(): void {
    for (const k of Object.keys(this.ctx.calls)) delete this.ctx.calls[k];
    for (const k of Object.keys(this.ctx.statuses)) delete this.ctx.statuses[k];
    Object.assign(this.store.writes, { batches: 0, records: 0, unchangedRecords: 0, propertyWrites: 0 });
    this.store.batchSizes.length = 0;
    this.webhooksSent = 0;
  }

  // ---- webhooks and the journal -----------------------------------------------------------------------------

  /** Journal entries kept for the portal's journal subscription (3 days), for tests. */
  journalSize(): number {
    return this.ctx.journal.size();
  }

  /** A person's change goes to the webhooks journal whether or not its webhook is sent (or arrives). */
  private journal(action: string, objectId: string, extra: Record<string, unknown> = {}): void {
    this.ctx.journal.record(this.portalId, action, {
      ...this.event(action, objectId, extra),
      subscriptionType: `object.${action}`,
      objectTypeId: HUBSPOT_COMPANY_OBJECT_TYPE_ID,
    });
  }

  private event(
    action: string,
    objectId: string,
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> {
    const generic = (this.options.webhookFormat ?? 'generic') === 'generic';
    return {
      eventId: this.nextEventId++,
      subscriptionId: randomInt(1, 1_000_000),
      portalId: Number(this.portalId),
      appId: this.options.appId ?? 1_234_567,
      occurredAt: this.now(),
      subscriptionType: generic ? `object.${action}` : `company.${action}`,
      attemptNumber: 0,
      objectId: Number(objectId),
      ...(generic ? { objectTypeId: HUBSPOT_COMPANY_OBJECT_TYPE_ID } : {}),
      changeSource: 'CRM_UI',
      ...extra,
    };
  }

  /** Sends events as HubSpot does: a JSON array, signed with v3 and the client secret. */
  async notify(events: Record<string, unknown>[]): Promise<WebhookDelivery> {
    const url = this.options.webhookUrl;
    if (!url) throw new LocalHubSpotUsageError('notify needs the webhookUrl option');
    const body = JSON.stringify(events);
    const timestamp = String(this.now());
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [HUBSPOT_WEBHOOK.timestampHeader]: timestamp,
        [HUBSPOT_WEBHOOK.signatureHeader]: computeHubSpotSignatureV3(
          this.clientSecret,
          'POST',
          url,
          body,
          timestamp,
        ),
      },
      body,
    });
    await res.arrayBuffer();
    this.webhooksSent++;
    return { status: res.status, events };
  }
}

export function createLocalHubSpot(options: LocalHubSpotOptions = {}): LocalHubSpot {
  return new LocalHubSpot(options);
}
