import { nameToQuery } from '../reports/query.js';
import { normalizeCompanyName, stripLegalForms } from './normalize.js';
import type { MatchCompany } from './schemas.js';
import { GENERIC_WORDS } from './similarity.js';

/**
 * The `q` to search the report service with for a company: its name without legal forms ("Acme Robotics
 * GmbH" -> "Acme Robotics"), made acceptable to the service by nameToQuery. Null when nothing of the name
 * itself survives as ASCII letters or digits: an empty name, punctuation only, or a script that folds to
 * nothing. Searching the legal form alone ("株式会社トヨタ Co., Ltd." -> "Co Ltd") would return noise, and an
 * empty `q` would return everything.
 */
export function searchQueryFor(company: Pick<MatchCompany, 'name'>): string | null {
  const query = nameToQuery(stripLegalForms(company.name ?? ''));
  return query === '' ? null : query;
}

const APOSTROPHES = /['\u2019`´]/g;
/** Marks inside a word that a search service may read as a word break, or as nothing at all. */
const INNER_MARKS = /(?<=[\p{L}\p{N}])[.'\u2019`´&+-](?=[\p{L}\p{N}])/gu;

/** A form of the name searched as the service accepts it, or '' when nothing searchable is left. */
function form(text: string): string {
  const stripped = stripLegalForms(text);
  return stripped === '' ? '' : nameToQuery(stripped);
}

/** Hyphens survive into `q` (the service allows them); the service splits or joins them its own way. */
function hyphenatedForm(name: string): string {
  const words = name
    .replace(APOSTROPHES, '')
    .replace(/(?<=[\p{L}\p{N}])\.(?=[\p{L}\p{N}])/gu, '')
    .split(/\s+/)
    .filter((word) => word !== '');
  const query = nameToQuery(words.join(' '));
  const keep = normalizeCompanyName(stripLegalForms(name));
  // Legal forms are removed word by word from the end, so the hyphens of the name itself stay.
  const kept = query.split(' ');
  while (kept.length > 1 && normalizeCompanyName(kept.slice(0, -1).join(' ')) === keep) kept.pop();
  return kept.join(' ');
}

/**
 * The longest word that is not a common word: the broadest search that still names this company. A word
 * written without accents is preferred, so a service that does not fold accents still finds it.
 */
function longestDistinctiveWord(raw: string): string | null {
  const spaced = raw.replace(INNER_MARKS, ' ');
  const core = new Set(stripLegalForms(spaced).toLowerCase().split(' '));
  const words = spaced
    .split(/[^\p{L}\p{N}]+/u)
    .map((word) => ({ word: nameToQuery(word), plain: /^[A-Za-z0-9]+$/.test(word) }))
    .filter(
      ({ word }) =>
        word.length >= 5 && core.has(word.toLowerCase()) && !GENERIC_WORDS.has(word.toLowerCase()),
    );
  const ranked = words.sort((a, b) => Number(b.plain) - Number(a.plain) || b.word.length - a.word.length);
  return ranked[0]?.word ?? null;
}

/**
 * The queries to search for a company, best first. The service's interface does not say how its search splits
 * words, so a name with apostrophes, dots, hyphens or ampersands is tried both ways: marks as word breaks
 * ("O'Brien Foods" -> "O Brien Foods", "Acme.io" -> "Acme io"), marks as nothing ("OBrien Foods",
 * "Acmeio"), hyphens as written, then without one-letter words ("Brien Foods") and finally the longest
 * distinctive word alone (a search that reads accents or phrases differently still finds that). Accents are
 * folded to ASCII in every form: the interface promises only that ASCII letters are letters. Empty when the
 * name has nothing searchable.
 */
export function queryFormsFor(name: string | null | undefined): string[] {
  const raw = name ?? '';
  const primary = searchQueryFor({ name: raw });
  if (primary === null) return [];
  const split = form(raw.replace(INNER_MARKS, ' ').replace(/[&+]/g, ' '));
  const joined = form(raw.replace(INNER_MARKS, '').replace(/[&+]/g, ' '));
  const hyphenated = hyphenatedForm(raw.replace(/[&+]/g, ' '));
  const noInitials = split
    .split(' ')
    .filter((word) => word.length > 1)
    .join(' ');
  const longest = longestDistinctiveWord(raw);
  const forms = [split, joined, hyphenated, primary, noInitials, longest];
  return [...new Set(forms.filter((q): q is string => q !== null && q !== ''))];
}
