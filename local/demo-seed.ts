import type { LocalSeedCompany } from '../src/crm/provider.js';
import type { FixtureReport } from '../src/sandbox/index.js';

/**
 * Companies for the demo, the integration tests and the benchmark, made from the sandbox's fixtures so the
 * right outcome of each is known in advance: the name of a published report with its country (matched), a
 * slug set by hand (matched to that slug, whatever the name), a slug of an unpublished report
 * (not_published), a name several published reports share, with what the CRM usually knows (needs_review:
 * the country when every namesake is in it, and an industry, which tells them apart for a person but never
 * decides), and an invented name (no_match).
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
/**
 * Published reports sharing a name, each group in fixture order. A tie: every member in one country, of one
 * industry and with one score, so nothing on a record tells them apart.
 */
function namesakeGroups(published: readonly FixtureReport[]): {
  tied: FixtureReport[][];
  others: FixtureReport[][];
} {
  const byName = new Map<string, FixtureReport[]>();
  for (const f of published)
    byName.set(f.name.toLowerCase(), [...(byName.get(f.name.toLowerCase()) ?? []), f]);
  const groups = [...byName.values()].filter((g) => g.length > 1);
  const same = <T>(g: FixtureReport[], of: (f: FixtureReport) => T) => g.every((f) => of(f) === of(g[0]!));
  const isTie = (g: FixtureReport[]) =>
    same(g, (f) => countryOf(f.geography)) && same(g, (f) => f.industry) && same(g, (f) => f.score.overall);
  return { tied: groups.filter(isTie), others: groups.filter((g) => !isTie(g)) };
}

/** The place of the one tied record among the review records: early, so the first review page shows it. */
const TIE_AT = 1;

/** The `n`th review record: a namesake group's name, its country when they share one, one member's industry. */
function namesakeRecord(groups: ReturnType<typeof namesakeGroups>, n: number): SeedCompanyInput | null {
  const { tied, others } = groups;
  const tie = n === TIE_AT ? tied[0] : undefined;
  const pool = others.length > 0 ? others : tied;
  if (pool.length === 0) return null;
  const index = tied.length > 0 && n > TIE_AT && others.length > 0 ? n - 1 : n;
  const group = tie ?? pool[index % pool.length]!;
  const member = group[Math.floor(index / pool.length) % group.length]!;
  const countries = new Set(group.map((f) => countryOf(f.geography)));
  return {
    ...nameOnly(group[0]!.name, { status: 'needs_review' }),
    country: countries.size === 1 ? [...countries][0]! : null,
    industry: member.industry,
  };
}

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
  const namesakes = namesakeGroups(published);
  let reviews = 0;

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
    } else if (kind === 8 && namesakeRecord(namesakes, reviews) !== null) {
      out.push(namesakeRecord(namesakes, reviews++)!);
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
