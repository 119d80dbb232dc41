import { type ChangeSourceView, changeSourceOf } from '../app/change-source.js';
import type { AppContext } from '../app/context.js';
import type { ReportRateView } from '../app/runtime.js';
import type { ApiUsage, CrmKind } from '../crm/connector.js';
import { CrmDisconnectedError } from '../crm/errors.js';
import { MATCH_STATUSES, type MatchStatus } from '../fields.js';
import { isLetIn } from '../installations/let-in.js';
import type { ApprovalSource, Installation, InstallationStatus } from '../installations/store.js';
import {
  conflictingPlaceDigests,
  type DigestConflict,
  type SharedLinkConflict,
} from '../matching/shared-links.js';
import { InstallationNotFoundError, InstallationStoppedError, NoReportKeyError } from '../pipeline/errors.js';
import { HOT_COALESCE_MS } from '../pipeline/score-changes/updates.js';
import { providerFor } from '../providers.js';
import type { RunSummary } from '../storage/runs.js';
import type { EnvKeyCheck } from './env-key-check.js';

/**
 * Everything the admin page and `GET /admin/api/installations` show about one installation: connection state,
 * where its CRM changes come from, API usage as last seen, the report-service key, match coverage, the score
 * distribution, the review queue's length, the last run and the report key's learnt rate, all from Redis. One CRM read, only when there is
 * something to show: the domain and country of the records on reports whose auto-links disagree (Redis keeps
 * only digests of them, to save bytes per record). That read failing leaves the values out; it never fails the page.
 */

export interface ScoreBucket {
  from: number;
  to: number;
  count: number;
}

export interface ConnectionView {
  state: InstallationStatus;
  reason: string | null;
  /** Where a person reconnects a disconnected OAuth installation. */
  reconnectUrl: string | null;
  /** What to do instead when there is no link (token mode). */
  reconnectHint: string | null;
}

export interface ReportKeyView {
  /** Whose key the installation uses: its own (entered here), the server's REPORTS_API_KEY, or none. */
  source: 'installation' | 'environment' | 'none';
  /** Whether the key is a sandbox key (fixture data); null when not known. */
  sandbox: boolean | null;
  checkedAt: string | null;
  /** Why the key does not work, in plain words; null when it does or is not known. */
  problem: string | null;
  /** Whether the server has a key of its own (REPORTS_API_KEY) to go back to from one entered here. */
  serverKey: boolean;
}

export interface InstallationView {
  id: string;
  crm: CrmKind;
  externalId: string;
  mode: 'oauth' | 'token';
  createdAt: string;
  /** Who installed it and the portal's or org's name, as the CRM said at install (OAuth). */
  installedBy: string | null;
  accountName: string | null;
  /** Who let it in and when (null: not let in; `at` null when it ran before approvals were recorded). */
  approval: { by: ApprovalSource; at: string | null } | null;
  /** Set by the page for the approve form of a pending installation (the CSRF token, or null for none). */
  approveCsrf?: string | null;
  connection: ConnectionView;
  /** Where the CRM's changes come from now (its webhooks, the change stream, the poll) and why. */
  changeSource: ChangeSourceView;
  /** The CRM API usage last seen, and when (`at`) when it was stored (any process, after any call). */
  apiUsage: (ApiUsage & { at?: string }) | null;
  reportKey: ReportKeyView;
  /** The report key's rate as learnt from the service's 429s and headers (stored in Redis); null without a key. */
  reportRate: ReportRateView | null;
  coverage: { counts: Record<MatchStatus, number>; total: number };
  scores: { count: number; buckets: ScoreBucket[] };
  reviewCount: number;
  /**
   * A storm under way: reports whose score changes again and again wait in the hot lane, whose updates are
   * gathered for `coalesceSeconds` before each write (score-changes/updates.ts, HOT_COALESCE_MS). `reports` 0: none now.
   */
  storm: { reports: number; coalesceSeconds: number };
  /**
   * Reports auto-linked to several records that disagree on domain or country (at most MAX_SHARED_CONFLICTS),
   * with the records' domain and country as the CRM has them now.
   */
  sharedLinkConflicts: SharedLinkConflict[];
  /**
   * Why the records' domain and country are not shown (null when they are, or when there is no conflict): the
   * CRM could not be read. The conflicts are listed anyway, their records' values null.
   */
  sharedLinkPlacesProblem: string | null;
  lastRun: RunSummary | null;
  /** When a record's state last changed or a decision was made (ISO); null when neither is known. */
  lastChangeAt: string | null;
  /** Why record writes are refused (a sandbox key on a production CRM); null when they are not. */
  fixtureRefusal: string | null;
  /** An operator allowed fixture scores in this production CRM. */
  allowFixtureWrites: boolean;
}

export const MAX_SHARED_CONFLICTS = 20;

export const SCORE_BUCKETS = 10;

export class AdminOverview {
  constructor(
    private readonly ctx: AppContext,
    private readonly envKey: EnvKeyCheck,
  ) {}

  async list(): Promise<InstallationView[]> {
    const installations = await this.ctx.installations.list();
    // Pending installations first: they are the ones waiting for the operator.
    const ordered = [...installations.filter((i) => !isLetIn(i)), ...installations.filter((i) => isLetIn(i))];
    return Promise.all(ordered.map((i) => this.view(i)));
  }

  /**
   * `light`: what the installation's other pages show around their lists (title, badges, counts): no shared
   * links (and so no CRM read for their places) and no API usage.
   */
  async view(installation: Installation, options: { light?: boolean } = {}): Promise<InstallationView> {
    const { ctx } = this;
    const light = options.light === true;
    const [
      { counts, scoreBins, changedAt },
      reviewCount,
      runs,
      reportKey,
      apiUsage,
      shared,
      reportRate,
      decided,
      hot,
      changeSource,
    ] = await Promise.all([
      ctx.index.statuses.read(installation.id),
      ctx.index.reviews.count(installation.id),
      ctx.runs.recent(installation.id, 1),
      this.reportKey(installation),
      light ? null : this.apiUsage(installation),
      light ? [] : ctx.index.sharedAutoLinks(installation.id),
      ctx.runtime.reportRate(installation),
      ctx.decisions.latest(installation.id, 1),
      ctx.pipeline.pendingSlugs.count(installation.id, 'hot'),
      changeSourceOf(ctx, installation),
    ]);
    const conflicts = conflictingPlaceDigests(shared).slice(0, MAX_SHARED_CONFLICTS);
    const places = await this.sharedLinkPlaces(installation, conflicts);
    return {
      id: installation.id,
      crm: installation.crm,
      externalId: installation.externalId,
      mode: installation.mode,
      createdAt: installation.createdAt,
      installedBy: installation.installedBy ?? null,
      accountName: installation.accountName ?? null,
      approval: installation.approvedBy
        ? { by: installation.approvedBy, at: installation.approvedAt ?? null }
        : null,
      connection: connectionOf(installation),
      changeSource,
      apiUsage,
      reportKey,
      reportRate,
      coverage: { counts, total: MATCH_STATUSES.reduce((sum, s) => sum + counts[s], 0) },
      scores: {
        count: [...scoreBins.values()].reduce((a, b) => a + b, 0),
        buckets: weightedScoreBuckets(scoreBins, SCORE_BUCKETS),
      },
      reviewCount,
      storm: { reports: hot, coalesceSeconds: HOT_COALESCE_MS / 1000 },
      sharedLinkConflicts: places.conflicts,
      sharedLinkPlacesProblem: places.problem,
      lastRun: runs[0] ?? null,
      lastChangeAt: latestOf(changedAt, decided[0]?.at ?? null),
      fixtureRefusal: installation.fixtureRefusal ?? null,
      allowFixtureWrites: installation.allowFixtureWrites ?? false,
    };
  }

  /**
   * The conflicts with their records' domain and country read from the CRM (at most MAX_SHARED_CONFLICTS
   * reports' records, one read). Any failure (CRM down, disconnected, installation stopped) leaves the values
   * null and says why: the list of conflicts still helps, and the page must not fail for it.
   */
  private async sharedLinkPlaces(
    installation: Installation,
    conflicts: DigestConflict[],
  ): Promise<{ conflicts: SharedLinkConflict[]; problem: string | null }> {
    const unknown = (problem: string | null) => ({
      conflicts: conflicts.map((c) => ({
        slug: c.slug,
        differs: c.differs,
        records: c.recordIds.map((recordId) => ({ recordId, domain: null, country: null })),
      })),
      problem,
    });
    if (conflicts.length === 0) return unknown(null);
    const ids = [...new Set(conflicts.flatMap((c) => c.recordIds))];
    let read: Map<string, { domain: string | null; country: string | null }>;
    try {
      const { connector } = await this.ctx.runtime.open(installation.id, { urgent: true, preview: true });
      const companies = await connector.readCompanies(ids);
      read = new Map(companies.map((c) => [c.id, { domain: c.domain, country: c.country }]));
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.ctx.logger.warn(
        { installationId: installation.id, err: reason },
        'shared auto-links: could not read the records from the CRM',
      );
      return unknown(`the CRM could not be read (${reason})`);
    }
    return {
      conflicts: conflicts.map((c) => ({
        slug: c.slug,
        differs: c.differs,
        records: c.recordIds.map((recordId) => ({
          recordId,
          ...(read.get(recordId) ?? { domain: null, country: null }),
        })),
      })),
      problem: null,
    };
  }

  private async reportKey(installation: Installation): Promise<ReportKeyView> {
    const problem =
      installation.status === 'key_invalid' ? (installation.statusReason ?? 'the key was refused') : null;
    const serverKey = Boolean(this.ctx.config.reports.apiKey);
    if (installation.hasReportsApiKey) {
      return {
        source: 'installation',
        sandbox: installation.reportsKeySandbox ?? null,
        checkedAt: installation.reportsKeyCheckedAt ?? null,
        problem,
        serverKey,
      };
    }
    if (!serverKey) return { source: 'none', sandbox: null, checkedAt: null, problem, serverKey };
    const env = await this.envKey.state();
    return {
      source: 'environment',
      sandbox: env.state === 'ok' ? env.sandbox : null,
      checkedAt: env.state === 'unknown' ? null : env.checkedAt,
      problem: problem ?? (env.state === 'refused' ? env.message : null),
      serverKey,
    };
  }

  /**
   * Usage as the installation's connectors last saw it, in any process (stored in Redis after their calls);
   * without a stored reading, this process's own connector's, if it has called the CRM lately.
   */
  private async apiUsage(installation: Installation): Promise<(ApiUsage & { at?: string }) | null> {
    const stored = await this.ctx.runtime.crmUsage(installation.id);
    if (stored) return stored;
    try {
      return (await this.ctx.runtime.open(installation.id)).connector.apiUsage();
    } catch (err) {
      const cannotOpen =
        err instanceof InstallationStoppedError ||
        err instanceof CrmDisconnectedError ||
        err instanceof NoReportKeyError ||
        err instanceof InstallationNotFoundError;
      if (!cannotOpen) throw err;
      return this.ctx.runtime.connectorFor(installation).apiUsage();
    }
  }
}

export function connectionOf(installation: Installation): ConnectionView {
  const reason = installation.statusReason ?? null;
  if (!isLetIn(installation)) {
    return { state: 'pending', reason, reconnectUrl: null, reconnectHint: null };
  }
  if (installation.status !== 'disconnected') {
    return { state: installation.status, reason, reconnectUrl: null, reconnectHint: null };
  }
  if (installation.mode === 'oauth') {
    return {
      state: 'disconnected',
      reason,
      // Through the same OAuth app (connection) it was installed with, when it names one.
      reconnectUrl: installation.connectionId
        ? `${providerFor(installation.crm).installPath}?connection=${encodeURIComponent(installation.connectionId)}`
        : providerFor(installation.crm).installPath,
      reconnectHint: null,
    };
  }
  return {
    state: 'disconnected',
    reason,
    reconnectUrl: null,
    reconnectHint: `Set a new ${providerFor(installation.crm).tokenVariable} and restart the connector.`,
  };
}

/**
 * `count` equal buckets. The service does not publish the range of scores: when every score lies in 0–100 the
 * buckets span 0–100 (comparable between installations), otherwise they span the scores seen.
 */
export function scoreBuckets(scores: readonly number[], count: number): ScoreBucket[] {
  const weighted = new Map<number, number>();
  for (const score of scores) weighted.set(score, (weighted.get(score) ?? 0) + 1);
  return weightedScoreBuckets(weighted, count);
}

/**
 * The same from scores and how many records carry each: the kept score counts (storage/status-counts.ts) hold
 * scores by their integer part, which puts each record in its own bucket while the scores lie in 0–100.
 */
export function weightedScoreBuckets(scores: ReadonlyMap<number, number>, count: number): ScoreBucket[] {
  if (count < 1) return [];
  let lo = 0;
  let hi = 100;
  if (scores.size > 0) {
    // A loop, not Math.min(...scores): a large CRM has more scores than a call has room for arguments.
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (const s of scores.keys()) {
      if (s < min) min = s;
      if (s > max) max = s;
    }
    if (min < 0 || max > 100) {
      lo = Math.floor(min);
      hi = Math.ceil(max) === lo ? lo + 1 : Math.ceil(max);
    }
  }
  const width = (hi - lo) / count;
  const buckets = Array.from({ length: count }, (_, i) => ({
    from: round(lo + i * width),
    to: round(i === count - 1 ? hi : lo + (i + 1) * width),
    count: 0,
  }));
  for (const [score, n] of scores) {
    // The top edge belongs to the last bucket, so a perfect score is counted.
    const i = Math.min(count - 1, Math.max(0, Math.floor((score - lo) / width)));
    buckets[i]!.count += n;
  }
  return buckets;
}

function latestOf(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
