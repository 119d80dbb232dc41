import type { Decision } from '../decisions/decision-log.js';
import type { ReviewItem } from '../storage/review-codec.js';

/**
 * CSV exports of the review queue and the decision log (RFC 4180: comma-separated, CRLF line ends, a field
 * quoted when it holds a comma, a quote or a line break, quotes doubled). Company names and report names come
 * from CRM users and the report service, so a cell that a spreadsheet would run as a formula (starting with
 * `=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`: the file opens as data, never as code.
 */

type Cell = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: Cell): string {
  if (value === null || value === undefined) return '';
  // Numbers are ours (scores): written as they are, a negative number is a number, not a formula.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRows(header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  return [header, ...rows].map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}

/** One row per candidate (a record without candidates has one row with empty candidate cells). */
export function reviewCsv(items: readonly ReviewItem[]): string {
  const header = [
    'record_id',
    'company',
    'country',
    'industry',
    'queued_at',
    'candidate_rank',
    'candidate_slug',
    'candidate_name',
    'candidate_industry',
    'candidate_stage',
    'candidate_geography',
    'candidate_score',
    'candidate_why',
  ];
  const rows: Cell[][] = [];
  for (const item of items) {
    const base: Cell[] = [item.recordId, item.name, item.country, item.industry, item.at];
    if (item.candidates.length === 0) rows.push([...base, '', '', '', '', '', '', '', '']);
    item.candidates.forEach((c, i) => {
      rows.push([...base, i + 1, c.slug, c.name, c.industry, c.stage, c.geography, c.score, c.why]);
    });
  }
  return csvRows(header, rows);
}

/** Oldest first, one row per decision; the evidence's candidates in one cell (`slug (score): why; ...`). */
export function decisionsCsv(decisions: readonly Decision[]): string {
  const header = [
    'at',
    'action',
    'bulk',
    'record_id',
    'slug',
    'decided_by',
    'decided_by_id',
    'candidates',
    'candidates_offered',
    'previous_slug',
    'run_id',
    'decided_by_name',
    'mass_action_id',
  ];
  return csvRows(
    header,
    decisions.map((d) => [
      d.at,
      d.action,
      d.bulk,
      d.recordId,
      d.slug,
      d.by.kind,
      d.by.id,
      (d.evidence.candidates ?? [])
        .map((c) => `${c.slug}${c.score == null ? '' : ` (${c.score})`}${c.why ? `: ${c.why}` : ''}`)
        .join('; '),
      d.evidence.offered,
      d.evidence.previousSlug,
      d.evidence.runId,
      d.by.name,
      d.evidence.massId,
    ]),
  );
}
