import type { LocalHubSpot } from '../../connectors/hubspot/local/index.js';
import type { ReportSandbox } from '../../src/sandbox/index.js';

/**
 * Score changes made in the sandbox while the connector works, remembered in order, and the check that a
 * record only ever moved forward through them. Every version of a slug has its own overall score (above the
 * fixtures' 0-100 range) and a later `scored_at`, so a value read back from the CRM's property history
 * names exactly one version.
 */

export interface ScoreVersion {
  overall: number;
  scoredAt: string;
}

const VERSION_EPOCH = Date.UTC(2031, 0, 1);
const FINAL_EPOCH = Date.UTC(2040, 0, 1);

function scoreKey(value: number | string): string {
  return Number(value).toFixed(6);
}

function instantKey(value: string): string {
  return new Date(value).toISOString();
}

export class ScoreVersions {
  private readonly history = new Map<string, ScoreVersion[]>();
  private ticks = 0;

  constructor(
    private readonly sandbox: ReportSandbox,
    readonly slugs: readonly string[],
  ) {
    for (const slug of slugs) {
      const report = sandbox.getReport(slug);
      if (!report?.published) throw new Error(`${slug} is not a published fixture`);
      this.history.set(slug, [
        { overall: report.score.overall, scoredAt: instantKey(report.score.scored_at) },
      ]);
    }
  }

  /** Gives every slug one new version (the sandbox signs and sends a score.changed for each). */
  bumpAll(): void {
    this.ticks += 1;
    this.slugs.forEach((slug, i) => {
      this.apply(slug, {
        overall: 200 + this.ticks + i / 1000,
        scoredAt: new Date(VERSION_EPOCH + this.ticks * 60_000).toISOString(),
      });
    });
  }

  /** The last version, the same in every run of a test, so end states can be compared across runs. */
  finish(): void {
    this.slugs.forEach((slug, i) => {
      this.apply(slug, { overall: 900 + i / 1000, scoredAt: new Date(FINAL_EPOCH).toISOString() });
    });
  }

  get versionCount(): number {
    return this.ticks;
  }

  latest(slug: string): ScoreVersion | undefined {
    return this.history.get(slug)?.at(-1);
  }

  private apply(slug: string, version: ScoreVersion): void {
    this.sandbox.updateReport(slug, { score: { overall: version.overall, scored_at: version.scoredAt } });
    this.history.get(slug)!.push({ overall: version.overall, scoredAt: instantKey(version.scoredAt) });
  }

  /**
   * What is wrong with the writes the connector made to one record linked to `slug`: a `report_score` or
   * `report_scored_at` that names an older version than one written before it, or no version at all.
   */
  backwardWrites(hubspot: LocalHubSpot, recordId: string, slug: string): string[] {
    const versions = this.history.get(slug);
    const company = hubspot.getCompany(recordId);
    if (!versions || !company) return [`${recordId}: unknown record or slug ${slug}`];
    const byScore = new Map(versions.map((v, i) => [scoreKey(v.overall), i]));
    const byInstant = new Map(versions.map((v, i) => [v.scoredAt, i]));
    const problems: string[] = [];
    const check = (property: string, indexOf: (value: string) => number | undefined) => {
      let last = -1;
      for (const change of company.history) {
        if (change.property !== property || change.source !== 'api') continue;
        const index = change.value === '' ? undefined : indexOf(change.value);
        if (index === undefined) {
          problems.push(
            `${recordId} (${slug}): ${property} set to ${JSON.stringify(change.value)}, which no version of the report had`,
          );
        } else if (index < last) {
          problems.push(
            `${recordId} (${slug}): ${property} went back from version ${last} to ${index} at ${change.at}`,
          );
        } else {
          last = index;
        }
      }
    };
    check('report_score', (v) => byScore.get(scoreKey(v)));
    check('report_scored_at', (v) => byInstant.get(instantKey(v)));
    return problems;
  }
}
