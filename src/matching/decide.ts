import { formerNamesIn } from './former-names.js';
import {
  cityOfGeography,
  companyNameTokens,
  countryFromDomain,
  domainLabel,
  isPlaceholderName,
  latinSpelling,
  legalFormCountry,
  normalizeCity,
  normalizeCompanyName,
  normalizeCountry,
  normalizeIndustry,
  possibleCountries,
} from './normalize.js';
import type {
  MatchCandidate,
  MatchCompany,
  MatchDecision,
  ReviewCandidate,
  SearchEvidence,
} from './schemas.js';
import {
  compareNames,
  GENERIC_WORDS,
  type NameSimilarity,
  SIMILARITY_ORDER,
  SIMILARITY_WHY,
} from './similarity.js';

/*
 * The decision rules. A wrong link is worse than no link, so a record is linked only on an exact name and
 * only when nothing known speaks against it; everything merely close goes to a person.
 *
 * 1. Names are compared after normalizeCompanyName (case, accents, punctuation, "&"/"and", abbreviations such
 *    as Intl, legal forms such as Inc, GmbH, S.A., Pty Ltd and a leading "the" set aside). A record without a
 *    comparable name, or with a placeholder such as "N/A", is `no_match`.
 * 2. Candidates whose names only resemble the record's (spacing, word order, a small spelling difference,
 *    the record's distinctive words with words added or changed around them, initials) are never linked:
 *    they are kept for review. Candidates that resemble it in none of these ways are dropped.
 * 3. Among exact-name candidates, one in another country than the record's own country field is set aside.
 *    A record without a country: when there is one exact candidate only and the record's domain ends in a
 *    country code of another country, it is held back for review (a domain never links and never chooses).
 * 4. One exact candidate left:
 *    - it was the only exact-name candidate: linked, unless the name is weak (only common words, or one word
 *      the search did not show to be distinctive), in which case the record's country or city must agree;
 *    - it was one of several (namesakes): linked only if the record's own country or city agrees with it.
 * 5. Several exact candidates left: linked only if exactly one is in the record's city and every other one is
 *    known to be in a different city. Otherwise `needs_review`, with the same-name candidates first.
 * 6. No exact candidate, or every exact candidate set aside: `needs_review` when any candidate is plausible
 *    (exact or close), else `no_match`.
 * Industry never decides: sectors are coarse and CRM vocabularies differ, so agreement does not choose a
 * namesake and a difference does not set aside the only exact candidate. Industry, the domain's country
 * code, a domain that spells the name and a legal form used in one country only ("B.V.") are shown to the
 * reviewer.
 */

/** The admin page lists at most this many candidates; the rest are summarised in the reason. */
export const MAX_REVIEW_CANDIDATES = 10;

type Agreement = 'agrees' | 'differs' | 'unknown';

interface CompanyFacts {
  name: string;
  /** The name read in Latin letters when it is written in Cyrillic or Greek ones, else null. */
  latinName: string | null;
  tokens: string[];
  /** Only common words: never strong enough alone. */
  generic: boolean;
  /** The record's own country field. */
  country: string | null;
  /** The country of the domain's country-code ending, when the record has no country of its own. */
  domainCountry: string | null;
  city: string | null;
  sectors: string[];
  domainName: string | null;
  formCountry: string | null;
}

interface Assessed {
  candidate: MatchCandidate;
  similarity: NameSimilarity;
  country: Agreement;
  domainCountry: Agreement;
  countryCode: string | null;
  city: Agreement;
  industry: Agreement;
}

function companyFacts(company: MatchCompany): CompanyFacts {
  const tokens = companyNameTokens(company.name);
  const country = normalizeCountry(company.country);
  const label = domainLabel(company.domain);
  const latin = latinSpelling(company.name);
  const latinName = latin === null ? null : normalizeCompanyName(latin);
  return {
    name: tokens.join(' '),
    latinName: latinName === '' || latinName === tokens.join(' ') ? null : latinName,
    tokens,
    generic: tokens.length > 0 && tokens.every((token) => GENERIC_WORDS.has(token)),
    country,
    domainCountry: country === null ? countryFromDomain(company.domain) : null,
    city: normalizeCity(company.city),
    sectors: normalizeIndustry(company.industry),
    domainName: label === null ? null : label.replace(/[^a-z0-9]/g, ''),
    formCountry: legalFormCountry(company.name),
  };
}

function compare<T>(ours: T | null, theirs: T | null, same: (a: T, b: T) => boolean): Agreement {
  if (ours === null || theirs === null) return 'unknown';
  return same(ours, theirs) ? 'agrees' : 'differs';
}

/**
 * How the candidate's name relates to the record's: compared as written; else, for a name in Cyrillic or
 * Greek letters, compared in its Latin reading (the same name there is `transliterated`, never `exact`); else
 * the candidate's description may give the record's name as the company's former name.
 */
function similarityOf(facts: CompanyFacts, candidate: MatchCandidate): NameSimilarity | null {
  const theirs = normalizeCompanyName(candidate.name);
  const direct = compareNames(facts.name, theirs);
  if (direct === 'exact') return direct;
  const latin = facts.latinName === null ? null : compareNames(facts.latinName, theirs);
  const formers = formerNamesIn(candidate.description);
  if (formers.includes(facts.name) || (facts.latinName !== null && formers.includes(facts.latinName))) {
    return latin === 'exact' ? 'transliterated' : 'former_name';
  }
  if (latin === 'exact') return 'transliterated';
  return direct ?? latin;
}

function assess(facts: CompanyFacts, candidate: MatchCandidate): Assessed | null {
  const similarity = similarityOf(facts, candidate);
  if (similarity === null) return null;
  const sectors = normalizeIndustry(candidate.industry);
  let countryCode = normalizeCountry(candidate.geography);
  let country = compare(facts.country, countryCode, (a, b) => a === b);
  if (countryCode === null && facts.country !== null) {
    // "Bengaluru, IN" is India or Indiana: a record in neither is elsewhere all the same.
    const possible = possibleCountries(candidate.geography);
    if (possible.size > 0 && !possible.has(facts.country)) {
      country = 'differs';
      countryCode = [...possible].sort().join('/');
    }
  }
  return {
    candidate,
    similarity,
    country,
    domainCountry: compare(facts.domainCountry, countryCode, (a, b) => a === b),
    countryCode,
    city: compare(facts.city, cityOfGeography(candidate.geography), (a, b) => a === b),
    industry: compare(
      facts.sectors.length > 0 ? facts.sectors : null,
      sectors.length > 0 ? sectors : null,
      (a, b) => a.some((sector) => b.includes(sector)),
    ),
  };
}

/** Where the record's own place confirms the candidate: the only evidence that links a weak name or a namesake. */
function placesAgreeing(entry: Assessed): string[] {
  const found: string[] = [];
  if (entry.country === 'agrees') found.push('country');
  if (entry.city === 'agrees') found.push('city');
  return found;
}

function why(entry: Assessed, facts: CompanyFacts): string {
  const notes = [SIMILARITY_WHY[entry.similarity]];
  const agreed = placesAgreeing(entry);
  if (entry.industry === 'agrees') agreed.push('industry');
  if (agreed.length > 0) notes.push(`same ${agreed.join(', ')}`);
  if (entry.country === 'differs') {
    const place = `in ${entry.countryCode?.toUpperCase()}, the record says ${facts.country?.toUpperCase()}`;
    notes.push(entry.similarity === 'exact' ? `a namesake in another country: ${place}` : place);
  }
  if (entry.domainCountry !== 'unknown') {
    const ending = facts.domainCountry?.toUpperCase();
    notes.push(
      entry.domainCountry === 'agrees'
        ? `in ${ending}, where the record's domain ends`
        : `in ${entry.countryCode?.toUpperCase()}, the record's domain ends in ${ending}`,
    );
  }
  if (facts.formCountry !== null && entry.countryCode === facts.formCountry) {
    notes.push(`in ${facts.formCountry.toUpperCase()}, where the record's legal form is used`);
  }
  if (entry.city === 'differs') notes.push('in another city');
  if (entry.industry === 'differs') notes.push('in another industry');
  const compactName = normalizeCompanyName(entry.candidate.name).replace(/ /g, '');
  if (facts.domainName !== null && facts.domainName === compactName) notes.push("spells the record's domain");
  return notes.join('; ');
}

/** The record's own facts for the candidate less those against it: orders candidates of one name similarity. */
function evidenceFor(entry: Assessed): number {
  const facts = [entry.country, entry.city, entry.industry, entry.domainCountry];
  return facts.filter((f) => f === 'agrees').length - facts.filter((f) => f === 'differs').length;
}

function review(entries: Assessed[], facts: CompanyFacts, reason: string): MatchDecision {
  // Closest name first, then the candidate the record's facts speak for: the admin's "accept the first" takes
  // it (and leaves the record to a person when the next one is as good: storage/review-ties.ts).
  const ranked = [...entries].sort(
    (a, b) =>
      SIMILARITY_ORDER.indexOf(a.similarity) - SIMILARITY_ORDER.indexOf(b.similarity) ||
      evidenceFor(b) - evidenceFor(a),
  );
  const shown = ranked.slice(0, MAX_REVIEW_CANDIDATES);
  const candidates: ReviewCandidate[] = shown.map((entry) => ({
    slug: entry.candidate.slug,
    name: entry.candidate.name,
    industry: entry.candidate.industry ?? null,
    geography: entry.candidate.geography ?? null,
    why: why(entry, facts),
  }));
  const more = ranked.length - shown.length;
  return {
    status: 'needs_review',
    candidates,
    reason: more > 0 ? `${reason} (${more} more not shown)` : reason,
  };
}

/**
 * A reading in Latin letters links only with evidence of its own: the record's domain spells the report's
 * name, the record's country or city agrees and nothing (country, city, industry) differs.
 */
function readingConfirmed(entry: Assessed, facts: CompanyFacts): boolean {
  const compactName = normalizeCompanyName(entry.candidate.name).replace(/ /g, '');
  return (
    facts.domainName !== null &&
    facts.domainName === compactName &&
    placesAgreeing(entry).length > 0 &&
    entry.country !== 'differs' &&
    entry.city !== 'differs' &&
    entry.industry !== 'differs' &&
    entry.domainCountry !== 'differs'
  );
}

function matched(entry: Assessed, reason: string): MatchDecision {
  const shown = entry.industry === 'differs' ? '; the industries differ (shown, not decisive)' : '';
  return { status: 'matched', slug: entry.candidate.slug, reason: `${reason}${shown}` };
}

function uniqueBySlug(candidates: readonly MatchCandidate[]): MatchCandidate[] {
  const seen = new Set<string>();
  return candidates.filter((candidate) => {
    if (seen.has(candidate.slug)) return false;
    seen.add(candidate.slug);
    return true;
  });
}

/** True when a report's name carries the word, whole or as part of a longer word. */
function carries(tokens: readonly string[], word: string): boolean {
  return tokens.some(
    (token) =>
      token === word ||
      (word.length >= 4 && token.includes(word)) ||
      (token.length >= 4 && word.includes(token)),
  );
}

/**
 * Whether the search showed the record's name to be distinctive. Only common words never are. A name of
 * several words is when one of its distinctive words is carried by none of the other reports found ("Summit
 * Foods" beside "Summit Health" and "Summit Capital" is not). One word is when, in addition, the search for
 * it was complete (fewer hits than asked for): a common word brings back other companies using it, a coined
 * word brings back its own report. Without search evidence (a caller that passes candidates alone) one word
 * is never distinctive.
 */
function distinctiveName(
  facts: CompanyFacts,
  candidates: readonly MatchCandidate[],
  evidence: SearchEvidence | undefined,
): boolean {
  if (facts.generic) return false;
  const words = facts.tokens.filter((token) => !GENERIC_WORDS.has(token));
  if (facts.tokens.length === 1 && (evidence?.complete !== true || words.length === 0)) return false;
  const others = candidates
    .map((candidate) => companyNameTokens(candidate.name))
    .filter((tokens) => tokens.join(' ') !== facts.name);
  return words.some((word) => others.every((tokens) => !carries(tokens, word)));
}

/**
 * Decides whether a CRM company is one of the reports a search returned (see the rules above). `evidence`
 * is what the retrieval learnt about the search itself (see distinctiveWord).
 */
export function decideMatch(
  company: MatchCompany,
  candidates: readonly MatchCandidate[],
  evidence?: SearchEvidence,
): MatchDecision {
  const facts = companyFacts(company);
  const unusable = unusableName(company, facts);
  if (unusable !== null) return unusable;

  const unique = uniqueBySlug(candidates);
  const plausible = unique.flatMap((candidate) => assess(facts, candidate) ?? []);
  const exact = plausible.filter((entry) => entry.similarity === 'exact');
  if (exact.length === 0) return decideWithoutExactName(facts, unique, plausible);

  if (evidence?.partial === true) {
    return review(
      plausible,
      facts,
      'the report with this name was found by a search of word beginnings that came back full: another report of this name may be missing',
    );
  }

  const survivors = exact.filter(
    (entry) => entry.country !== 'differs' && !(exact.length === 1 && entry.domainCountry === 'differs'),
  );
  if (survivors.length === 0) {
    const only = exact[0];
    const reason =
      exact.length === 1 && only !== undefined
        ? only.country === 'differs'
          ? 'the only report with this name is in another country than the record'
          : "the only report with this name is in another country than the record's domain suggests"
        : `all ${exact.length} reports with this name are in another country than the record`;
    return review(plausible, facts, reason);
  }
  if (survivors.length === 1) {
    return decideOneInPlace(survivors[0]!, exact.length, facts, unique, plausible, evidence);
  }
  return decideAmongSameNames(survivors, exact.length, facts, plausible);
}

/** A record whose name cannot be matched at all: blank, no letters or digits, or a placeholder. */
function unusableName(company: MatchCompany, facts: CompanyFacts): MatchDecision | null {
  if (facts.name === '') {
    const blank = (company.name ?? '').trim() === '';
    return {
      status: 'no_match',
      reason: blank ? 'the record has no name' : 'the name has no letters or digits to compare',
    };
  }
  if (isPlaceholderName(facts.name)) {
    return { status: 'no_match', reason: `"${company.name}" is a placeholder, not a company name` };
  }
  return null;
}

/**
 * No report has exactly the record's name: one that matches once transliterated may still be matched, where the
 * record's domain and place confirm it; the others found go to review, or there is no match.
 */
function decideWithoutExactName(
  facts: CompanyFacts,
  unique: readonly MatchCandidate[],
  plausible: Assessed[],
): MatchDecision {
  const read = plausible.filter((entry) => entry.similarity === 'transliterated');
  const renamed = plausible.filter((entry) => entry.similarity === 'former_name');
  const onlyReading = read.length === 1 ? read[0]! : null;
  if (onlyReading !== null && readingConfirmed(onlyReading, facts)) {
    return matched(
      onlyReading,
      "the only report with this name once read in Latin letters; the record's domain spells it and its place agrees",
    );
  }
  if (read.length > 0) {
    return review(
      plausible,
      facts,
      `the name matches ${read.length === 1 ? 'a report' : `${read.length} reports`} only once transliterated to Latin letters`,
    );
  }
  if (renamed.length > 0) {
    return review(
      plausible,
      facts,
      `no report has this name; ${renamed.length === 1 ? "a report's description gives it" : `${renamed.length} reports' descriptions give it`} as a former name`,
    );
  }
  if (plausible.length > 0) {
    const close = plausible.length;
    const similar = close === 1 ? '1 has a similar one' : `${close} have a similar one`;
    return review(plausible, facts, `no report has exactly this name; ${similar}`);
  }
  return {
    status: 'no_match',
    reason:
      unique.length === 0
        ? 'the search found no reports'
        : unique.length === 1
          ? `the one report found has a name unlike "${facts.name}"`
          : `none of the ${unique.length} reports found has a name like "${facts.name}"`,
  };
}

/**
 * One report with the record's name is left in the record's country (of `exactCount` with that name): matched
 * when the name is distinctive or the place confirms it, and no two doubts (industry, city) stand against it.
 */
function decideOneInPlace(
  only: Assessed,
  exactCount: number,
  facts: CompanyFacts,
  unique: readonly MatchCandidate[],
  plausible: Assessed[],
  evidence: SearchEvidence | undefined,
): MatchDecision {
  const agreed = placesAgreeing(only);
  const distinctive = distinctiveName(facts, unique, evidence);
  if (exactCount === 1) {
    if (!distinctive && (facts.generic || facts.tokens.length === 1) && agreed.length === 0) {
      return review(
        plausible,
        facts,
        'the name is one common word or only common words, and neither the country nor the city confirms the report',
      );
    }
    // Industry alone never sets the only exact candidate aside (CRM industries are coarse and often
    // careless); with another doubt, or a name other reports share words with, it does.
    const doubts = [
      only.industry === 'differs' ? 'industry' : null,
      only.city === 'differs' ? 'city' : null,
    ].filter((doubt): doubt is string => doubt !== null);
    if (doubts.length >= 2 || (doubts.length === 1 && !distinctive)) {
      const shared = doubts.length === 1 ? ', and other reports found share words of the name' : '';
      return review(
        plausible,
        facts,
        `the only report with this name is in another ${doubts.join(' and ')} than the record${shared}`,
      );
    }
    const confirmed = agreed.length > 0 ? `; same ${agreed.join(', ')}` : '';
    const strength = facts.tokens.length === 1 && distinctive ? ' (a distinctive word)' : '';
    return matched(only, `the only report with this name${strength}${confirmed}`);
  }
  if (agreed.length === 0) {
    return review(
      plausible,
      facts,
      `${exactCount} reports share this name and neither the record's country nor its city confirms the one that remains`,
    );
  }
  return matched(
    only,
    `${exactCount} reports share this name; the others are in another country and this one has the same ${agreed.join(', ')}`,
  );
}

/** Several reports with the record's name are left in its country: only the record's city may single one out. */
function decideAmongSameNames(
  survivors: Assessed[],
  exactCount: number,
  facts: CompanyFacts,
  plausible: Assessed[],
): MatchDecision {
  if (facts.city !== null) {
    const inCity = survivors.filter((entry) => entry.city === 'agrees');
    const othersElsewhere = survivors.every((entry) => entry.city === 'agrees' || entry.city === 'differs');
    if (inCity.length === 1 && othersElsewhere) {
      return matched(
        inCity[0]!,
        `${exactCount} reports share this name; only this one is in the record's city`,
      );
    }
  }
  const lacking = facts.country === null && facts.city === null;
  return review(
    [...survivors, ...plausible.filter((entry) => !survivors.includes(entry))],
    facts,
    lacking
      ? `${survivors.length} reports share this name and the record has no country or city to tell them apart`
      : `${survivors.length} reports share this name and the record's country and city do not single one out`,
  );
}
