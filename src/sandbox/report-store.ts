import { z } from 'zod';
import { patchLeavesBand, sandboxBand } from './bands.js';
import { deepMerge, isPlainObject, type JsonObject } from './deep-merge.js';
import { type FixtureReport, fixtureReportSchema } from './fixtures.js';
import { SandboxHttpError } from './http-error.js';
import { foldedWords } from './text-folding.js';

/** A report with the words free-text search looks at, folded once when the report is stored. */
export interface IndexedReport {
  report: FixtureReport;
  nameWords: string[];
  searchWords: string[];
}

export interface ReportChange {
  before: FixtureReport | undefined;
  after: FixtureReport;
  scoreChanged: boolean;
  verificationChanged: boolean;
}

/**
 * The words search looks at. `words` is the sandbox's own word splitting unless a caller measures the
 * connector against another one (the matching evaluation tries several: the interface does not say).
 */
export function indexReport(
  report: FixtureReport,
  words: (text: string) => string[] = foldedWords,
): IndexedReport {
  const nameWords = words(report.name);
  return {
    report,
    nameWords,
    searchWords: [...new Set([...nameWords, ...words(report.description), ...words(report.industry)])],
  };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function scoreWithoutTimestamp(report: FixtureReport | undefined): unknown {
  if (!report) return undefined;
  const { scored_at: _time, ...rest } = report.score;
  return rest;
}

/** The sandbox's reports, published or not, keyed by slug, in fixture order. */
export class ReportStore {
  private readonly bySlug = new Map<string, IndexedReport>();

  constructor(
    reports: FixtureReport[],
    private readonly now: () => Date = () => new Date(),
  ) {
    for (const report of reports) this.bySlug.set(report.slug, indexReport(structuredClone(report)));
  }

  get size(): number {
    return this.bySlug.size;
  }

  /** A copy, so callers cannot change the store behind its back. */
  get(slug: string): FixtureReport | undefined {
    const entry = this.bySlug.get(slug);
    return entry ? structuredClone(entry.report) : undefined;
  }

  getPublished(slug: string): FixtureReport | undefined {
    const entry = this.bySlug.get(slug);
    return entry?.report.published ? structuredClone(entry.report) : undefined;
  }

  /** The live entries, for search; read-only by convention. */
  published(): IndexedReport[] {
    return [...this.bySlug.values()].filter((entry) => entry.report.published);
  }

  list(): FixtureReport[] {
    return [...this.bySlug.values()].map((entry) => structuredClone(entry.report));
  }

  /**
   * Applies a control-route patch. An unknown slug is created only when the patch is a whole valid report;
   * the score's `scored_at` moves to now when the score changes and the patch does not set it.
   */
  update(slug: string, patch: unknown): ReportChange {
    if (!isPlainObject(patch))
      throw new SandboxHttpError(400, 'invalid_patch', 'the patch must be a JSON object');
    if ('slug' in patch && patch.slug !== slug) {
      throw new SandboxHttpError(400, 'invalid_patch', 'the slug of a report cannot be changed');
    }
    const before = this.bySlug.get(slug)?.report;
    if (!before) {
      const created = fixtureReportSchema.safeParse({ ...patch, slug });
      if (!created.success) {
        throw new SandboxHttpError(404, 'not_found', `no report ${slug}; to create one, send a whole report`);
      }
      this.bySlug.set(slug, indexReport(created.data));
      return { before, after: structuredClone(created.data), scoreChanged: true, verificationChanged: true };
    }
    const merged = deepMerge(before as unknown as JsonObject, patch);
    const parsed = fixtureReportSchema.safeParse(merged);
    if (!parsed.success) throw new SandboxHttpError(400, 'invalid_patch', z.prettifyError(parsed.error));
    const after = parsed.data;
    if (patchLeavesBand(patch)) after.score.band = sandboxBand(after.score.overall);
    const scoreChanged = !sameJson(scoreWithoutTimestamp(before), scoreWithoutTimestamp(after));
    const patchSetsTime = isPlainObject(patch.score) && 'scored_at' in patch.score;
    if (scoreChanged && !patchSetsTime) after.score.scored_at = this.now().toISOString();
    const verificationChanged = !sameJson(before.verification ?? null, after.verification ?? null);
    this.bySlug.set(slug, indexReport(after));
    return {
      before: structuredClone(before),
      after: structuredClone(after),
      scoreChanged,
      verificationChanged,
    };
  }
}
