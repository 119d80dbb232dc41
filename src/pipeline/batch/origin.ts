import type { BatchJob, BatchOrigin, FirstBatchOrigin, RestoredLink } from '../batch-job.js';

/** What a batch's origin (batch-job.ts) means for its run, its reads and each of its records. */

/** The run the batch counts in (its result, its new auto-links), or null for an event-driven batch. */
export function runIdOf(job: BatchJob): string | null {
  return ownRunId(job.origin);
}

function ownRunId(origin: BatchOrigin): string | null {
  switch (origin.kind) {
    case 'sync':
    case 'preview':
    case 'report-change':
      return origin.runId;
    default:
      return null;
  }
}

/** The first batch's origin: a retry decides what the batch it retries decided. */
export function firstOriginOf(job: BatchJob): FirstBatchOrigin {
  return job.origin.kind === 'retry' ? job.origin.of : job.origin;
}

/**
 * The run the batch's records belong to: its own, or for a retry of a run's records the run's. Such a batch reads
 * nothing afresh: it reads through the key's report cache as the run did (pipeline/report-reader.ts).
 */
export function readScopeOf(job: BatchJob): string | null {
  return runIdOf(job) ?? ownRunId(firstOriginOf(job));
}

/** Slugs read afresh even inside a run: a webhook or a decision just said they changed. */
export function freshSlugsOf(job: BatchJob): string[] {
  const origin = firstOriginOf(job);
  // A run's retry reads what the run read, fresh ones too.
  if (readScopeOf(job) !== null) return [];
  switch (origin.kind) {
    case 'review':
      return [...new Set([...Object.values(origin.links), ...(origin.written ? [origin.written] : [])])];
    case 'request':
      return Object.values(origin.links);
    case 'restore':
      return [...new Set(Object.values(origin.links).flatMap((l) => (l.slug ? [l.slug] : [])))];
    case 'crm-change':
      return origin.slug ? [origin.slug] : [];
    default:
      return [];
  }
}

/** Whether the batch only counts what a write would do (no CRM write, no index change). */
export function isPreview(job: BatchJob): boolean {
  return job.origin.kind === 'preview';
}

/**
 * Whether records waiting for a requested report are searched again: a report was published, or a full run
 * asks for it; any other batch keeps them `requested` without spending a search.
 */
export function matchesWaiting(job: BatchJob): boolean {
  return firstOriginOf(job).kind === 'report-published' || (runIdOf(job) !== null && job.mode === 'full');
}

/** What the batch's origin says about one of its records, before the record's own fields and matching. */
export type RecordAsk =
  /**
   * An admin decided the record has no report (unlink, a rejected review, an undone run); with `from`, only
   * while the record still holds that slug.
   */
  | { kind: 'admin-unlink'; from?: string }
  /** An admin linked the record on the review queue: written with the report's fields. */
  | { kind: 'admin-link'; slug: string }
  /** The report requested for the record was published: judged for it when the record has no slug. */
  | { kind: 'request-link'; slug: string }
  /** A person just set the record's slug by hand: the link is theirs. */
  | { kind: 'person-set' }
  /** The record was renamed or its domain changed: our own auto-link is decided again. */
  | { kind: 'rematch-own' }
  /** A re-match was asked for: a person's or an admin's `no_match` is lifted. */
  | { kind: 'release' }
  /** A mass action undone: the record gets back the link it had before it. */
  | { kind: 'restore'; link: RestoredLink }
  | { kind: 'none' };

const NONE: RecordAsk = { kind: 'none' };

/** The ask of each record of a batch, by record id. */
export function recordAsks(job: BatchJob): (recordId: string) => RecordAsk {
  const origin = firstOriginOf(job);
  switch (origin.kind) {
    case 'unlink': {
      const { from } = origin;
      if (!from) return () => ({ kind: 'admin-unlink' });
      return (id) => {
        const slug = slugFor(from, id);
        return slug ? { kind: 'admin-unlink', from: slug } : { kind: 'admin-unlink' };
      };
    }
    case 'rematch':
      return () => ({ kind: 'release' });
    case 'restore':
      return (id) => {
        const link = Object.hasOwn(origin.links, id) ? origin.links[id] : undefined;
        return link ? { kind: 'restore', link } : NONE;
      };
    case 'review': {
      const rejected = new Set(origin.rejected);
      return (id) => {
        if (rejected.has(id)) return { kind: 'admin-unlink' };
        const slug = slugFor(origin.links, id);
        return slug ? { kind: 'admin-link', slug } : NONE;
      };
    }
    case 'request':
      return (id) => {
        const slug = slugFor(origin.links, id);
        return slug ? { kind: 'request-link', slug } : NONE;
      };
    case 'crm-change':
      if (origin.change === 'renamed' || origin.change === 'domainChanged')
        return () => ({ kind: 'rematch-own' });
      if (origin.change === 'slugChanged' && origin.slug) return () => ({ kind: 'person-set' });
      return () => NONE;
    default:
      return () => NONE;
  }
}

function slugFor(links: Record<string, string>, recordId: string): string | undefined {
  return Object.hasOwn(links, recordId) ? links[recordId] : undefined;
}
