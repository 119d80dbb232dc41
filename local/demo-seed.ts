import type { LocalSeedCompany } from '../src/crm/provider.js';
import type { FixtureReport } from '../src/sandbox/index.js';

/**
 * Companies for the demo, the integration tests and the benchmark, made from the sandbox's fixtures so the
 * right outcome of each is known in advance: the name of a published report with its country (matched), a
 * slug set by hand (matched to that slug, whatever the name), a slug of an unpublished report
 * (not_published), a shared name without a country (needs_review) and an invented name (no_match).
 */

export type ExpectedOutcome =
  | { status: 'matched'; slug: string }
  | { status: 'not_published'; slug: string }
  | { status: 'needs_review' }
  | { status: 'no_match' };

export interface SeedCompanyInput extends LocalSeedCompany {
  expected: ExpectedOutcome;
}

function countryOf(geography: string): string {
  const parts = geography.split(',').map((p) => p.trim());
  return parts[parts.length - 1] ?? geography;
}

function cityOf(geography: string): string | null {
  const parts = geography.split(',').map((p) => p.trim());
  return parts.length > 1 ? (parts[0] ?? null) : null;
}

/** A company known by its name alone (and perhaps a slug a person set). */
function nameOnly(name: string, expected: ExpectedOutcome, slug: string | null = null): SeedCompanyInput {
  return { name, domain: null, country: null, city: null, industry: null, slug, expected };
}

const INVENTED = [
  'Quillfeather',
  'Zantrax',
  'Morrowgate',
  'Plinthwell',
  'Vexaloop',
  'Corvintide',
  'Halcyra',
  'Brindlemoor',
];
const INVENTED_TAIL = ['Provisions', 'Outfitters', 'Cartography', 'Apiaries', 'Glassworks', 'Ropemakers'];

/**
 * `count` companies, deterministic. Unique fixture names are used once each before anything repeats, so a
 * seed of a few hundred covers every published report; past that, names repeat with a numbered domain
 * (several CRM companies may share one report).
 */
export function demoCompanies(fixtures: readonly FixtureReport[], count: number): SeedCompanyInput[] {
  const published = fixtures.filter((f) => f.published);
  const unpublished = fixtures.filter((f) => !f.published);
  const nameCount = new Map<string, number>();
  for (const f of fixtures)
    nameCount.set(f.name.toLowerCase(), (nameCount.get(f.name.toLowerCase()) ?? 0) + 1);
  // Names in a script that folds to nothing cannot be searched (the service's q allows only letters, digits,
  // spaces and hyphens; we send ASCII): such a company is honestly left without a match.
  const latin = (name: string) => /[A-Za-z]/.test(name.normalize('NFKD'));
  const unique = published.filter((f) => nameCount.get(f.name.toLowerCase()) === 1 && latin(f.name));
  const unsearchable = published.filter((f) => !latin(f.name));
  const shared = published.filter((f) => (nameCount.get(f.name.toLowerCase()) ?? 0) > 1);

  const out: SeedCompanyInput[] = [];
  for (let i = 0; out.length < count; i++) {
    const kind = i % 10;
    const n = Math.floor(i / 10);
    if (kind < 6 && unique.length > 0) {
      const f = unique[(n * 6 + kind) % unique.length]!;
      out.push({
        name: f.name,
        domain: `${f.slug}${i >= unique.length ? `-${i}` : ''}.example`,
        country: countryOf(f.geography),
        city: cityOf(f.geography),
        industry: f.industry,
        slug: null,
        expected: { status: 'matched', slug: f.slug },
      });
    } else if (kind === 6 && published.length > 0) {
      const f = published[(n * 7) % published.length]!;
      out.push(nameOnly(`Renamed Holdings ${i}`, { status: 'matched', slug: f.slug }, f.slug));
    } else if (kind === 7 && unpublished.length > 0) {
      const f = unpublished[n % unpublished.length]!;
      out.push(nameOnly(f.name, { status: 'not_published', slug: f.slug }, f.slug));
    } else if (kind === 8 && shared.length > 0) {
      const f = shared[n % shared.length]!;
      // Every other one carries its report's industry: still a namesake to review (industry never links), but
      // one whose first candidate the record speaks for; the rest are true ties a person must pick.
      out.push({
        ...nameOnly(f.name, { status: 'needs_review' }),
        industry: n % 2 === 1 ? f.industry : null,
      });
    } else if (kind === 9 && n % 4 === 0 && unsearchable.length > 0) {
      const f = unsearchable[(n / 4) % unsearchable.length]!;
      out.push(nameOnly(f.name, { status: 'no_match' }));
    } else {
      const name = `${INVENTED[i % INVENTED.length]} ${INVENTED_TAIL[n % INVENTED_TAIL.length]} ${i}`;
      out.push({ ...nameOnly(name, { status: 'no_match' }), country: 'Iceland' });
    }
  }
  return out;
}
