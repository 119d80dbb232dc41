import anyAscii from 'any-ascii';
import { foldToAscii } from '../report-query.js';
import { INDUSTRY_SECTORS } from './industries.js';
import {
  ABBREVIATIONS,
  ARTICLES,
  LEGAL_FORM_COUNTRY,
  LEGAL_PREFIXES,
  LEGAL_SUFFIXES,
  PLACEHOLDER_NAMES,
} from './legal-forms.js';
import { COUNTRY_NAMES, DOMAIN_COUNTRY, REGION_COUNTRY } from './places.js';

/**
 * Comparable forms of names, countries and industries. Every function here is total: any string (or null)
 * in, a value out, never an exception, and normalising a normalised name changes nothing.
 */

/**
 * Lower case and fold until stable: lower-casing can add combining marks ("İ" -> "i̇") and compatibility
 * folding can add capitals ("ℌ" -> "H"), so one pass of each is not always a fixed point.
 */
function foldLower(text: string): string {
  let current = text;
  for (let i = 0; i < 4; i += 1) {
    // Greek capital sigma lowers to final "ς" or medial "σ" depending on what follows it, so cutting a
    // name changes its letters; one form keeps names comparable.
    const next = foldToAscii(current.toLowerCase()).replace(/ς/g, 'σ');
    if (next === current) return next;
    current = next;
  }
  return current;
}

/** Words of a name before any legal form is removed, with the same case and accent folding as the result. */
function rawNameTokens(name: string): string[] {
  const text = foldLower(name)
    .replace(/[&+]/g, ' and ')
    // Dots and apostrophes join what they separate: "S.A." is "sa", "O'Brien" is "obrien".
    .replace(/[.'\u2019`´]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  if (text === '') return [];
  const tokens = text.split(' ').map(spellOut);
  // Joined initials are a new word ("o e" -> "oe"), folded as any other.
  return joinInitials(tokens).map(foldUmlautSpelling);
}

/**
 * German umlauts are written either way ("Müller", "Mueller") and folded accents give a third ("Muller"): a
 * vowel a, o or u followed by e is read as the vowel alone, so all three are one word. Names that differ only
 * by such an e become equal too ("Boeing" / "Boing"); both sides are folded alike, so it costs only that.
 * Not at the start of a word, where "ae" and "oe" are mostly not umlauts ("Aerospace", "Oerlikon").
 */
function foldUmlautSpelling(token: string): string {
  return token.replace(/(?<=[a-z0-9])([aou])e+/g, '$1');
}

function abbreviationOf(word: string): string | undefined {
  return Object.hasOwn(ABBREVIATIONS, word) ? ABBREVIATIONS[word] : undefined;
}

/** A word as compared: umlaut spellings folded, abbreviations spelt out (ABBREVIATIONS). */
function spellOut(token: string): string {
  const folded = foldUmlautSpelling(token);
  // Own keys only: a company called "Constructor" must not find Object.prototype's member.
  const full = abbreviationOf(folded) ?? abbreviationOf(token);
  return full === undefined ? folded : foldUmlautSpelling(full);
}

/** "a o smith" -> "ao smith", "s a" -> "sa": initials written with spaces or dots are one word. */
function joinInitials(tokens: string[]): string[] {
  const out: string[] = [];
  let run = '';
  for (const token of tokens) {
    if (/^[a-z]$/.test(token)) {
      run += token;
      continue;
    }
    if (run !== '') out.push(run);
    run = '';
    out.push(token);
  }
  if (run !== '') out.push(run);
  return out;
}

function tokenTable(entries: readonly string[]): string[][] {
  const table = entries.map(rawNameTokens).filter((tokens) => tokens.length > 0);
  // Longest first, so "gmbh and co kg" is removed whole rather than "kg" alone.
  return table.sort((a, b) => b.length - a.length);
}

const CJK = /^[\p{Script=Han}\p{Script=Hangul}\p{Script=Katakana}\p{Script=Hiragana}]+$/u;
const SUFFIXES = tokenTable(LEGAL_SUFFIXES);
const PREFIXES = tokenTable(LEGAL_PREFIXES);
const ARTICLE_TOKENS = new Set(ARTICLES.flatMap(rawNameTokens));
const PLACEHOLDERS = new Set(PLACEHOLDER_NAMES.map((entry) => rawNameTokens(entry).join(' ')));

/**
 * Legal forms written without a space in scripts that do not separate words ("トヨタ自動車株式会社"). Only
 * forms of three characters or more: a one-character form such as "株" would cut the end off ordinary words.
 */
const ATTACHED_FORMS = [...SUFFIXES, ...PREFIXES]
  .filter((tokens) => tokens.length === 1 && [...tokens[0]!].length >= 3 && CJK.test(tokens[0]!))
  .map((tokens) => tokens[0]!)
  .sort((a, b) => b.length - a.length);

function endsWith(tokens: readonly string[], tail: readonly string[]): boolean {
  if (tail.length > tokens.length) return false;
  const offset = tokens.length - tail.length;
  return tail.every((token, i) => tokens[offset + i] === token);
}

function startsWith(tokens: readonly string[], head: readonly string[]): boolean {
  return head.length <= tokens.length && head.every((token, i) => tokens[i] === token);
}

/**
 * One removal step, or null when none applies. A step never removes the last word: "The Limited" stays
 * "limited", "Inc." stays "inc".
 */
function stripOnce(tokens: string[]): string[] | null {
  if (tokens.length < 2) return attachedStrip(tokens);
  if (ARTICLE_TOKENS.has(tokens[0]!)) return tokens.slice(1);
  if (ARTICLE_TOKENS.has(tokens[tokens.length - 1]!)) return tokens.slice(0, -1);
  for (const suffix of SUFFIXES) {
    if (suffix.length < tokens.length && endsWith(tokens, suffix)) return tokens.slice(0, -suffix.length);
  }
  for (const prefix of PREFIXES) {
    if (prefix.length < tokens.length && startsWith(tokens, prefix)) return tokens.slice(prefix.length);
  }
  return attachedStrip(tokens);
}

function attachedStrip(tokens: string[]): string[] | null {
  const first = tokens[0];
  const last = tokens[tokens.length - 1];
  if (first === undefined || last === undefined) return null;
  for (const form of ATTACHED_FORMS) {
    if (last.length > form.length && last.endsWith(form))
      return retokenize([...tokens.slice(0, -1), last.slice(0, -form.length)]);
    if (first.length > form.length && first.startsWith(form))
      return retokenize([first.slice(form.length), ...tokens.slice(1)]);
  }
  return null;
}

/**
 * What is left of a word once an attached form is cut off is a new word: it is spelt out and joined to
 * neighbouring initials as rawNameTokens would have done ("주식회사I/S" -> "i s" -> "is"), or normalising the
 * result again would change it.
 */
function retokenize(tokens: string[]): string[] {
  return joinInitials(tokens.map(spellOut)).map(foldUmlautSpelling);
}

/** The words of a name as the matcher compares them: legal forms, articles and punctuation gone. */
export function companyNameTokens(name: string | null | undefined): string[] {
  let tokens = rawNameTokens(name ?? '');
  // Every step makes the name shorter, so this ends; stopping early would break idempotence.
  for (;;) {
    const next = stripOnce(tokens);
    if (next === null) return tokens;
    tokens = next;
  }
}

/**
 * The comparable form of a company name: accents folded, lower case, `&` as "and", punctuation dropped,
 * common abbreviations spelt out, legal forms ("Inc", "GmbH & Co. KG", "Pty Ltd", "S.A.S.", "PT ...") and a
 * leading or trailing "the" removed. Empty when the name has no letters or digits.
 */
export function normalizeCompanyName(name: string | null | undefined): string {
  return companyNameTokens(name).join(' ');
}

const OTHER_SCRIPT = /[\p{Script=Cyrillic}\p{Script=Greek}]+/gu;

/**
 * The name with its Cyrillic and Greek letters read as Latin ones ("Сирван" -> "Sirvan"), or null when it has
 * none. Other scripts are left as they are: a name in Chinese or Japanese characters read as pinyin or romaji
 * is rarely how the company writes itself in Latin letters, and searching it would bring back noise.
 */
export function latinSpelling(name: string | null | undefined): string | null {
  if (name == null) return null;
  const text = name.normalize('NFC');
  OTHER_SCRIPT.lastIndex = 0;
  if (!OTHER_SCRIPT.test(text)) return null;
  return text.replace(OTHER_SCRIPT, (run) => anyAscii(run));
}

const EMAIL = /^\s*[^\s@]+@[^\s@]+\.[^\s@]+\s*$/u;
const WEB_ADDRESS = /^\s*(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S*\s*$/iu;
// Only forms of address no company starts with: "Mr Price", "Dr. Oetker" and "MS Amlin" are companies.
const HONORIFIC = /^\s*(?:Mrs|MRS|Mme|Herr|Frau)\.?\s+\p{Lu}/u;
/** A sentence break inside a long text ("...again. left a voicemail"): notes pasted into the name field. */
const SENTENCE_BREAK = /[.;!?]\s+\p{Ll}/u;

/**
 * What a name field holds when it holds no company name: a placeholder ("N/A", "Unknown"), an email
 * address, a web address, a person addressed as one ("Mrs ...", "Herr ..."), or notes pasted in (many words across
 * sentences). Null when it looks like a name. Such a record is left alone and costs no search.
 */
export function junkNameKind(name: string | null | undefined): string | null {
  const raw = name ?? '';
  if (EMAIL.test(raw)) return 'an email address';
  if (WEB_ADDRESS.test(raw)) return 'a web address';
  if (HONORIFIC.test(raw)) return "a person's name";
  const words = raw.split(/\s+/).filter((word) => word !== '');
  if (words.length > 10 && SENTENCE_BREAK.test(raw)) return 'notes, not a name';
  const normalized = normalizeCompanyName(raw);
  if (normalized !== '' && isPlaceholderName(normalized)) return 'a placeholder';
  return null;
}

const FORM_COUNTRY = new Map(
  Object.entries(LEGAL_FORM_COUNTRY).map(([form, code]) => [rawNameTokens(form).join(' '), code]),
);

/**
 * The country a name's trailing legal form belongs to when that form is used in one country only
 * ("Acme B.V." -> "nl"), else null. A hint for the reviewer: see LEGAL_FORM_COUNTRY.
 */
export function legalFormCountry(name: string | null | undefined): string | null {
  const raw = rawNameTokens(name ?? '');
  const core = companyNameTokens(name);
  if (core.length === 0 || core.length >= raw.length) return null;
  const at = raw.findIndex((_, i) => raw.slice(i, i + core.length).join(' ') === core.join(' '));
  if (at < 0) return null;
  const tail = raw.slice(at + core.length).join(' ');
  return FORM_COUNTRY.get(tail) ?? null;
}

/** True for names such as "N/A", "Unknown" or "Test Company" that do not name a company. */
export function isPlaceholderName(normalizedName: string): boolean {
  return PLACEHOLDERS.has(normalizedName);
}

/** Beyond this many words, finding the shortest run that keeps the name costs more than it saves. */
const MAX_WORDS_TO_TRIM = 24;

/**
 * The name with its legal forms removed but its own words as written (case kept, abbreviations not spelt
 * out), which is what a full-text search should be given.
 */
export function stripLegalForms(name: string): string {
  const keep = normalizeCompanyName(name);
  if (keep === '') return '';
  const words = foldToAscii(name)
    .replace(/[.'\u2019`´]/g, '')
    .split(/[^\p{L}\p{N}&+]+/u)
    .filter((word) => word !== '');
  if (words.length > MAX_WORDS_TO_TRIM) return words.join(' ');
  // The shortest run of written words that still normalises to the same name: "Orsted A S" needs both "A"
  // and "S" gone at once, so words are not dropped one at a time.
  for (let length = 1; length <= words.length; length += 1) {
    for (let start = 0; start + length <= words.length; start += 1) {
      const run = words.slice(start, start + length).join(' ');
      if (normalizeCompanyName(run) === keep) return run;
    }
  }
  return words.join(' ');
}

// ---------------------------------------------------------------------------------------------- places

function placeText(value: string): string {
  return foldLower(value)
    .replace(/&/g, ' and ')
    .replace(/[.'\u2019`´]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function invert(table: Readonly<Record<string, readonly string[]>>): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const [code, names] of Object.entries(table)) {
    for (const name of [code, ...names]) {
      const key = placeText(name);
      const codes = map.get(key) ?? new Set<string>();
      codes.add(code);
      map.set(key, codes);
    }
  }
  return map;
}

const COUNTRY_BY_NAME = invert(COUNTRY_NAMES);
const REGION_BY_NAME = (() => {
  const map = new Map<string, Set<string>>();
  for (const [code, names] of Object.entries(REGION_COUNTRY)) {
    for (const name of names) {
      const key = placeText(name);
      const codes = map.get(key) ?? new Set<string>();
      codes.add(code);
      map.set(key, codes);
    }
  }
  return map;
})();

/** Splits "Berlin, Germany", "Austin / TX / USA", "Germany (Berlin)", "Lyon - France" into parts. */
function placeParts(value: string): string[] {
  return value
    .split(/[,;/|()]|\s[-–—]\s/)
    .map(placeText)
    .filter((part) => part !== '');
}

/** Country codes a part can name; regions count only after the first part, or for full names alone. */
function codesForPart(part: string, position: number, partCount: number): Set<string> {
  const codes = new Set(COUNTRY_BY_NAME.get(part) ?? []);
  const regionAllowed = position > 0 || (partCount === 1 && codes.size === 0 && part.length > 3);
  if (regionAllowed) for (const code of REGION_BY_NAME.get(part) ?? []) codes.add(code);
  return codes;
}

/**
 * The ISO 3166-1 alpha-2 code (lower case) a country name, code or free-text geography names, or null when it
 * names none or is ambiguous. "Berlin, Germany", "DE", "Deutschland" -> "de"; "Austin, TX" -> "us";
 * "Berlin, DE" -> null (Delaware or Germany); "Remote" -> null.
 */
export function normalizeCountry(value: string | null | undefined): string | null {
  if (value == null) return null;
  const parts = placeParts(value);
  const found = new Set<string>();
  parts.forEach((part, index) => {
    const codes = codesForPart(part, index, parts.length);
    // A part that could be two countries says nothing.
    if (codes.size === 1) found.add([...codes][0]!);
  });
  return found.size === 1 ? [...found][0]! : null;
}

/**
 * Every country a geography may name, when it names one or more ("Bengaluru, IN" -> India or Indiana, US):
 * a record in none of them is in another country, even where normalizeCountry cannot say which one it is.
 */
export function possibleCountries(value: string | null | undefined): Set<string> {
  if (value == null) return new Set();
  const parts = placeParts(value);
  const found = new Set<string>();
  parts.forEach((part, index) => {
    for (const code of codesForPart(part, index, parts.length)) found.add(code);
  });
  return found;
}

/** The country a domain's top-level label reliably implies (`acme.de` -> "de"), else null. */
export function countryFromDomain(domain: string | null | undefined): string | null {
  if (domain == null) return null;
  const host = domain
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#:].*$/, '')
    .replace(/\.$/, '');
  const label = host.split('.').pop() ?? '';
  if (!host.includes('.')) return null;
  return DOMAIN_COUNTRY[label] ?? null;
}

/** A domain's host in comparable form (`https://www.Acme.com/about` -> "acme.com"), or null. */
export function normalizeDomain(domain: string | null | undefined): string | null {
  if (domain == null) return null;
  const host = domain
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#:].*$/, '')
    .replace(/^www\./, '')
    .replace(/\.$/, '');
  return host.includes('.') ? host : null;
}

/** The first label of a domain without `www.` (`www.acme-robotics.com` -> "acme-robotics"), else null. */
export function domainLabel(domain: string | null | undefined): string | null {
  if (domain == null) return null;
  const host = domain
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#:].*$/, '')
    .replace(/^www\./, '');
  const label = host.split('.')[0] ?? '';
  return host.includes('.') && label !== '' ? label : null;
}

/** A city in comparable form ("São Paulo" -> "sao paulo"), or null. */
export function normalizeCity(value: string | null | undefined): string | null {
  if (value == null) return null;
  const city = placeText(value);
  return city === '' ? null : city;
}

/**
 * The city part of a free-text geography: the first part of "City, Country" when it is not itself a country
 * or region ("Berlin, Germany" -> "berlin"; "Germany" -> null).
 */
export function cityOfGeography(value: string | null | undefined): string | null {
  if (value == null) return null;
  const parts = placeParts(value);
  const first = parts[0];
  if (parts.length < 2 || first === undefined) return null;
  if (COUNTRY_BY_NAME.has(first) || REGION_BY_NAME.has(first)) return null;
  return first;
}

// ------------------------------------------------------------------------------------------- industries

const INDUSTRY_PHRASES = Object.entries(INDUSTRY_SECTORS)
  .map(([phrase, sectors]) => ({ words: placeText(phrase).split(' '), sectors }))
  .sort((a, b) => b.words.length - a.words.length);

/**
 * The sectors an industry value belongs to, sorted and without repeats (see industries.ts): "COMPUTER_SOFTWARE"
 * -> ["software"], "Fintech" -> ["finance", "software"], unknown or empty -> [].
 */
export function normalizeIndustry(value: string | null | undefined): string[] {
  if (value == null) return [];
  const words = placeText(value.replace(/_/g, ' ')).split(' ');
  const sectors = new Set<string>();
  let i = 0;
  while (i < words.length) {
    const hit = INDUSTRY_PHRASES.find((phrase) => startsWith(words.slice(i), phrase.words));
    if (hit === undefined) {
      i += 1;
      continue;
    }
    for (const sector of hit.sectors) sectors.add(sector);
    i += hit.words.length;
  }
  return [...sectors].sort();
}
