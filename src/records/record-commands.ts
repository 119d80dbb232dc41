import { markBefore } from '../decisions/decision-log.js';
import { type LinkSource, linkSourceOf } from '../fields.js';
import type { BatchJob, FirstBatchOrigin, RestoredLink } from '../pipeline/batch-job.js';
import type { BatchOutcome } from '../pipeline/enrich-batch.js';
import { enrichNow } from '../pipeline/enrich-now.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { SeenRecord, UndoReads } from '../storage/undo-reads.js';
import { chunk } from '../util/chunk.js';
import { ReviewWriteError } from './errors.js';

/** A run's link that an undo would take back: its slug, who the CRM says made it, the record's name. */
export interface UndoableLink {
  slug: string;
  source: LinkSource | null;
  name: string | null;
}

/** An earlier link to put back, with the rejected slugs to take out of the record's (`remove`) or put in (`add`). */
export type RestoreLink = RestoredLink & {
  rejectedRemove?: readonly string[];
  rejectedAdd?: readonly string[];
};

/**
 * Commands that act on records at once, inside the HTTP request (or CLI command) that asks for them: an
 * admin's review decisions, unlinks, re-matches and undone runs, and the refresh after a report request.
 * Each is written to the CRM through the batch path (enrich-batch.ts), in the CRM's batch size, before the
 * command returns; the answer can then say what the record became.
 */
export class RecordCommands {
  constructor(
    private readonly pipeline: Pipeline,
    /** What undo previews read, for their confirmations (built with the other stores, app/context.ts). */
    readonly undoReads: UndoReads,
  ) {}

  /**
   * A person's decision on the review queue, written to the CRM at once: accept a candidate or set a slug by
   * hand (the record is linked and enriched now, as a person's link), or reject the candidates (never offered
   * again for this record; the record becomes `no_match`).
   */
  async resolveReview(
    installationId: string,
    recordId: string,
    decision: { action: 'link'; slug: string } | { action: 'reject' },
  ): Promise<void> {
    const { runtime, index } = this.pipeline.deps;
    const targets = await runtime.open(installationId, { urgent: true });
    if (decision.action === 'reject') {
      const item = await index.reviews.item(installationId, recordId);
      await index.reviews.addRejectedSlugs(
        installationId,
        recordId,
        (item?.candidates ?? []).map((c) => c.slug),
      );
    } else {
      // Refuses a slug with no published report before anything is written (ReportNotFoundError).
      await targets.client.getReport(decision.slug);
    }
    // The link goes in the same write as the report's fields, under the record's lock like every batch's
    // write: a backfill batch holding the record waits, then plans from the admin's link, never over it.
    const { result } = await enrichNow(this.pipeline, targets, {
      installationId,
      batchId: 'review',
      mode: 'full',
      recordIds: [recordId],
      // Rejecting every candidate is the admin's decision that the record has no report.
      origin:
        decision.action === 'link'
          ? { kind: 'review', links: { [recordId]: decision.slug }, rejected: [] }
          : { kind: 'review', links: {}, rejected: [recordId] },
    });
    if (result.records === 0) throw new ReviewWriteError('the record is no longer in the CRM', 'NOT_FOUND');
    const failure = result.errors.find((e) => e.recordId === recordId);
    if (failure) throw new ReviewWriteError(failure.message, failure.code);
    if (decision.action === 'link') await index.dropAutoLink(installationId, recordId);
  }

  /**
   * Many review decisions at once (review at scale): accepted links (record id -> slug) become the admin's
   * links and rejected records (record id -> the candidates rejected) the admin's `no_match`. Both go through
   * the batch path in the CRM's batch size, so a thousand decisions cost a few batch reads and writes, never
   * one CRM call per record. A slug whose report is gone by now leaves its record linked and `not_published`,
   * as any other link.
   */
  async resolveReviews(
    installationId: string,
    links: ReadonlyMap<string, string>,
    rejected: ReadonlyMap<string, readonly string[]>,
  ): Promise<void> {
    for (const [recordId, slugs] of rejected) {
      await this.pipeline.deps.index.reviews.addRejectedSlugs(installationId, recordId, [...slugs]);
    }
    await this.enrichInChunks(
      installationId,
      'review-bulk',
      [...links.keys(), ...rejected.keys()],
      (ids) => ({
        kind: 'review',
        links: Object.fromEntries(ids.filter((id) => links.has(id)).map((id) => [id, links.get(id)!])),
        rejected: ids.filter((id) => rejected.has(id)),
      }),
    );
  }

  /**
   * An admin's "this is not the company": each record becomes `no_match` with source `admin` and is never
   * auto-linked again. Written through the batch path in the CRM's batch size, like any other update.
   */
  async unlinkRecords(installationId: string, recordIds: string[]): Promise<void> {
    await this.enrichInChunks(installationId, 'unlink', recordIds, () => ({ kind: 'unlink' }));
  }

  /**
   * Unlinks each record (record id -> the slug it was shown with) only while it still holds that slug, as
   * read by the write's own batch: the records left alone because they hold another slug (or none) by then.
   */
  async unlinkShown(installationId: string, shown: ReadonlyMap<string, string>): Promise<Set<string>> {
    const outcomes = await this.enrichInChunks(installationId, 'unlink', [...shown.keys()], (ids) => ({
      kind: 'unlink',
      from: Object.fromEntries(ids.map((id) => [id, shown.get(id)!])),
    }));
    return new Set(outcomes.flatMap((o) => o.slugMoved ?? []));
  }

  /**
   * A re-match asked for: a person's or an admin's `no_match` is lifted and the records are matched again as
   * in a full sync (rejected candidates stay rejected). A record holding a link keeps it.
   */
  async rematchRecords(installationId: string, recordIds: string[]): Promise<void> {
    await this.enrichInChunks(installationId, 'rematch', recordIds, () => ({ kind: 'rematch' }));
  }

  /**
   * The auto-links of one run that an undo would take back now: each record still on the run's slug in the
   * CRM that no person or admin decided about since the run started (the decision log's touch marks; the
   * record's `report_link_source` cannot tell, since a re-match to the same slug writes `auto` again). Each
   * with the source it holds, so undoing the undo restores it exactly. Writes nothing.
   *
   * The run's links are taken a page at a time (the CRM's read size), each page's untouched records read in
   * one CRM call: no more than one page of links and one read are in hand at once. With `reuse` (the digest a
   * preview showed), records that preview read (UndoReads) are taken from its read, not read again; `seen`
   * is every record's read, to keep for the next confirmation.
   */
  async undoableLinks(
    installationId: string,
    runId: string,
    runStartedAt: string,
    options: { reuse?: string } = {},
  ): Promise<{ links: Map<string, UndoableLink>; kept: number; seen: Map<string, SeenRecord> }> {
    const { runLinks, runtime, decisions, runs } = this.pipeline.deps;
    // A run's links include those of the runs it superseded: from the operator's side they were one sync,
    // which started when the first of them did.
    const superseded = await runs.supersededRuns(runId);
    let since = Date.parse(runStartedAt);
    for (const id of superseded) {
      const started = Date.parse((await runs.get(id))?.startedAt ?? '');
      if (Number.isFinite(started) && started < since) since = started;
    }
    const links = new Map<string, UndoableLink>();
    const seen = new Map<string, SeenRecord>();
    let asked = 0;
    let touchedIn: ((ids: readonly string[]) => Promise<Set<string>>) | null = null;
    const { connector } = await runtime.open(installationId, { urgent: true });
    for await (const made of runLinks.pagesOfRuns(
      installationId,
      [runId, ...superseded],
      connector.limits.readBatchSize,
    )) {
      asked += made.size;
      touchedIn ??= await decisions.touchedAfterIn(installationId, markBefore(since));
      const touched = await touchedIn([...made.keys()]);
      const ids = [...made.keys()].filter((id) => !touched.has(id));
      const stored = options.reuse
        ? await this.undoReads.get(installationId, options.reuse, ids)
        : new Map<string, SeenRecord>();
      const toRead = ids.filter((id) => !stored.has(id));
      for (const [id, record] of stored) seen.set(id, record);
      if (toRead.length > 0) {
        const read = new Map((await connector.readCompanies(toRead)).map((r) => [r.id, r]));
        for (const id of toRead) {
          const record = read.get(id);
          seen.set(
            id,
            record
              ? {
                  slug: typeof record.fields.slug === 'string' ? record.fields.slug : null,
                  source: linkSourceOf(record.fields.linkSource),
                  name: record.name,
                }
              : null,
          );
        }
      }
      for (const id of ids) {
        const record = seen.get(id);
        if (!record || record.slug !== made.get(id)) continue;
        links.set(id, { slug: record.slug, source: record.source, name: record.name });
      }
    }
    return { links, kept: asked - links.size, seen };
  }

  /**
   * Puts back each record's earlier link (an undone mass action): slug and source, a person's or an admin's
   * `no_match`, or the review item it waited with; slugs a bulk reject added to its rejected ones are taken
   * out first. Written through the batch path in the CRM's batch size.
   */
  async restoreRecords(installationId: string, links: ReadonlyMap<string, RestoreLink>): Promise<void> {
    const { reviews } = this.pipeline.deps.index;
    for (const [recordId, link] of links) {
      if (link.rejectedRemove?.length) {
        await reviews.removeRejectedSlugs(installationId, recordId, link.rejectedRemove);
      }
      if (link.rejectedAdd?.length)
        await reviews.addRejectedSlugs(installationId, recordId, [...link.rejectedAdd]);
    }
    await this.enrichInChunks(installationId, 'restore', [...links.keys()], (ids) => ({
      kind: 'restore',
      links: Object.fromEntries(
        ids.map((id) => {
          const { slug, source, candidates } = links.get(id)!;
          return [id, { slug, source, ...(candidates ? { candidates } : {}) }];
        }),
      ),
    }));
  }

  /**
   * Writes a few records' fields from their current state now (a report request was just made), or, when the
   * CRM cannot take it at this moment, leaves the same work to the queue.
   */
  async refreshRecords(installationId: string, recordIds: string[]): Promise<void> {
    const job: BatchJob = {
      installationId,
      batchId: 'refresh',
      mode: 'full',
      recordIds,
      origin: { kind: 'refresh' },
    };
    try {
      const targets = await this.pipeline.deps.runtime.open(installationId, { urgent: true });
      await enrichNow(this.pipeline, targets, job);
    } catch (err) {
      this.pipeline.deps.logger.warn(
        { err, installationId, recordIds },
        'record refresh deferred to the queue',
      );
      await this.pipeline.enqueueBatch('realtime', job, { delay: 1_000 });
    }
  }

  /** Event-driven batches over many records, in the CRM's read size (each batch reads, then writes in bulk). */
  private async enrichInChunks(
    installationId: string,
    name: string,
    recordIds: string[],
    originOf: (ids: string[]) => FirstBatchOrigin,
  ): Promise<BatchOutcome[]> {
    if (recordIds.length === 0) return [];
    const targets = await this.pipeline.deps.runtime.open(installationId, { urgent: true });
    const outcomes: BatchOutcome[] = [];
    for (const [i, ids] of chunk(recordIds, targets.connector.limits.readBatchSize).entries()) {
      const outcome = await enrichNow(this.pipeline, targets, {
        installationId,
        batchId: `${name}-${i}`,
        mode: 'full',
        recordIds: ids,
        origin: originOf(ids),
      });
      outcomes.push(outcome);
    }
    return outcomes;
  }
}
