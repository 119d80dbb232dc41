import { createHash } from 'node:crypto';
import type { AppContext } from '../app/context.js';
import type { DecisionActor, NewDecision } from '../decisions/decision-log.js';
import {
  type LinkState,
  type MassAction,
  type MassActionLog,
  type MassKind,
  newMassId,
} from '../decisions/mass-actions.js';
import type { MatchStatus } from '../fields.js';
import type { Installation } from '../installations/store.js';
import type { RestoreLink } from '../records/record-commands.js';
import type { ReviewCandidate, ReviewItem } from '../storage/review-codec.js';
import { topTied } from '../storage/review-ties.js';
import type { SeenRecord } from '../storage/undo-reads.js';
import { AdminRequestError, explain } from './errors.js';
import type { BulkReviewDecision } from './schemas.js';

/**
 * Mass actions on the admin page and API: undoing a run's links, bulk accept or reject on the review queue,
 * and undoing any of those (or an undo). Each is first shown (`preview`: how many records, the first
 * SAMPLE_SIZE, a digest of the whole set); the page's confirmation carries the digest, so it applies only to
 * the set shown: when the set changed in between, SET_CHANGED answers with the new one. Once done, each is
 * kept (decisions/mass-actions.ts) with every record's link before and after, so it can be undone: an undo
 * restores the earlier links and sources exactly, except on records a person or an admin decided about after
 * it (the decision log's touch marks).
 */

export const SAMPLE_SIZE = 20;

export type MassRequest =
  | { kind: 'undo-run'; runId: string }
  | { kind: 'review'; bulk: BulkReviewDecision }
  | { kind: 'undo-mass'; massId: string };

/** One record of a mass action's set: the slug it has and the one it would have. */
export interface MassRow {
  recordId: string;
  name: string | null;
  from: string | null;
  to: string | null;
  /** The record's status now and the one it would be left with (for a record without a slug). */
  fromStatus: MatchStatus | null;
  toStatus: MatchStatus | null;
}

export interface MassPreview {
  request: MassRequest;
  /** Records it would change. */
  count: number;
  /** The first SAMPLE_SIZE of them. */
  sample: MassRow[];
  /** Records it was asked about and would leave alone, by reason (`touched`, `tied`, `not_in_review`, ...). */
  leftAlone: Record<string, number>;
  /** Digest of the set (kind, target, each record and its change): what a confirmation must carry. */
  confirm: string;
}

/** What became of one record of a bulk review decision (see AdminActions.resolveReviews). */
export interface BulkReviewResult {
  recordId: string;
  outcome: 'linked' | 'rejected' | 'not_in_review' | 'no_candidates' | 'tied' | 'failed';
  slug: string | null;
  status: MatchStatus | null;
}

export interface MassOutcome {
  massId: string | null;
  kind: MassKind;
  /** Records changed. */
  done: number;
  /** Records asked about and left alone (touched since, decided meanwhile, refused). */
  kept: number;
}

/** Tied records (storage/review-ties.ts) are never accepted by "the first candidate": a person picks. */
export { topTied };

interface Planned {
  rows: (Omit<MassRow, 'fromStatus' | 'toStatus'> & { before: LinkState; after: LinkState })[];
  leftAlone: Record<string, number>;
  /** Per record asked (review): why it is left alone. */
  skipped: Map<string, BulkReviewResult['outcome']>;
  items: Map<string, ReviewItem>;
  massUndone: MassAction | null;
  /** An undone run's: what was read of each record in the CRM (kept for a preview's confirmation). */
  seen?: Map<string, SeenRecord>;
  /** Planned from a preview's kept read rather than the CRM's. */
  reused?: boolean;
}

function emptyPlan(): Planned {
  return { rows: [], leftAlone: {}, skipped: new Map(), items: new Map(), massUndone: null };
}

export class AdminMassActions {
  readonly log: MassActionLog;

  constructor(
    private readonly ctx: AppContext,
    private readonly installation: (id: string) => Promise<Installation>,
  ) {
    this.log = ctx.stores.massActions;
  }

  /**
   * What the action would do now; changes nothing in the CRM or the links. An undone run's preview keeps what it
   * read of the CRM under its digest (UndoReads), for its confirmation.
   */
  async preview(installationId: string, request: MassRequest): Promise<MassPreview> {
    await this.installation(installationId);
    return this.shown(installationId, request, await this.plan(installationId, request));
  }

  /** The preview of a plan, its CRM read kept for the confirmation of that preview. */
  private async shown(installationId: string, request: MassRequest, planned: Planned): Promise<MassPreview> {
    const preview = this.previewOf(request, planned);
    if (planned.seen) await this.ctx.records.undoReads.save(installationId, preview.confirm, planned.seen);
    return preview;
  }

  /**
   * Does it. With `confirm`, only when the set is still the one that digest names (else 409 SET_CHANGED with
   * the new preview); without, at once (the API's one call).
   */
  async apply(
    installationId: string,
    request: MassRequest,
    by: DecisionActor,
    confirm?: string,
  ): Promise<MassOutcome & { results?: BulkReviewResult[] }> {
    await this.installation(installationId);
    let planned = await this.plan(installationId, request, confirm);
    if (confirm !== undefined && this.previewOf(request, planned).confirm !== confirm) {
      // Planned from the preview's kept read, the set differs: plan from the CRM as it is now, and keep that
      // read for the confirmation of the new set.
      if (planned.reused) planned = await this.plan(installationId, request);
      const now = await this.shown(installationId, request, planned);
      if (now.confirm !== confirm) {
        throw new AdminRequestError(
          409,
          'SET_CHANGED',
          'The records this would change are not the ones you confirmed: the set changed since it was shown. Check the new set and confirm again.',
          { preview: now },
        );
      }
    }
    try {
      switch (request.kind) {
        case 'undo-run':
          return await this.undoRun(installationId, request.runId, planned, by, confirm);
        case 'review':
          return await this.review(installationId, request.bulk, planned, by);
        case 'undo-mass':
          return await this.undoMass(installationId, planned, by);
      }
    } catch (err) {
      throw explain(err);
    }
  }

  private previewOf(request: MassRequest, planned: Planned): MassPreview {
    const target =
      request.kind === 'undo-run'
        ? request.runId
        : request.kind === 'undo-mass'
          ? request.massId
          : request.bulk.action;
    const set = [...planned.rows]
      .sort((a, b) => (a.recordId < b.recordId ? -1 : a.recordId > b.recordId ? 1 : 0))
      .map((r) => [r.recordId, r.from, r.to]);
    const confirm = createHash('sha256')
      .update(JSON.stringify([request.kind, target, set]))
      .digest('base64url')
      .slice(0, 32);
    return {
      request,
      count: planned.rows.length,
      sample: planned.rows.slice(0, SAMPLE_SIZE).map(({ recordId, name, from, to, before, after }) => ({
        recordId,
        name,
        from,
        to,
        fromStatus: before.status,
        toStatus: after.status,
      })),
      leftAlone: planned.leftAlone,
      confirm,
    };
  }

  /**
   * What a mass action would change, record by record, and what it leaves alone (and why). `confirm`: the
   * digest of the preview being confirmed, whose kept read (if still kept) stands for the CRM's.
   */
  private async plan(installationId: string, request: MassRequest, confirm?: string): Promise<Planned> {
    switch (request.kind) {
      case 'undo-run':
        return this.planUndoRun(installationId, request, confirm);
      case 'review':
        return this.planReview(installationId, request);
      case 'undo-mass':
        return this.planUndoMass(installationId, request);
    }
  }

  /** A run's own links, taken back except where a person decided since the run started. */
  private async planUndoRun(
    installationId: string,
    request: Extract<MassRequest, { kind: 'undo-run' }>,
    confirm?: string,
  ): Promise<Planned> {
    const run = await this.ctx.runs.get(request.runId);
    if (!run || run.installationId !== installationId) {
      throw new AdminRequestError(
        404,
        'RUN_NOT_FOUND',
        `Installation ${installationId} has no run ${request.runId}.`,
      );
    }
    const reuse =
      confirm !== undefined && (await this.ctx.records.undoReads.has(installationId, confirm))
        ? confirm
        : undefined;
    const { links, kept, seen } = await this.ctx.records
      .undoableLinks(installationId, request.runId, run.startedAt, reuse ? { reuse } : {})
      .catch((err: unknown) => {
        throw explain(err);
      });
    const ids = [...links.keys()];
    const statuses = await this.ctx.index.statusesOf(installationId, ids);
    const planned = emptyPlan();
    planned.seen = seen;
    planned.reused = reuse !== undefined;
    if (kept > 0) planned.leftAlone.touched = kept;
    ids.forEach((id, i) => {
      const link = links.get(id)!;
      planned.rows.push({
        recordId: id,
        name: link.name,
        from: link.slug,
        to: null,
        before: { slug: link.slug, source: link.source, status: statuses[i] ?? null },
        after: { slug: null, source: 'admin', status: 'no_match' },
      });
    });
    return planned;
  }

  /** A bulk review decision: the records still waiting with a candidate to take (not tied, for accept-first). */
  private async planReview(
    installationId: string,
    request: Extract<MassRequest, { kind: 'review' }>,
  ): Promise<Planned> {
    const { bulk } = request;
    const ids = [...new Set(bulk.recordIds)];
    const found = await this.ctx.index.reviews.itemsOf(installationId, ids);
    const planned = emptyPlan();
    ids.forEach((id, i) => {
      const item = found[i];
      let skip: BulkReviewResult['outcome'] | null = null;
      if (!item) skip = 'not_in_review';
      else if (bulk.action === 'accept-first' && item.candidates.length === 0) skip = 'no_candidates';
      else if (bulk.action === 'accept-first' && topTied(item)) skip = 'tied';
      if (skip || !item) {
        planned.skipped.set(id, skip ?? 'not_in_review');
        planned.leftAlone[skip ?? 'not_in_review'] = (planned.leftAlone[skip ?? 'not_in_review'] ?? 0) + 1;
        return;
      }
      planned.items.set(id, item);
      const before: LinkState = {
        slug: null,
        source: null,
        status: 'needs_review',
        candidates: item.candidates,
      };
      const slugs = item.candidates.map((c) => c.slug);
      const to = bulk.action === 'accept-first' ? item.candidates[0]!.slug : null;
      planned.rows.push({
        recordId: id,
        name: item.name,
        from: null,
        to,
        before,
        after: to
          ? { slug: to, source: 'admin', status: 'matched' }
          : { slug: null, source: 'admin', status: 'no_match', rejected: slugs },
      });
    });
    return planned;
  }

  /** A mass action undone: each record back to what it had before, except where a person decided since. */
  private async planUndoMass(
    installationId: string,
    request: Extract<MassRequest, { kind: 'undo-mass' }>,
  ): Promise<Planned> {
    const mass = await this.log.get(installationId, request.massId);
    if (!mass) {
      throw new AdminRequestError(
        404,
        'MASS_ACTION_NOT_FOUND',
        `Installation ${installationId} has no mass action ${request.massId} (they are kept 30 days).`,
      );
    }
    if (mass.undoneBy) {
      throw new AdminRequestError(
        409,
        'ALREADY_UNDONE',
        `That action was undone already (by ${mass.undoneBy}).`,
      );
    }
    const ids = mass.records.map((r) => r.id);
    const touched = mass.mark
      ? await this.ctx.decisions.touchedAfter(installationId, ids, mass.mark)
      : new Set<string>();
    const planned = emptyPlan();
    planned.massUndone = mass;
    if (touched.size > 0) planned.leftAlone.touched = touched.size;
    for (const r of mass.records) {
      if (touched.has(r.id)) continue;
      planned.rows.push({
        recordId: r.id,
        name: null,
        from: r.after.slug,
        to: r.before.slug,
        before: r.after,
        after: r.before,
      });
    }
    return planned;
  }

  private async undoRun(
    installationId: string,
    runId: string,
    planned: Planned,
    by: DecisionActor,
    confirm: string | undefined,
  ) {
    const ids = planned.rows.map((r) => r.recordId);
    // Each record only while it holds the slug it was shown with, as its write reads it: a plan from a kept read
    // cannot know of a change made in the CRM since (nor can a fresh one, of a change made while it writes).
    const moved = await this.ctx.records.unlinkShown(
      installationId,
      new Map(planned.rows.map((r) => [r.recordId, r.from!])),
    );
    if (confirm !== undefined) await this.ctx.records.undoReads.drop(installationId, confirm);
    const statuses = await this.ctx.index.statusesOf(installationId, ids);
    const massId = newMassId();
    const done = planned.rows.filter((r, i) => statuses[i] === 'no_match' && !moved.has(r.recordId));
    const mark = await this.ctx.decisions.add(
      installationId,
      done.map((r) => ({
        action: 'undo' as const,
        bulk: true,
        recordId: r.recordId,
        slug: null,
        by,
        evidence: { runId, previousSlug: r.from, massId },
      })),
    );
    const kept = planned.leftAlone.touched ?? 0;
    await this.save(
      installationId,
      { id: massId, kind: 'undo-run', runId, by, mark },
      done,
      kept + ids.length - done.length,
    );
    return {
      massId: done.length > 0 ? massId : null,
      kind: 'undo-run' as const,
      done: done.length,
      kept: kept + ids.length - done.length,
    };
  }

  private async review(
    installationId: string,
    bulk: BulkReviewDecision,
    planned: Planned,
    by: DecisionActor,
  ) {
    const links = new Map<string, string>();
    const rejected = new Map<string, string[]>();
    for (const r of planned.rows) {
      if (r.to) links.set(r.recordId, r.to);
      else rejected.set(r.recordId, r.after.rejected ?? []);
    }
    await this.ctx.records.resolveReviews(installationId, links, rejected);
    const ids = [...new Set(bulk.recordIds)];
    const statuses = await this.ctx.index.statusesOf(installationId, ids);
    const results: BulkReviewResult[] = ids.map((recordId, i) => {
      const status = statuses[i] ?? null;
      const slug = links.get(recordId) ?? null;
      const skip = planned.skipped.get(recordId);
      if (skip) return { recordId, outcome: skip, slug: null, status };
      // A record still waiting for review was not written (the CRM refused it or asked to retry later).
      if (status === 'needs_review' || status === null) return { recordId, outcome: 'failed', slug, status };
      return { recordId, outcome: slug ? 'linked' : 'rejected', slug, status };
    });
    const decided = new Map(
      results.filter((r) => r.outcome === 'linked' || r.outcome === 'rejected').map((r) => [r.recordId, r]),
    );
    const massId = newMassId();
    const mark = await this.ctx.decisions.add(
      installationId,
      [...decided.values()].map((r): NewDecision => {
        const candidates = planned.items.get(r.recordId)?.candidates ?? [];
        return {
          action: r.outcome === 'linked' ? 'accept' : 'reject',
          bulk: true,
          recordId: r.recordId,
          slug: r.slug,
          by,
          evidence: {
            candidates: evidenceOf(r.outcome === 'linked' ? candidates.slice(0, 1) : candidates),
            offered: candidates.length,
            massId,
          },
        };
      }),
    );
    const done = planned.rows
      .filter((r) => decided.has(r.recordId))
      .map((r) => ({ ...r, after: { ...r.after, status: decided.get(r.recordId)!.status } }));
    const kept = ids.length - done.length;
    await this.save(installationId, { id: massId, kind: bulk.action, by, mark }, done, kept);
    return { massId: done.length > 0 ? massId : null, kind: bulk.action, done: done.length, kept, results };
  }

  private async undoMass(installationId: string, planned: Planned, by: DecisionActor) {
    const undone = planned.massUndone!;
    const links = new Map<string, RestoreLink>(
      planned.rows.map((r) => [
        r.recordId,
        {
          slug: r.after.slug,
          source: r.after.source,
          ...(r.after.candidates ? { candidates: r.after.candidates } : {}),
          ...(r.before.rejected ? { rejectedRemove: r.before.rejected } : {}),
          ...(r.after.rejected ? { rejectedAdd: r.after.rejected } : {}),
        },
      ]),
    );
    await this.ctx.records.restoreRecords(installationId, links);
    const ids = planned.rows.map((r) => r.recordId);
    const slugs = await this.ctx.index.slugsOf(installationId, ids);
    const statuses = await this.ctx.index.statusesOf(installationId, ids);
    const done = planned.rows
      .filter((r, i) => (slugs[i] ?? null) === r.after.slug && statuses[i] !== null)
      .map((r) => ({ ...r, after: { ...r.after, status: statuses[ids.indexOf(r.recordId)] ?? null } }));
    const massId = newMassId();
    const mark = await this.ctx.decisions.add(
      installationId,
      done.map((r) => ({
        action: 'restore' as const,
        bulk: true,
        recordId: r.recordId,
        slug: r.to,
        by,
        evidence: { previousSlug: r.from, massId, ...(undone.runId ? { runId: undone.runId } : {}) },
      })),
    );
    const kept = (planned.leftAlone.touched ?? 0) + ids.length - done.length;
    await this.save(installationId, { id: massId, kind: 'restore', undoes: undone.id, by, mark }, done, kept);
    await this.log.markUndone(installationId, undone.id, massId);
    return { massId, kind: 'restore' as const, done: done.length, kept };
  }

  private async save(
    installationId: string,
    head: Pick<MassAction, 'id' | 'kind' | 'by' | 'mark'> & Partial<Pick<MassAction, 'runId' | 'undoes'>>,
    done: readonly { recordId: string; before: LinkState; after: LinkState }[],
    kept: number,
  ): Promise<void> {
    if (done.length === 0) return;
    await this.log.save(installationId, {
      ...head,
      at: new Date().toISOString(),
      done: done.length,
      kept,
      records: done.map((r) => ({ id: r.recordId, before: r.before, after: r.after })),
    });
  }
}

/** A candidate as the decision log keeps it: what the admin saw (slug, the report's score, why offered). */
export function evidenceOf(candidates: readonly ReviewCandidate[]) {
  return candidates.map((c) => ({ slug: c.slug, score: c.score ?? null, why: c.why ?? null }));
}
