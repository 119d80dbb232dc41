/**
 * Every Redis key the pipeline writes, in one place. Keys scoped to an installation start with
 * `${prefix}:inst:${id}:` so that removing an installation can delete them by pattern.
 */
export class Keys {
  constructor(readonly prefix: string) {}

  inst(id: string): string {
    return `${this.prefix}:inst:${id}`;
  }
  /** Set of record ids linked to `slug` in one installation. */
  slugMembers(id: string, slug: string): string {
    return `${this.inst(id)}:slug:${slug}`;
  }
  /** Hash record id -> slug, the reverse of slugMembers. */
  recordSlug(id: string): string {
    return `${this.inst(id)}:record-slug`;
  }
  /** Hash record id -> match status. */
  recordStatus(id: string): string {
    return `${this.inst(id)}:record-status`;
  }
  /** Hash record id -> overall score, for the distribution chart. */
  recordScore(id: string): string {
    return `${this.inst(id)}:record-score`;
  }
  /** Hash record id -> slug the connector linked by itself (a person's link is never in here). */
  autoLinks(id: string): string {
    return `${this.inst(id)}:autolinks`;
  }
  /** Hash record id -> JSON of the review candidates. */
  review(id: string): string {
    return `${this.inst(id)}:review`;
  }
  /** Hash record id -> normalised name, for records without a link (report.completed re-matches them). */
  unlinked(id: string): string {
    return `${this.inst(id)}:unlinked`;
  }
  /** Hash record id -> JSON list of slugs a person rejected for that record (never offered again). */
  rejected(id: string): string {
    return `${this.inst(id)}:rejected`;
  }
  /** Hash record id -> fingerprint of name/domain/slug last seen (the Salesforce poll compares it). */
  seen(id: string): string {
    return `${this.inst(id)}:seen`;
  }
  /** Hash record id -> report sequence number last written (no stale write after a fresher one). */
  writtenSeq(id: string): string {
    return `${this.inst(id)}:written-seq`;
  }
  recordLock(id: string, recordId: string): string {
    return `${this.inst(id)}:lock:${recordId}`;
  }
  runs(id: string): string {
    return `${this.inst(id)}:runs`;
  }
  pollCursor(id: string): string {
    return `${this.inst(id)}:poll-cursor`;
  }
  crmGate(id: string): string {
    return `${this.inst(id)}:gate`;
  }
  /** Set of installation ids that have at least one record linked to `slug` (fan-out of score.changed). */
  slugInstallations(slug: string): string {
    return `${this.prefix}:slug-installations:${slug}`;
  }
  reportSeq(): string {
    return `${this.prefix}:report-seq`;
  }
  /** Hash slug -> report sequence number taken when the service last said the report changed. */
  slugChanges(): string {
    return `${this.prefix}:slug-changes`;
  }
  reportsGate(keyIdentity: string): string {
    return `${this.prefix}:reports-gate:${keyIdentity}`;
  }
  run(runId: string): string {
    return `${this.prefix}:run:${runId}`;
  }
  runBatches(runId: string): string {
    return `${this.prefix}:run:${runId}:batches`;
  }
  runReport(runId: string, slug: string): string {
    return `${this.prefix}:run:${runId}:report:${slug}`;
  }
  runSearch(runId: string, qHash: string): string {
    return `${this.prefix}:run:${runId}:search:${qHash}`;
  }
  events(): string {
    return `${this.prefix}:events`;
  }
  eventSeen(source: string, eventId: string): string {
    return `${this.prefix}:event-seen:${source}:${eventId}`;
  }
}
