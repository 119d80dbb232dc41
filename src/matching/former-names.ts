import { normalizeCompanyName } from './normalize.js';

/**
 * Former names a report's description gives ("It was renamed from Acme Widgets in 2016", "Nova Labs (formerly
 * Acme Widgets)", "Previously operating as Acme Widgets, Nova Labs is ..."), in normalised form. A search for a
 * record's old name finds the report through its description (the search reads descriptions); this is what
 * tells such a hit from a report that merely mentions the company.
 */

/** Phrases that introduce a former name, longest first so "formerly known as" wins over "formerly". */
const MARKERS = [
  'previously operating as',
  'previously operated as',
  'formerly operating as',
  'previously trading as',
  'formerly trading as',
  'changed its name from',
  'formerly known as',
  'previously known as',
  'previously called',
  'formerly called',
  'renamed from',
  'formerly',
  'previously',
  'f/k/a',
  'fka',
];

const MARKER = new RegExp(
  `(?:^|[^\\p{L}\\p{N}])(?:${MARKERS.map((m) => m.replace(/[/]/g, '\\/')).join('|')})\\s+`,
  'giu',
);

/**
 * Where a former name ends: a bracket, a comma, a semicolon, a full stop ending the sentence, or a year
 * ("... from Acme Widgets in 2016").
 */
const NAME_END = /\s+(?:in|until|since|before)\s+\d{4}\b|[()[\]\u201d"]|[,;]\s|\.(?=\s|$)|[,;]$/u;

/** Descriptions are short; a longer one is read only this far. */
const MAX_DESCRIPTION = 2000;
/** A former name longer than this many words is a sentence the markers happened to start. */
const MAX_NAME_WORDS = 12;

export function formerNamesIn(description: string | null | undefined): string[] {
  if (description == null || description === '') return [];
  const text = description.slice(0, MAX_DESCRIPTION);
  const names = new Set<string>();
  for (const match of text.matchAll(MARKER)) {
    const rest = text.slice((match.index ?? 0) + match[0].length);
    const end = rest.search(NAME_END);
    const raw = (end < 0 ? rest : rest.slice(0, end)).trim();
    if (raw === '' || raw.split(/\s+/).length > MAX_NAME_WORDS) continue;
    const name = normalizeCompanyName(raw);
    if (name !== '') names.add(name);
  }
  return [...names];
}
