/**
 * Prints the matcher's quality on the labelled set as markdown, for the README.
 *
 *   npm run build && node dist/bench/match-quality.js [--missed]
 *
 * `--missed` adds the cases the matcher did not link to their report, with its reason, for tuning by a
 * person. The labelled set is test/fixtures/match-cases.json, found from the repository root.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  decideCase,
  evaluate,
  MATCH_CASE_KINDS,
  type MatchCase,
  type MatchQuality,
  matchCaseSchema,
} from '../src/matching/evaluate.js';

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
    `| **recall** (correct links / companies with a report) | **${ratio(quality.recall)}** |`,
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

const root = repositoryRoot();
const cases = matchCaseSchema.array().parse(JSON.parse(readFileSync(join(root, FIXTURE), 'utf8')));
const quality = evaluate(cases);
process.stdout.write(`${qualityTable(quality)}\n`);
if (process.argv.includes('--missed')) process.stdout.write(`\n${missedTable(cases, quality)}\n`);
