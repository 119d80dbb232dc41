/**
 * Prints the matcher's quality as markdown, for docs/matching.md: on the project's own labelled set
 * (test/fixtures/match-cases.json, decisions on fixed candidates) and on the outside sample
 * (../shared/match-sample/sample.json, the real retrieval and decision code searching the sample's catalogue
 * through the sandbox's search code, under several word splittings, for HubSpot- and Salesforce-shaped
 * records).
 *
 *   npm run eval:matching [-- --missed] [-- --sync] [-- --sample <path>]
 *
 * `--missed` adds the cases that did not end as labelled, with the matcher's reason, for tuning by a person.
 * Both shared samples are measured (`match-sample`, made clean, and `match-sample-messy`, written the way
 * people keep CRM data); `--sample <path>` measures one file instead.
 * `--sync` also runs each sample through a full sync of each CRM: its catalogue in the report sandbox, its
 * records in the local HubSpot and Salesforce, the outcome read back from the CRM (needs Redis; a minute or
 * two).
 * Without the sample file the second part says so and the command still prints the first.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  decideCase,
  evaluate,
  MATCH_CASE_KINDS,
  type MatchCase,
  type MatchQuality,
  matchCaseSchema,
  type OutsideSample,
  outsideSampleSchema,
  type SampleKindQuality,
  type SampleOutcome,
  type SampleQuality,
  samplePrecision,
  sampleRecall,
  scoreSample,
} from '../src/matching/evaluate.js';
import { normalizeCompanyName } from '../src/matching/normalize.js';
import { findMatch } from '../src/matching/retrieve.js';
import { type CrmShape, sampleSearch, shapeRecord, TOKENISATIONS } from './support/sample-search.js';
import { type SampleSync, syncSample } from './support/sample-sync.js';

const FIXTURE = join('test', 'fixtures', 'match-cases.json');

/** The repository root: the nearest directory above this file holding the labelled set. */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, FIXTURE))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${FIXTURE} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

function ratio(value: number): string {
  return value.toFixed(3);
}

function qualityTable(quality: MatchQuality): string {
  const lines = [
    '| measure | value |',
    '|---|---|',
    `| labelled cases | ${quality.total} |`,
    `| cases whose company has a report | ${quality.expectedLinks} |`,
    `| links made | ${quality.linked} |`,
    `| wrong links | ${quality.wrongLinks} |`,
    `| **precision** (correct links / links made) | **${ratio(quality.precision)}** |`,
    `| reviews listing the report where the case allows review | ${quality.acceptedReviews} |`,
    `| **recall** ((correct links + allowed reviews) / companies with a report) | **${ratio(quality.recall)}** |`,
    `| left for review | ${quality.needsReview} |`,
    '',
    '| kind | cases | linked to the right report | linked wrongly | needs review | no match |',
    '|---|---|---|---|---|---|',
  ];
  for (const kind of MATCH_CASE_KINDS) {
    const row = quality.byKind[kind];
    if (row === undefined) continue;
    lines.push(
      `| ${kind} | ${row.total} | ${row.correct} | ${row.wrong} | ${row.needsReview} | ${row.noMatch} |`,
    );
  }
  return lines.join('\n');
}

function missedTable(cases: readonly MatchCase[], quality: MatchQuality): string {
  const lines = ['| case | what it is | decision | reason |', '|---|---|---|---|'];
  for (const matchCase of cases) {
    if (!quality.missedIds.includes(matchCase.id) && !quality.wrongLinkIds.includes(matchCase.id)) continue;
    const { decision } = decideCase(matchCase);
    const note = (matchCase.note ?? '').replace(/\|/g, '\\|');
    lines.push(
      `| ${matchCase.id} | ${note} | ${decision.status} | ${decision.reason.replace(/\|/g, '\\|')} |`,
    );
  }
  return lines.join('\n');
}

/** The search limit the pipeline asks for (defaultMatching.searchLimit). */
const SEARCH_LIMIT = 10;
const CRMS: readonly CrmShape[] = ['HubSpot', 'Salesforce'];

interface SampleRun {
  crm: CrmShape;
  tokenisation: string;
  quality: SampleQuality;
  reasons: Map<string, string>;
  /** False for a full sync: the sandbox counts its searches for the whole run, not per record. */
  searchesPerRecord?: boolean;
}

async function runSample(sample: OutsideSample): Promise<SampleRun[]> {
  const runs: SampleRun[] = [];
  for (const { name: tokenisation, words, anyWord } of TOKENISATIONS) {
    for (const crm of CRMS) {
      const service = sampleSearch(sample, words, anyWord);
      const outcomes: SampleOutcome[] = [];
      const reasons = new Map<string, string>();
      for (const record of sample.records) {
        const before = service.calls;
        const { decision } = await findMatch(shapeRecord(record, crm), service.search, SEARCH_LIMIT);
        outcomes.push({ id: record.id, decision, searches: service.calls - before });
        reasons.set(
          record.id,
          `${decision.status}${decision.status === 'matched' ? ` ${decision.slug}` : ''}: ${decision.reason}`,
        );
      }
      runs.push({ crm, tokenisation, quality: scoreSample(sample, outcomes, normalizeCompanyName), reasons });
    }
  }
  return runs;
}

function share(part: number, whole: number): string {
  return whole === 0 ? '-' : ratio(part / whole);
}

function kindCells(row: SampleKindQuality, run: SampleRun): string {
  const searches = run.searchesPerRecord === false ? '-' : perRecord(row.searches, row.records);
  return `${row.correctLinks} | ${row.wrongLinks} | ${row.reviews} | ${row.noMatch} | ${share(row.reviews, row.records)} | ${searches}`;
}

function perRecord(searches: number, records: number): string {
  return (searches / Math.max(1, records)).toFixed(2);
}

function sampleKindTable(runs: readonly SampleRun[], tokenisation: string): string {
  const mine = CRMS.map((crm) => runs.find((r) => r.crm === crm && r.tokenisation === tokenisation)!);
  const head = mine
    .map((r) => `${r.crm}: linked right | wrong | review | no match | review share | searches per record`)
    .join(' | ');
  const lines = [
    `Search splitting words as "${tokenisation}":`,
    '',
    `| kind | records | ${head} |`,
    `|---|---|${mine.map(() => '---|---|---|---|---|---|').join('')}`,
  ];
  const kinds = [...mine[0]!.quality.byKind.keys()].sort();
  for (const kind of kinds) {
    const cells = mine.map((r) => kindCells(r.quality.byKind.get(kind)!, r)).join(' | ');
    lines.push(`| ${kind} | ${mine[0]!.quality.byKind.get(kind)!.records} | ${cells} |`);
  }
  lines.push(
    `| **all** | ${mine[0]!.quality.all.records} | ${mine.map((r) => kindCells(r.quality.all, r)).join(' | ')} |`,
  );
  return lines.join('\n');
}

function sampleSummary(runs: readonly SampleRun[]): string {
  const lines = [
    '| CRM | search splits words | precision | recall (matchable) | wrong links | review share | namesake pairs in review with both | no_match beside a same-named report | searches per record |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const run of runs) {
    const all = run.quality.all;
    lines.push(
      `| ${run.crm} | ${run.tokenisation} | ${ratio(samplePrecision(all))} | ${ratio(sampleRecall(all))} | ${all.wrongLinks} | ${share(all.reviews, all.records)} | ${all.namesakesComplete} of ${all.namesakes} | ${all.noMatchBesideSameName} | ${(all.searches / Math.max(1, all.records)).toFixed(2)} |`,
    );
  }
  return lines.join('\n');
}

function sampleMissed(sample: OutsideSample, runs: readonly SampleRun[]): string {
  const names = new Map(sample.records.map((r) => [r.id, r.name]));
  const lines = ['| CRM | splitting | record | kind | expected | decision |', '|---|---|---|---|---|---|'];
  for (const run of runs) {
    for (const id of run.quality.missedIds) {
      const expected = sample.expected[id]!;
      const want = `${expected.status} ${expected.slug ?? (expected.candidates ?? []).join(' + ')}`;
      const cell = (text: string) => text.replace(/\|/g, '\\|');
      lines.push(
        `| ${run.crm} | ${run.tokenisation} | ${cell(names.get(id) ?? '')} | ${expected.kind} | ${cell(want)} | ${cell(run.reasons.get(id) ?? '')} |`,
      );
    }
  }
  return lines.join('\n');
}

const SYNC_SPLITTING = 'sandbox (marks split words), full sync';

function syncSummary(syncs: readonly SampleSync[]): string {
  const lines = [
    '| CRM | precision | recall (matchable) | wrong links | review share | namesake pairs in review with both | no_match beside a same-named report | searches per record | run |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const sync of syncs) {
    const all = sync.quality.all;
    lines.push(
      `| ${sync.crm} | ${ratio(samplePrecision(all))} | ${ratio(sampleRecall(all))} | ${all.wrongLinks} | ${share(all.reviews, all.records)} | ${all.namesakesComplete} of ${all.namesakes} | ${all.noMatchBesideSameName} | ${(sync.searches / Math.max(1, all.records)).toFixed(2)} | ${sync.runState} in ${sync.seconds.toFixed(0)} s |`,
    );
  }
  return lines.join('\n');
}

/** The labelled samples measured: both shared ones, or the one `--sample` names. */
function samplePaths(): string[] {
  const at = process.argv.indexOf('--sample');
  if (at >= 0 && process.argv[at + 1]) return [process.argv[at + 1]!];
  return ['match-sample', 'match-sample-messy'].map((dir) => join(root, '..', 'shared', dir, 'sample.json'));
}

async function measureSample(samplePath: string): Promise<void> {
  const label = `${basename(dirname(samplePath))}/${basename(samplePath)}`;
  if (!existsSync(samplePath)) {
    process.stdout.write(`\n### Outside sample ${label}\n\nnot found at ${samplePath}\n`);
    return;
  }
  const sample = outsideSampleSchema.parse(JSON.parse(readFileSync(samplePath, 'utf8')));
  const runs = await runSample(sample);
  process.stdout.write(
    `\n### Outside sample ${label} (${sample.records.length} records, ${sample.reports.length} reports)\n\n${sampleSummary(runs)}\n`,
  );
  for (const { name } of TOKENISATIONS) process.stdout.write(`\n${sampleKindTable(runs, name)}\n`);
  if (process.argv.includes('--missed')) process.stdout.write(`\n${sampleMissed(sample, runs)}\n`);
  if (process.argv.includes('--sync')) {
    const syncs: SampleSync[] = [];
    for (const crm of CRMS) syncs.push(await syncSample(sample, crm));
    const asRuns: SampleRun[] = syncs.map((sync) => ({
      crm: sync.crm,
      tokenisation: SYNC_SPLITTING,
      quality: sync.quality,
      reasons: new Map(),
      searchesPerRecord: false,
    }));
    process.stdout.write(
      `\n#### ${label} through a full sync against the sandbox\n\n${syncSummary(syncs)}\n`,
    );
    process.stdout.write(`\n${sampleKindTable(asRuns, SYNC_SPLITTING)}\n`);
    if (process.argv.includes('--missed')) process.stdout.write(`\n${sampleMissed(sample, asRuns)}\n`);
  }
}

const root = repositoryRoot();
const cases = matchCaseSchema.array().parse(JSON.parse(readFileSync(join(root, FIXTURE), 'utf8')));
const quality = evaluate(cases);
process.stdout.write(`### Own labelled set (${FIXTURE})\n\n${qualityTable(quality)}\n`);
if (process.argv.includes('--missed')) process.stdout.write(`\n${missedTable(cases, quality)}\n`);
for (const path of samplePaths()) await measureSample(path);
// The sync's workers' connections would keep the process alive.
process.exit(0);
