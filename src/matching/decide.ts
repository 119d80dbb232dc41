import {
  cityOfGeography,
  companyNameTokens,
  countryFromDomain,
  domainLabel,
  isPlaceholderName,
  normalizeCity,
  normalizeCompanyName,
  normalizeCountry,
  normalizeIndustry,
} from './normalize.js';
import type { MatchCandidate, MatchCompany, MatchDecision, ReviewCandidate } from './schemas.js';
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
 *    words added or changed around a shared distinctive word, initials) are never linked: they are kept for
 *    review. Candidates that resemble it in none of these ways are dropped.
 * 3. Among exact-name candidates, one that positively disagrees is set aside: a known country that differs
 *    (from the record's country, or else its domain's country-code TLD, against the report's geography), or
 *    a known industry that shares no sector with the record's.
 * 4. One exact candidate left:
 *    - it was the only exact-name candidate: linked, unless the name is weak (one word, or only generic words
 *      such as "Global Solutions"), in which case the country or city must agree as well;
 *    - it was one of several: linked only if it agrees with the record on something (country, city or
 *      industry; country or city for a weak name): namesakes exist, so absence of conflict is not enough.
 * 5. Several exact candidates left: linked only if exactly one is in the record's city and every other one is
 *    known to be in a different city. Otherwise `needs_review`, with the same-name candidates first.
 * 6. No exact candidate, or every exact candidate set aside: `needs_review` when any candidate is plausible
 *    (exact or close), else `no_match`.
 * Domain evidence: reports carry no domain, so a domain never links; it only supplies a country when the
 * record has none and is mentioned to the reviewer when it spells a candidate's name.
 */

/** The admin page lists at most this many candidates; the rest are summarised in the reason. */
export const MAX_REVIEW_CANDIDATES = 10;

type Agreement = 'agrees' | 'differs' | 'unknown';

interface CompanyFacts {
  name: string;
  weak: boolean;
  country: string | null;
  countryFrom: 'country' | 'domain' | null;
  city: string | null;
  sectors: string[];
  domainName: string | null;
}

interface Assessed {
  candidate: MatchCandidate;
  similarity: NameSimilarity;
  country: Agreement;
  countryCode: string | null;
  city: Agreement;
  industry: Agreement;
}

function companyFacts(company: MatchCompany): CompanyFacts {
  const tokens = companyNameTokens(company.name);
  const fromField = normalizeCountry(company.country);
  const fromDomain = fromField === null ? countryFromDomain(company.domain) : null;
  const label = domainLabel(company.domain);
  return {
    name: tokens.join(' '),
    weak: tokens.length === 1 || tokens.every((token) => GENERIC_WORDS.has(token)),
    country: fromField ?? fromDomain,
    countryFrom: fromField !== null ? 'country' : fromDomain !== null ? 'domain' : null,
    city: normalizeCity(company.city),
    sectors: normalizeIndustry(company.industry),
    domainName: label === null ? null : label.replace(/[^a-z0-9]/g, ''),
  };
}

function compare<T>(ours: T | null, theirs: T | null, same: (a: T, b: T) => boolean): Agreement {
  if (ours === null || theirs === null) return 'unknown';
  return same(ours, theirs) ? 'agrees' : 'differs';
}

function assess(facts: CompanyFacts, candidate: MatchCandidate): Assessed | null {
  const similarity = compareNames(facts.name, normalizeCompanyName(candidate.name));
  if (similarity === null) return null;
  const countryCode = normalizeCountry(candidate.geography);
  const sectors = normalizeIndustry(candidate.industry);
  return {
    candidate,
    similarity,
    country: compare(facts.country, countryCode, (a, b) => a === b),
    countryCode,
    city: compare(facts.city, cityOfGeography(candidate.geography), (a, b) => a === b),
    industry: compare(
      facts.sectors.length > 0 ? facts.sectors : null,
      sectors.length > 0 ? sectors : null,
      (a, b) => a.some((sector) => b.includes(sector)),
    ),
  };
}

function agreementsOf(entry: Assessed, facts: CompanyFacts): string[] {
  const found: string[] = [];
  if (entry.country === 'agrees')
    found.push(facts.countryFrom === 'domain' ? 'country (from the domain)' : 'country');
  if (entry.city === 'agrees') found.push('city');
  if (entry.industry === 'agrees') found.push('industry');
  return found;
}

function confirmsPlace(entry: Assessed): boolean {
  return entry.country === 'agrees' || entry.city === 'agrees';
}

function why(entry: Assessed, facts: CompanyFacts): string {
  const notes = [SIMILARITY_WHY[entry.similarity]];
  const agreed = agreementsOf(entry, facts);
  if (agreed.length > 0) notes.push(`same ${agreed.join(', ')}`);
  if (entry.country === 'differs') {
    notes.push(`in ${entry.countryCode?.toUpperCase()}, the record says ${facts.country?.toUpperCase()}`);
  }
  if (entry.city === 'differs') notes.push('in another city');
  if (entry.industry === 'differs') notes.push('in another industry');
  const compactName = normalizeCompanyName(entry.candidate.name).replace(/ /g, '');
  if (facts.domainName !== null && facts.domainName === compactName) notes.push("spells the record's domain");
  return notes.join('; ');
}

function review(entries: Assessed[], facts: CompanyFacts, reason: string): MatchDecision {
  const ranked = [...entries].sort(
    (a, b) => SIMILARITY_ORDER.indexOf(a.similarity) - SIMILARITY_ORDER.indexOf(b.similarity),
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

function matched(entry: Assessed, reason: string): MatchDecision {
  return { status: 'matched', slug: entry.candidate.slug, reason };
}

function uniqueBySlug(candidates: readonly MatchCandidate[]): MatchCandidate[] {
  const seen = new Set<string>();
  return candidates.filter((candidate) => {
    if (seen.has(candidate.slug)) return false;
    seen.add(candidate.slug);
    return true;
  });
}

/** Decides whether a CRM company is one of the reports a search returned (see the rules above). */
export function decideMatch(company: MatchCompany, candidates: readonly MatchCandidate[]): MatchDecision {
  const facts = companyFacts(company);
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

  const unique = uniqueBySlug(candidates);
  const plausible = unique.flatMap((candidate) => assess(facts, candidate) ?? []);
  const exact = plausible.filter((entry) => entry.similarity === 'exact');
  const close = plausible.length - exact.length;

  if (exact.length === 0) {
    if (plausible.length > 0) {
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

  const survivors = exact.filter((entry) => entry.country !== 'differs' && entry.industry !== 'differs');
  if (survivors.length === 0) {
    const only = exact[0];
    const reason =
      exact.length === 1 && only !== undefined
        ? `the only report with this name is in another ${only.country === 'differs' ? 'country' : 'industry'} than the record`
        : `all ${exact.length} reports with this name are in another country or industry than the record`;
    return review(plausible, facts, reason);
  }

  if (survivors.length === 1) {
    const only = survivors[0]!;
    const agreed = agreementsOf(only, facts);
    if (facts.weak && !confirmsPlace(only)) {
      return review(
        plausible,
        facts,
        'the name is one word or only common words, and neither the country nor the city confirms the report',
      );
    }
    if (exact.length === 1) {
      const confirmed = agreed.length > 0 ? `; same ${agreed.join(', ')}` : '';
      return matched(only, `the only report with this name${confirmed}`);
    }
    if (agreed.length === 0) {
      return review(
        plausible,
        facts,
        `${exact.length} reports share this name and nothing on the record confirms the one that remains`,
      );
    }
    return matched(
      only,
      `${exact.length} reports share this name; the others differ from the record and this one has the same ${agreed.join(', ')}`,
    );
  }

  if (facts.city !== null) {
    const inCity = survivors.filter((entry) => entry.city === 'agrees');
    const othersElsewhere = survivors.every((entry) => entry.city === 'agrees' || entry.city === 'differs');
    if (inCity.length === 1 && othersElsewhere) {
      return matched(
        inCity[0]!,
        `${exact.length} reports share this name; only this one is in the record's city`,
      );
    }
  }
  const lacking = facts.country === null && facts.sectors.length === 0;
  return review(
    [...survivors, ...plausible.filter((entry) => !survivors.includes(entry))],
    facts,
    lacking
      ? `${survivors.length} reports share this name and the record has no country or industry to tell them apart`
      : `${survivors.length} reports share this name and the record's country, city and industry do not single one out`,
  );
}
