import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalSystem } from '../../local/system.js';
import { deliverUntilAcknowledged, scoreChangedEvent } from '../../test/support/report-webhooks.js';

/**
 * The operator day's score events (issue 30): every few hundred ms a real score change in the report sandbox
 * and its signed `score.changed` to the connector (sent again until acknowledged), and when each one lands.
 *
 * Two measures of "landed", because during a backfill they differ by what the backfill has not reached yet:
 * - on the records linked when sent: every record whose `report_slug` was the event's slug when it was sent
 *   holds the new score (what real-time delivery owes; the target). An event whose slug had no linked
 *   record then is counted apart, never as landed.
 * - strict: every record the seed links to the slug holds it, whoever wrote it (the backfill included); an
 *   acknowledged event that never gets there is lost.
 * Either way a later event's score for the same slug counts too: the connector owes the newest score, not
 * each one.
 */

export interface SentEvent {
  slug: string;
  score: number;
  sentAt: number;
  ackAt: number | null;
  /** Strict: every record the seed links to the slug holds the score. */
  landedAt: number | null;
  /** Records whose `report_slug` was the slug when the event was sent. */
  linkedIds: string[];
  /** Every record of `linkedIds` holds the score; stays null when none was linked. */
  landedLinkedAt: number | null;
}

export interface LatencySummary {
  acknowledged: number;
  landed: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Landed within 10 s. */
  within10s: number;
}

/** On the records linked when sent; `acknowledged` counts only events that had one. */
export interface LinkedLatencySummary extends LatencySummary {
  /** Acknowledged events whose slug had no linked record when sent. */
  noRecordLinked: number;
}

export class ScoreEventSender {
  readonly events: SentEvent[] = [];
  private readonly recordsOf: Map<string, string[]>;
  private readonly pool: string[];
  private readonly deliveries: Promise<unknown>[] = [];
  private sending = false;
  private loop: Promise<void> = Promise.resolve();
  private landing: NodeJS.Timeout | undefined;

  constructor(
    private readonly system: LocalSystem,
    private readonly everyMs: number,
    private readonly idPrefix: string,
  ) {
    this.recordsOf = seedRecordsBySlug(system);
    this.pool = [...this.recordsOf.keys()];
  }

  start(): void {
    const sys = this.system;
    const url = `${sys.appUrl}/webhooks/reports`;
    const secret = sys.ctx.config.reports.webhookSecrets[0]!;
    this.sending = true;
    this.loop = (async () => {
      for (let n = 0; this.sending; n++) {
        const slug = this.pool[n % this.pool.length]!;
        const old = sys.sandbox.getReport(slug)?.score.overall ?? 50;
        const score = Math.round((((old - 10 + 7.25) % 85) + 10) * 100) / 100;
        sys.sandbox.updateReport(slug, { score: { overall: score } });
        const e: SentEvent = {
          slug,
          score,
          sentAt: Date.now(),
          ackAt: null,
          landedAt: null,
          linkedIds: sys.recordIds.filter((id) => sys.crm.record(id)?.slug === slug),
          landedLinkedAt: null,
        };
        this.events.push(e);
        this.deliveries.push(
          deliverUntilAcknowledged(
            url,
            secret,
            scoreChangedEvent(`${this.idPrefix}_${n}_${Date.now()}`, slug),
            {
              timeoutMs: 120_000,
            },
          ).then((log) => {
            e.ackAt = log.acknowledgedAt;
          }),
        );
        await sleep(this.everyMs);
      }
    })();
    this.landing = setInterval(() => this.mark(), 100);
  }

  /**
   * Stops sending, waits for every delivery to end, then up to `landWithinMs` for the acknowledged events to
   * land (strict); whatever has not by then is lost.
   */
  async stop(landWithinMs = 30_000): Promise<void> {
    this.sending = false;
    await this.loop;
    await Promise.all(this.deliveries);
    const deadline = Date.now() + landWithinMs;
    while (Date.now() < deadline && this.events.some((e) => e.ackAt !== null && e.landedAt === null))
      await sleep(200);
    clearInterval(this.landing);
    this.mark();
  }

  acknowledged(): SentEvent[] {
    return this.events.filter((e) => e.ackAt !== null);
  }

  /** Acknowledged events whose score never reached every record the seed links to their slug. */
  lost(): number {
    return this.acknowledged().filter((e) => e.landedAt === null).length;
  }

  private mark(): void {
    const now = Date.now();
    const { events } = this;
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      if (e.landedAt !== null && (e.landedLinkedAt !== null || e.linkedIds.length === 0)) continue;
      const accepted = [e.score, ...events.slice(i + 1).flatMap((l) => (l.slug === e.slug ? [l.score] : []))];
      const holds = (id: string) => {
        const score = this.system.crm.record(id)?.score;
        return score !== null && score !== undefined && accepted.some((s) => Math.abs(s - score) < 0.006);
      };
      if (e.landedAt === null && (this.recordsOf.get(e.slug) ?? []).every(holds)) e.landedAt = now;
      if (e.landedLinkedAt === null && e.linkedIds.length > 0 && e.linkedIds.every(holds))
        e.landedLinkedAt = now;
    }
  }
}

/** Records of each slug the seed links (matched), by record id: where an event's new score must end up. */
function seedRecordsBySlug(system: LocalSystem): Map<string, string[]> {
  const out = new Map<string, string[]>();
  system.seed.forEach((c, i) => {
    if (c.expected.status !== 'matched') return;
    const ids = out.get(c.expected.slug) ?? [];
    ids.push(system.recordIds[i]!);
    out.set(c.expected.slug, ids);
  });
  return out;
}

/** Strict: until every record the seed links to the slug holds the score. */
export function summarizeStrict(events: SentEvent[]): LatencySummary {
  const acked = events.filter((e) => e.ackAt !== null);
  return summary(
    acked.length,
    acked.flatMap((e) => (e.landedAt === null ? [] : [e.landedAt - e.sentAt])),
  );
}

/** Until every record linked to the slug when the event was sent holds the score. */
export function summarizeLinked(events: SentEvent[]): LinkedLatencySummary {
  const acked = events.filter((e) => e.ackAt !== null);
  const linked = acked.filter((e) => e.linkedIds.length > 0);
  return {
    ...summary(
      linked.length,
      linked.flatMap((e) => (e.landedLinkedAt === null ? [] : [e.landedLinkedAt - e.sentAt])),
    ),
    noRecordLinked: acked.length - linked.length,
  };
}

function summary(acknowledged: number, ms: number[]): LatencySummary {
  const sorted = [...ms].sort((a, b) => a - b);
  const pct = (p: number) =>
    sorted.length === 0
      ? Number.NaN
      : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return {
    acknowledged,
    landed: ms.length,
    p50Ms: pct(50),
    p95Ms: pct(95),
    maxMs: sorted.at(-1) ?? Number.NaN,
    within10s: ms.filter((m) => m <= 10_000).length,
  };
}
