import type { TokenManager } from '../auth/token-manager.js';
import type { Config } from '../config.js';
import type { CrmConnector, UsageListener } from '../crm/connector.js';
import { CrmDisconnectedError } from '../crm/errors.js';
import { isLetIn } from '../installations/let-in.js';
import type { Installation, InstallationStore } from '../installations/store.js';
import type { Metrics } from '../metrics.js';
import { InstallationNotFoundError, InstallationStoppedError, NoReportKeyError } from '../pipeline/errors.js';
import type { InstallationHandle, InstallationRuntime, OpenOptions } from '../pipeline/runtime.js';
import { providerFor } from '../providers.js';
import {
  type GateLane,
  type GateState,
  identityOf,
  RedisRateGate,
  UNCAPPED_PER_MINUTE,
} from '../ratelimit/redis-gate.js';
import type { RedisClient } from '../redis.js';
import { ReportClient } from '../reports/client.js';
import { RETRY_BUDGET } from '../retry-budget.js';
import type { Keys } from '../storage/keys.js';
import type { CrmUsageReading, CrmUsageStore } from './crm-usage.js';
import { FixtureGuard, guardFixtureWrites } from './fixture-guard.js';
import { previewBeforeApproval, refuseDataWrites } from './preview-guard.js';

/** The share of a report key's burst that deferrable work leaves to urgent work. */
export const DEFERRABLE_RESERVE_SHARE = 0.5;

/**
 * The same for a CRM. Its window rolls (one CRM allows 110 in any 10 s), and a gate admits its burst on top of its
 * steady rate: with half the burst, a backfill alone could send 150 requests in 10 s, ran the window out and
 * held score changes back behind the hold that follows. Deferrable work keeps to a tenth of it.
 */
export const CRM_DEFERRABLE_RESERVE_SHARE = 0.9;

/**
 * Opens installations for the pipeline. Connectors are kept for a short while per process: they carry the
 * last seen rate-limit headers, which pace the next calls.
 */

const HANDLE_TTL_MS = 30_000;

/**
 * What a provider keeps for an installation (ConnectorInput.kept) is dropped once no connector was made for it
 * this long: a daily usage reading is a day old by then and says nothing of the rolling window any more.
 */
const KEPT_IDLE_MS = 24 * 3_600_000;

/** A report key's rate as its gate stores it, with the key's non-reversible name (two installations may share one). */
export interface ReportRateView extends GateState {
  keyId: string;
}

export class AppRuntime implements InstallationRuntime {
  private readonly handles = new Map<string, { handle: InstallationHandle; at: number; keyId: string }>();
  private readonly fixtures: FixtureGuard;
  private readonly kept = new Map<string, { value: unknown; at: number }>();

  constructor(
    private readonly config: Config,
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly installations: InstallationStore,
    private readonly tokens: TokenManager,
    /** The CRM usage readings in Redis (crm-usage.ts). */
    private readonly usage: CrmUsageStore,
    private readonly metrics?: Metrics,
  ) {
    this.fixtures = new FixtureGuard({ installations });
  }

  async open(installationId: string, options: OpenOptions = {}): Promise<InstallationHandle> {
    const urgent = options.urgent ?? false;
    const lane: GateLane = urgent ? (options.hot ? 'hot' : 'urgent') : 'deferrable';
    const preview = options.preview ?? false;
    const installation = await this.installations.get(installationId);
    if (!installation) throw new InstallationNotFoundError(installationId);
    if (!isLetIn(installation) && !preview) {
      // The central gate: every job that would list, read or write opens its installation here first.
      throw new InstallationStoppedError(installationId, 'it is waiting for approval');
    }
    if (installation.status === 'disconnected') {
      throw new CrmDisconnectedError(
        `installation ${installationId} is disconnected${installation.statusReason ? `: ${installation.statusReason}` : ''}`,
        installation.crm,
      );
    }
    if (installation.status === 'key_invalid') {
      throw new InstallationStoppedError(
        installationId,
        installation.statusReason ?? 'the report-service key is invalid',
      );
    }
    const apiKey = (await this.installations.getReportsApiKey(installationId)) ?? this.config.reports.apiKey;
    if (!apiKey) throw new NoReportKeyError(installationId);
    const keyId = identityOf(apiKey);
    const handleKey = `${installationId}:${lane}`;
    const cached = this.handles.get(handleKey);
    if (cached && cached.keyId === keyId && Date.now() - cached.at < HANDLE_TTL_MS) {
      return this.forUse({ ...cached.handle, installation }, preview);
    }
    const client = this.clientForLane(apiKey, lane);
    const onUsage = this.usage.recorder(installation.id);
    const connector = this.connectorFor(installation, urgent, lane, onUsage);
    const handle: InstallationHandle = {
      installation,
      connector: guardFixtureWrites(
        connector,
        installation.id,
        this.fixtures.check(installation, keyId, client, connector),
      ),
      client,
    };
    this.handles.set(handleKey, { handle, at: Date.now(), keyId });
    return this.forUse(handle, preview);
  }

  private forUse(handle: InstallationHandle, preview: boolean): InstallationHandle {
    if (!preview) return handle;
    const { id } = handle.installation;
    const connector = isLetIn(handle.installation)
      ? handle.connector
      : previewBeforeApproval(handle.connector, id);
    return { ...handle, connector: refuseDataWrites(connector, id) };
  }

  /** `onUsage`: where the connector's usage readings go (the pipeline's connectors: crm-usage.ts). */
  connectorFor(
    installation: Installation,
    urgent = false,
    lane: GateLane = urgent ? 'urgent' : 'deferrable',
    onUsage?: UsageListener,
  ): CrmConnector {
    const provider = providerFor(installation.crm);
    const limits = provider.limits;
    // As for report keys (clientForKey): deferrable work leaves most of the CRM's burst to urgent work.
    const gate = new RedisRateGate(this.redis, this.keys.crmGate(installation.id), {
      max: limits.requestsPerWindow,
      windowMs: limits.windowMs,
      lane,
      ...(lane === 'deferrable' ? { reserveMs: limits.windowMs * CRM_DEFERRABLE_RESERVE_SHARE } : {}),
      onWait: () => this.metrics?.rateLimitWaits.inc({ service: installation.crm }),
    });
    return provider.createConnector({
      config: this.config,
      installation,
      tokens: this.tokens.source(installation.id),
      appToken: (name, request) => this.tokens.appToken(name, request),
      gate,
      urgent,
      kept: (make) => this.keptFor(installation.id, make),
      ...(onUsage ? { onUsage } : {}),
    });
  }

  /** One value per installation for its provider's connectors; the ones unused for KEPT_IDLE_MS go first. */
  private keptFor<T>(installationId: string, make: () => T): T {
    const now = Date.now();
    for (const [id, entry] of this.kept) if (now - entry.at > KEPT_IDLE_MS) this.kept.delete(id);
    const entry = this.kept.get(installationId) ?? { value: make(), at: now };
    entry.at = now;
    this.kept.set(installationId, entry);
    return entry.value as T;
  }

  /**
   * A report-service client for `apiKey`. Urgent work (events, CRM changes, an admin's action) may use the key's
   * whole burst; other work leaves half of it to urgent work, so a backfill or a storm's repeats never make a
   * single change wait for the rate limit. The service publishes no limits: the key's gate learns its rate
   * from 429s and any rate-limit headers, shared in Redis; REPORTS_RATE_PER_MINUTE, when set, caps it.
   */
  clientForKey(apiKey: string, urgent = true): ReportClient {
    return this.clientForLane(apiKey, urgent ? 'urgent' : 'deferrable');
  }

  private clientForLane(apiKey: string, lane: GateLane): ReportClient {
    const gate = this.reportsGate(apiKey, lane);
    return new ReportClient({
      baseUrl: this.config.reports.apiUrl,
      apiKey,
      timeoutMs: this.config.reportsTimeoutMs,
      gate,
      onCall: (o) =>
        this.metrics?.upstreamCalls.inc({
          service: 'reports',
          endpoint: o.endpoint,
          outcome: String(o.outcome),
        }),
    });
  }

  /**
   * The report-service rate of the key `installation` reads with (its own, else the server's), as the key's gate
   * keeps it in Redis: the learnt rate, the ceiling, the last cut. Null when there is no key. Read only.
   */
  async reportRate(installation: Installation): Promise<ReportRateView | null> {
    const apiKey = (await this.installations.getReportsApiKey(installation.id)) ?? this.config.reports.apiKey;
    if (!apiKey) return null;
    const keyId = identityOf(apiKey);
    return { keyId, ...(await this.reportsGate(apiKey, 'urgent').state()) };
  }

  /** The CRM API usage the installation's connectors last saw, in any process (crm-usage.ts). Read only. */
  crmUsage(installationId: string): Promise<CrmUsageReading | null> {
    return this.usage.last(installationId);
  }

  /** The gate of one report key; every client of the key, in every process, shares its state in Redis. */
  private reportsGate(apiKey: string, lane: GateLane): RedisRateGate {
    const windowMs = 60_000;
    return new RedisRateGate(this.redis, this.keys.reportsGate(identityOf(apiKey)), {
      max: this.config.reportsRatePerMinute ?? UNCAPPED_PER_MINUTE,
      windowMs,
      lane,
      ...(lane === 'deferrable' ? { reserveMs: windowMs * DEFERRABLE_RESERVE_SHARE } : {}),
      adaptive: {},
      // A 429's long Retry-After pauses the key for everyone: a job meeting that pause is delayed by it (as the
      // job that got the 429 is) instead of holding its worker.
      maxWaitMs: RETRY_BUDGET.reportsHttp.maxRetryAfterMs,
      onWait: () => this.metrics?.rateLimitWaits.inc({ service: 'reports' }),
      onCut: () => this.metrics?.rateLimitCuts.inc({ service: 'reports' }),
    });
  }

  forget(installationId: string): void {
    for (const lane of ['urgent', 'hot', 'deferrable']) this.handles.delete(`${installationId}:${lane}`);
    this.fixtures.forget(installationId);
  }
}
