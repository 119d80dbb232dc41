import type { Router } from 'express';
import type { z } from 'zod';
import type { OAuthStateStore } from '../auth/oauth-state.js';
import type { AccessTokenSource, AppTokenRequest, TokenRefresher } from '../auth/token-manager.js';
import type { FieldKey } from '../fields.js';
import type { Installation, InstallationStore, StoredTokens } from '../installations/store.js';
import type { Logger } from '../log.js';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import type { SecretBox } from '../util/secretbox.js';
import type { CrmChange, CrmConnector, ProviderLimits, UsageListener } from './connector.js';
import type { OAuthPageRenderer } from './oauth-page.js';
import type { ListingGuide } from './public-pages.js';
import type { RecordCardHost } from './record-card.js';
import type { RequestGate } from './request-gate.js';

/**
 * Everything the application knows about one CRM, handed over as one object by `connectors/<crm>/index.ts`.
 * Everything CRM-specific the rest of the application shows or decides comes from here: names for people,
 * field API names, activity wording, how finely values compare (`limits.valueGrain`), retry numbers.
 * The server, bootstrap, CLI, configuration and the local system loop over the provider list
 * (src/providers.ts) instead of naming a CRM, so a third CRM is a new folder plus one line there.
 * `C` is the provider's own configuration section (`config[kind]`), read from its own environment keys.
 */

/** What the application configuration offers every provider besides its own section. */
export interface HostConfig {
  /** `APP_URL`: public base URL of this connector (OAuth redirects, webhook signatures). */
  appUrl: string;
}

/** The configuration a provider reads: the host's part and its own section under its kind. */
export type ProviderConfig<K extends string, C> = HostConfig & { [P in K]: C };

export interface ConnectorInput<K extends string, C> {
  config: ProviderConfig<K, C>;
  installation: Installation;
  tokens: AccessTokenSource;
  /**
   * A token of the app itself (a client-credentials grant) named `name`, through the token manager: asked for
   * with `request` once and shared by every installation's connectors until it expires.
   */
  appToken(name: string, request: AppTokenRequest): AccessTokenSource;
  gate: RequestGate;
  /** Webhook-driven work is urgent; backfills, polls and the sweep are not (a provider may pause those). */
  urgent: boolean;
  /**
   * What the provider keeps for this installation from one connector to the next in this application (a CRM's
   * daily API usage as its last answer said): made by `make` the first time, dropped once unused for a day.
   */
  kept<T>(make: () => T): T;
  /** Told each usage reading the connector takes from the CRM's answers; absent: only apiUsage() says it. */
  onUsage?: UsageListener;
}

/** Redis, its keys and the secret box, for a provider that keeps records of its own (its OAuth connections). */
export interface ProviderStorage {
  redis: RedisClient;
  keys: Keys;
  box: SecretBox;
  /**
   * The provider's own store `name` (its OAuth connections, its card rate limit), built by `make` the first
   * time and handed out after: a provider builds its stores once per application, in its index.ts.
   */
  store<T>(name: string, make: () => T): T;
}

/** Which webhook event ids were taken in lately (webhooks/crm-event-marks.ts): repeated deliveries are dropped. */
export interface WebhookEventMarks {
  /** The ids of these not taken in within the window. */
  unseen(ids: readonly string[]): Promise<Set<string>>;
  /** Marks ids taken in, once their changes are queued. */
  remember(ids: readonly string[]): Promise<void>;
}

/** What a provider's HTTP routes may use of the application. */
export interface ProviderHost {
  storage: ProviderStorage;
  states: OAuthStateStore;
  installations: InstallationStore;
  logger: Logger;
  /** An OAuth install finished: create the fields, schedule polling, start the first backfill. */
  installed(installation: Installation): Promise<void>;
  /**
   * The CRM reported changes for the installation it knows as `externalId`. Resolves once they are durably
   * queued (or ignored because the installation is unknown or not connected); a throw means "retry later".
   */
  crmChanged(externalId: string, changes: CrmChange[]): Promise<void>;
  /** Records, review decisions and report requests for a CRM's record card (an app card on the record). */
  cards?: RecordCardHost;
  /** Event ids of the CRM's webhooks already taken in, for a provider whose events carry one. */
  eventMarks?: WebhookEventMarks;
  /** A webhook answers 503 when its work is not done by then (Redis hung): the CRM sends it again. */
  webhookDeadlineMs?: number;
  /** The OAuth routes' result pages in the admin's look (src/crm/oauth-page.ts). */
  oauthPage?: OAuthPageRenderer;
}

/** Whether an installation's changes arrive over its stream or wait for the poll, and why, for people. */
export interface ChangeStreamState {
  mode: 'stream' | 'poll';
  detail: string;
  /**
   * Why a stream that runs leaves the changes to the poll: the CRM does not offer the channel to this account
   * (`unavailable`), or it reconnects after an error (`reconnecting`).
   */
  reason?: 'unavailable' | 'reconnecting';
}

/** What a provider's change stream (a subscription the CRM pushes changes over) needs of the application. */
export interface ChangeStreamInput {
  installation: Installation;
  tokens: AccessTokenSource;
  storage: ProviderStorage;
  logger: Logger;
  /** Queues the changes; resolves once they are durably queued, throws when they could not be. */
  deliver(changes: CrmChange[]): Promise<void>;
  /** The stream cannot say what changed (a gap, an overflow, a lost position): the change poll runs now. */
  catchUp(reason: string): Promise<void>;
  /** Which of these records were merged away, and into which (CrmConnector.survivorsOf). */
  survivorsOf(recordIds: readonly string[]): Promise<Map<string, string>>;
  /** The stream's state as it changes (streaming, or on the poll and why). */
  report(state: ChangeStreamState): void;
  /** Aborted when the stream must end (the process stops, the lease was lost). */
  signal: AbortSignal;
}

/** A CRM that pushes changes over a long-lived subscription the worker holds, beside its poll. */
export interface ChangeStreamSource<K extends string, C> {
  /** The stream's name for people: "Change Data Capture". */
  label: string;
  /** The environment variable that switches it on, named to an admin when it is off. */
  variable: string;
  enabled(config: ProviderConfig<K, C>): boolean;
  /** Runs one installation's stream until `input.signal` aborts, reconnecting on its own. */
  run(config: ProviderConfig<K, C>, input: ChangeStreamInput): Promise<void>;
}

/** What a provider needs to end an installation's authorisation. */
export interface RevokeInput {
  installation: Installation;
  tokens: StoredTokens;
  /** A valid access token on demand (refreshed when needed), for a CRM that revokes with one. */
  accessToken: AccessTokenSource;
  signal: AbortSignal;
}

/** A seed company in CRM-neutral terms (the local system's demo and test data). */
export interface LocalSeedCompany {
  name: string;
  domain: string | null;
  country: string | null;
  city: string | null;
  industry: string | null;
  /** The connector's `slug` field, set by a person before the connector ever ran. */
  slug: string | null;
}

/** A record of a local stand-in as the connector wrote it, by field key; absent or empty values are null. */
export interface LocalRecordView {
  id: string;
  name: string | null;
  fields: Partial<Record<FieldKey, string | null>>;
}

export interface LocalStandInOptions {
  /** The connector's public URL, where the stand-in delivers webhooks if its CRM sends any. */
  appUrl: string;
  /** A scaled-down budget for tests of the connector's pacing. */
  rateLimit?: { max: number; intervalMs: number };
  /**
   * For a CRM whose record changes stream only once the record type is selected for them: `selected` from the
   * start (the default), `unselected` (the connector's install-time setup selects it), or `refused` (unselected,
   * and the CRM refuses the selection). Other stand-ins ignore it.
   */
  changeEvents?: 'selected' | 'unselected' | 'refused';
}

/** A provider's CRM running in this process, for the demo, the integration tests and the benchmarks. */
export interface LocalStandIn<K extends string, H> {
  kind: K;
  /** The stand-in itself, for tests that inject faults or read its counters. */
  handle: H;
  url: string;
  /** Environment that points the connector at the stand-in in token mode. */
  env: Record<string, string>;
  /**
   * What a further worker process needs to reach the stand-in: no token-mode token, so a worker never
   * installs anything itself.
   */
  workerEnv: Record<string, string>;
  /**
   * Creates the companies and returns their ids, same order. `ensureFields` creates the connector's fields,
   * for a CRM that refuses values of fields that do not exist yet.
   */
  seed(companies: readonly LocalSeedCompany[], ensureFields: () => Promise<void>): Promise<string[]>;
  read(id: string): LocalRecordView | undefined;
  close(): Promise<void>;
}

/** Alert activities as this CRM has them (CrmConnector.createActivity). */
export interface ActivityFacts {
  /** One activity on a record, for people: "a note on the company". */
  noun: string;
  /** What the CRM needs before activities can be written (a scope, a permission), shown beside the switch. */
  needs: string;
  /**
   * Where an admin of an OAuth installation installs the app again to grant what activities need, and the
   * link's words; null when the installation already has it.
   */
  grant: {
    path: string;
    label: string;
    /** What to do instead for an installation in token mode (no OAuth install to repeat). */
    tokenMode: string;
  } | null;
}

/** A retry layer of the CRM's client: what it retries and its numbers (the table in src/retry-budget.ts). */
export interface CrmRetryLayer {
  /** Where it lives and what it retries, for people. */
  retries: string;
  budget: Readonly<Record<string, number>>;
}

export interface CrmProvider<K extends string, C, H> {
  kind: K;
  /** The CRM's name for people. */
  label: string;
  /** What the CRM calls the account an installation belongs to ("portal", "org"). */
  accountNoun: string;
  /** The CRM's API name of each of the connector's fields (the FIELDS table of src/fields.ts). */
  fieldNames: Readonly<Record<FieldKey, string>>;
  activity: ActivityFacts;
  /** The retry layers of the CRM's client, by name. */
  retryBudget: Readonly<Record<string, CrmRetryLayer>>;
  /** What `writeManifests` writes, for people: "the <CRM> project". */
  manifestsName: string;
  /** Where an admin starts the OAuth install (and reconnects). */
  installPath: string;
  /** Its part of the public setup guide a marketplace listing links to; none: left out of that guide. */
  listingGuide?: ListingGuide;
  limits: ProviderLimits;
  /** The provider's own environment keys, with their defaults. */
  env: z.ZodObject;
  /** Reads this provider's section from the environment (with `env` above); throws ConfigError. */
  readConfig(env: Readonly<Record<string, string | undefined>>): C;
  /** The variable holding a token-mode installation's token: reconnecting means replacing it. */
  tokenVariable: string;
  /** Every variable a token-mode installation needs, `tokenVariable` among them, for people. */
  tokenModeVariables: readonly string[];
  /** Whether the connector polls for changes, and how often (ms); null when the CRM pushes webhooks. */
  pollIntervalMs(config: ProviderConfig<K, C>): number | null;
  /** Changes pushed over a subscription the workers hold (the poll stays as the safety net). */
  changeStream?: ChangeStreamSource<K, C>;
  /**
   * How the CRM itself pushes its changes, for people ("<CRM>'s webhooks"); absent when it pushes none and
   * they come by the poll or a `changeStream`.
   */
  pushedChanges?: string;
  createConnector(input: ConnectorInput<K, C>): CrmConnector;
  /** Null when no OAuth app can be configured (token mode only). */
  tokenRefresher(config: ProviderConfig<K, C>, storage: ProviderStorage): TokenRefresher | null;
  /** OAuth install/callback and inbound webhooks, as far as they are configured. */
  routes(config: ProviderConfig<K, C>, host: ProviderHost): Router[];
  /** Routes the provider adds to the admin JSON API (/admin/api), behind its authentication and CSRF check. */
  adminApi?(config: ProviderConfig<K, C>, storage: ProviderStorage): Router;
  /**
   * Ends an OAuth installation's authorisation in the CRM, called when it is removed. Resolves with what the CRM
   * said (`already_revoked`: it no longer knew the tokens); throws CrmRevocationError when it could not. Bounded
   * by `signal`.
   */
  revoke(
    config: ProviderConfig<K, C>,
    input: RevokeInput,
    storage: ProviderStorage,
  ): Promise<'revoked' | 'already_revoked'>;
  /** The installation of token mode (an access token in the environment), or null when not configured. */
  installFromToken(
    config: ProviderConfig<K, C>,
    installations: InstallationStore,
  ): Promise<Installation | null>;
  /**
   * Writes the CRM's app project for `appUrl` under `dir`; returns the files written. `env` may choose among
   * the project versions the provider supports (each provider documents its variable).
   */
  writeManifests(
    dir: string,
    appUrl: string,
    env?: Readonly<Record<string, string | undefined>>,
  ): Promise<string[]>;
  /**
   * Writes the modules the generator makes for the CRM's own component sources in this clone (components built
   * apart from the repository, which import nothing from it); returns the files written. `manifests` calls it
   * beside `writeManifests`; none: the CRM's components need none.
   */
  writeSources?(): Promise<string[]>;
  /** Starts a local stand-in of the CRM (loaded on demand: production never calls it). */
  startLocal(options: LocalStandInOptions): Promise<LocalStandIn<K, H>>;
}
