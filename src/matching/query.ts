import { nameToQuery } from '../report-query.js';
import { ABBREVIATIONS } from './legal-forms.js';
import { junkNameKind, latinSpelling, normalizeCompanyName, stripLegalForms } from './normalize.js';
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

/** Letters of a word up to which its spelling is certain: before a German umlaut or its "ae", "oe", "ue". */
const UNSURE_SPELLING = /[äöüÄÖÜß]|[aouAOU][eE]/u;
/** A word is cut to at most this many letters in the fallback search. */
const STEM_LENGTH = 4;
const FALLBACK_WORDS = 4;
/** Words searched in the fallback when no distinctive word is spelt for certain. */
const CERTAIN_WORDS = 2;

/**
 * The fallback search: the name's words cut to their first letters, which a search matching word beginnings
 * still finds whatever follows: a typo further on ("Prioldro Logistids" as "Prio Logi"), the other spelling
 * of an umlaut ("Krueger" as "Kru", which begins "Krüger", "Kruger" and "Krueger"). Abbreviated words are
 * left out ("Svcs" begins nothing "Services" does) and one-letter words with them. Null when nothing is left.
 */
function stemsForm(raw: string): string | null {
  // Legal forms are dropped as stripLegalForms drops them, but the words are kept as written: an umlaut must
  // survive to the cut, or "Rößler" would be searched as "Ross", which does not begin "Roessler".
  const core = new Set(
    stripLegalForms(raw)
      .toLowerCase()
      .split(' ')
      .filter((word) => word !== ''),
  );
  const words = raw
    .replace(INNER_MARKS, ' ')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => {
      const plain = nameToQuery(word).toLowerCase();
      return plain !== '' && core.has(plain) && !SPELT_MANY_WAYS.has(plain);
    });
  const ascii = (word: string) => /^[A-Za-z0-9]+$/.test(word);
  const certain = words.filter((word) => ascii(word) && !UNSURE_SPELLING.test(word));
  const generic = (word: string) => GENERIC_WORDS.has(word.toLowerCase());
  const distinctive = words.filter((word) => !generic(word) && word.length >= 3);
  const byLength = (a: string, b: string) => b.length - a.length;
  const stemOf = (word: string) => {
    const unsure = word.search(UNSURE_SPELLING);
    // The vowel of an umlaut is kept: "ö", "oe" and "o" all begin with it.
    const cut = unsure < 0 ? word : word.slice(0, unsure + 1);
    return nameToQuery([...cut].slice(0, STEM_LENGTH).join(''));
  };
  // One distinctive word in plain letters is enough, its stem long enough to name something; a second could
  // be the one the report writes with an accent ("Manana" for "Mañana"). Without such a word: the distinctive
  // words, then the common ones spelt for certain, words with accents last (a service that keeps accents does
  // not find "Kärnten" from "Ka").
  const plain = distinctive
    .filter(ascii)
    .sort((a, b) => stemOf(b).length - stemOf(a).length || byLength(a, b));
  const best = plain[0];
  const chosen =
    best !== undefined && stemOf(best).length >= 3
      ? [best]
      : [
          ...plain,
          ...certain.filter((word) => generic(word) && word.length >= 3).sort(byLength),
          ...distinctive.filter((word) => !ascii(word)).sort(byLength),
        ].slice(0, CERTAIN_WORDS);
  const stems = (chosen.length > 0 ? chosen : words.slice(0, FALLBACK_WORDS))
    .map(stemOf)
    .filter((stem) => stem.length >= 2);
  return stems.length === 0 ? null : stems.join(' ');
}

/**
 * Words the fallback search leaves out: the abbreviations and their full words (either may be on the other
 * side), and connectives written as words on one side and as marks on the other ("and" for "&").
 */
const SPELT_MANY_WAYS: ReadonlySet<string> = new Set([
  ...Object.keys(ABBREVIATIONS),
  ...Object.values(ABBREVIATIONS),
  'and',
  'und',
  'et',
  'y',
  'of',
  'the',
  'company',
  'co',
  'corp',
  'corporation',
]);

/** A name that holds marks the service may read as word breaks or as nothing ("O'Brien", "Acme.io"). */
const HAS_INNER_MARKS = /(?<=[\p{L}\p{N}])[.'\u2019`´&+-](?=[\p{L}\p{N}])/u;

export interface SearchPlan {
  /** The first search, always made. */
  first: string;
  /** The one further search, made only when the first found nothing acceptable. */
  fallback: string | null;
}

/**
 * The searches for a record: one, and at most one further. The first is the name as written (legal forms
 * off, marks as word breaks; a name in Cyrillic or Greek letters in its Latin reading). The fallback, for
 * when the first found nothing acceptable, is for a name partly in another script its Latin words alone, for
 * a name with marks the name with its marks joined (the service may read "O'Brien" as one word), else the
 * name's words cut short (stemsForm). Null for a name that is no
 * company name (junkNameKind) or has nothing searchable: such a record costs no search.
 */
export function searchPlanFor(name: string | null | undefined): SearchPlan | null {
  const raw = latinSpelling(name) ?? name ?? '';
  if (junkNameKind(raw) !== null) return null;
  const forms = queryFormsFor(raw);
  const first = forms[0];
  if (first === undefined) return null;
  const joined = form(raw.replace(INNER_MARKS, '').replace(/[&+]/g, ' '));
  // A name partly in another script ("Αθηνά Analytics") may be kept by the service as written, its other
  // letters read as nothing: then the Latin words alone find it.
  const latinWordsAlone = raw !== (name ?? '') ? searchQueryFor({ name }) : null;
  const candidates = HAS_INNER_MARKS.test(raw)
    ? [latinWordsAlone, joined, stemsForm(raw)]
    : [latinWordsAlone, stemsForm(raw), forms[forms.length - 1]];
  const fallback = candidates.find((q) => q !== null && q !== '' && q !== first) ?? null;
  return { first, fallback };
}
