import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideMatch, MAX_REVIEW_CANDIDATES } from '../src/matching/decide.js';
import { normalizeCompanyName } from '../src/matching/normalize.js';
import { type MatchCandidate, type MatchCompany, matchDecisionSchema } from '../src/matching/schemas.js';

function report(slug: string, name: string, geography?: string, industry?: string): MatchCandidate {
  return { slug, name, geography: geography ?? null, industry: industry ?? null, stage: 'Seed' };
}

function company(name: string, more: Partial<MatchCompany> = {}): MatchCompany {
  return { name, domain: null, industry: null, country: null, city: null, ...more };
}

function reviewSlugs(decision: ReturnType<typeof decideMatch>): string[] {
  if (decision.status !== 'needs_review') throw new Error(`expected needs_review, got ${decision.status}`);
  return decision.candidates.map((candidate) => candidate.slug);
}

describe('decideMatch: one exact-name candidate', () => {
  it('links it when the names match once formatting and legal forms are set aside', () => {
    const decision = decideMatch(company('NORDLICHT ANALYTICS G.m.b.H.'), [
      report('nordlicht', 'Nordlicht Analytics GmbH', 'Berlin, Germany', 'Software'),
      report('other', 'Kestrel Data Ltd', 'Leeds, UK', 'Software'),
    ]);
    expect(decision).toMatchObject({ status: 'matched', slug: 'nordlicht' });
  });

  it('links it over close names', () => {
    const decision = decideMatch(company('Acme Robotics Inc.', { country: 'USA' }), [
      report('systems', 'Acme Robotic Systems', 'Pittsburgh, PA'),
      report('acme', 'Acme Robotics', 'Cleveland, OH'),
    ]);
    expect(decision).toMatchObject({ status: 'matched', slug: 'acme' });
  });

  it('leaves it for review when its country differs from the record', () => {
    const decision = decideMatch(company('Helix Therapeutics AG', { country: 'Schweiz' }), [
      report('helix-us', 'Helix Therapeutics, Inc.', 'Boston, MA, USA', 'Biotech'),
    ]);
    expect(reviewSlugs(decision)).toEqual(['helix-us']);
    if (decision.status === 'needs_review') expect(decision.candidates[0]?.why).toContain('US');
  });

  it('uses the country of a country-code domain when the record has no country', () => {
    const candidates = [report('helix-us', 'Helix Therapeutics', 'Boston, MA, USA', 'Biotech')];
    expect(
      decideMatch(company('Helix Therapeutics', { domain: 'helix-therapeutics.ch' }), candidates).status,
    ).toBe('needs_review');
    expect(decideMatch(company('Helix Therapeutics', { domain: 'helixtx.com' }), candidates)).toMatchObject({
      status: 'matched',
      slug: 'helix-us',
    });
  });

  it('prefers the country field over the domain', () => {
    const decision = decideMatch(
      company('Helix Therapeutics', { domain: 'helix.ch', country: 'United States' }),
      [report('helix-us', 'Helix Therapeutics', 'Boston, MA, USA')],
    );
    expect(decision).toMatchObject({ status: 'matched', slug: 'helix-us' });
  });

  it('never sets the only exact candidate aside on industry alone (issue 12), and says the industries differ', () => {
    const candidates = [report('summit', 'Summit Foods', 'Portland, OR', 'Software')];
    const differing = decideMatch(company('Summit Foods', { industry: 'FOOD_BEVERAGES' }), candidates);
    expect(differing).toMatchObject({ status: 'matched', slug: 'summit' });
    expect(differing.reason).toContain('industries differ');
    expect(decideMatch(company('Summit Foods', { industry: 'Technology' }), candidates)).toMatchObject({
      status: 'matched',
    });
    // With a second doubt (another city), or beside other reports sharing the name's words, it is held back.
    expect(
      decideMatch(company('Summit Foods', { industry: 'FOOD_BEVERAGES', city: 'Denver' }), candidates).status,
    ).toBe('needs_review');
    const beside = [...candidates, report('summit-health', 'Summit Health', 'Phoenix, AZ', 'Digital Health')];
    expect(decideMatch(company('Summit Foods', { industry: 'FOOD_BEVERAGES' }), beside).status).toBe(
      'needs_review',
    );
    expect(decideMatch(company('Summit Foods'), beside)).toMatchObject({ status: 'matched', slug: 'summit' });
    // A fintech filed as software in the CRM is not a different company.
    const fintech = [report('azzurro', 'Azzurro Pagamenti S.p.A.', 'Milano, Italy', 'Fintech')];
    expect(decideMatch(company('Azzurro Pagamenti', { industry: 'COMPUTER_SOFTWARE' }), fintech).status).toBe(
      'matched',
    );
  });

  it('does not let a differing city block the only candidate (offices and spellings vary)', () => {
    const decision = decideMatch(company('Quantix Systems GmbH', { country: 'DE', city: 'München' }), [
      report('quantix', 'Quantix Systems GmbH', 'Munich, Germany'),
    ]);
    expect(decision).toMatchObject({ status: 'matched', slug: 'quantix' });
  });

  it('links a name-only record to the only report with its (multi-word) name, as the issue asks', () => {
    // Deliberate: a namesake abroad would be linked here too, since nothing on the record can tell.
    const decision = decideMatch({ name: 'Nova Analytics' }, [
      report('nova', 'Nova Analytics GmbH', 'Berlin, Germany'),
    ]);
    expect(decision).toMatchObject({ status: 'matched', slug: 'nova' });
  });

  it('asks a weak name for a confirming place', () => {
    const candidates = [report('orbit', 'Orbit AB', 'Stockholm, Sweden', 'Software')];
    // One word, nothing known: a person must look.
    expect(decideMatch(company('Orbit'), candidates).status).toBe('needs_review');
    // Industry alone does not confirm a one-word name.
    expect(decideMatch(company('Orbit', { industry: 'COMPUTER_SOFTWARE' }), candidates).status).toBe(
      'needs_review',
    );
    expect(decideMatch(company('Orbit', { country: 'Sverige' }), candidates)).toMatchObject({
      status: 'matched',
    });
    expect(decideMatch(company('Orbit', { city: 'Stockholm' }), candidates)).toMatchObject({
      status: 'matched',
    });
    // Only generic words are as weak as one word.
    const generic = [report('gs', 'Global Solutions Inc.', 'Houston, TX')];
    expect(decideMatch(company('Global Solutions'), generic).status).toBe('needs_review');
    expect(decideMatch(company('Global Solutions', { country: 'USA' }), generic).status).toBe('matched');
  });
});

describe('decideMatch: several exact-name candidates', () => {
  const novas = [
    report('nova-de', 'Nova Analytics GmbH', 'Berlin, Germany', 'Software'),
    report('nova-uk', 'Nova Analytics Ltd', 'London, United Kingdom', 'Fintech'),
  ];

  it('links the one in the record country when the other is known to be elsewhere', () => {
    expect(decideMatch(company('Nova Analytics', { country: 'Germany' }), novas)).toMatchObject({
      status: 'matched',
      slug: 'nova-de',
    });
    expect(decideMatch(company('Nova Analytics Limited', { country: 'UK' }), novas)).toMatchObject({
      status: 'matched',
      slug: 'nova-uk',
    });
  });

  it('leaves them for review when the record is in neither country', () => {
    const decision = decideMatch(company('Nova Analytics', { country: 'United States' }), novas);
    expect(reviewSlugs(decision).sort()).toEqual(['nova-de', 'nova-uk']);
    expect(decision.reason).toContain('another country');
  });

  it('leaves them for review when the record has nothing to tell them apart', () => {
    const decision = decideMatch(company('Nova Analytics'), novas);
    expect(reviewSlugs(decision).sort()).toEqual(['nova-de', 'nova-uk']);
    expect(decision.reason).toContain('no country or city');
  });

  it('never chooses a namesake by industry (issue 12): sectors are coarse and shared by many companies', () => {
    const decision = decideMatch(company('Nova Analytics', { industry: 'FINANCIAL_SERVICES' }), novas);
    expect(reviewSlugs(decision).sort()).toEqual(['nova-de', 'nova-uk']);
    if (decision.status === 'needs_review') {
      expect(decision.candidates.find((c) => c.slug === 'nova-uk')?.why).toContain('same industry');
    }
    expect(decideMatch(company('Nova Analytics', { industry: 'COMPUTER_SOFTWARE' }), novas).status).toBe(
      'needs_review',
    );
  });

  it('never chooses a namesake by the domain ending (issue 12), but shows it', () => {
    const decision = decideMatch(company('Nova Analytics', { domain: 'nova-analytics.de' }), novas);
    expect(reviewSlugs(decision).sort()).toEqual(['nova-de', 'nova-uk']);
    if (decision.status === 'needs_review') {
      expect(decision.candidates.find((c) => c.slug === 'nova-de')?.why).toContain("record's domain ends");
    }
  });

  it('shows a legal form used in one country only as a hint, never a decision', () => {
    const decision = decideMatch(company('Nova Analytics B.V.'), [
      report('nova-nl', 'Nova Analytics', 'Amsterdam, Netherlands'),
      report('nova-se', 'Nova Analytics', 'Stockholm, Sweden'),
    ]);
    expect(reviewSlugs(decision).sort()).toEqual(['nova-nl', 'nova-se']);
    if (decision.status === 'needs_review') {
      expect(decision.candidates.find((c) => c.slug === 'nova-nl')?.why).toContain('legal form');
    }
  });

  it('does not set aside a namesake whose geography is unknown', () => {
    const decision = decideMatch(company('Nova Analytics', { country: 'Germany' }), [
      report('nova-de', 'Nova Analytics GmbH', 'Berlin, Germany'),
      report('nova-x', 'Nova Analytics', 'Remote'),
    ]);
    expect(decision.status).toBe('needs_review');
  });

  it('needs something confirming the one that remains once the others are set aside', () => {
    const candidates = [
      report('nova-uk', 'Nova Analytics Ltd', 'London, United Kingdom'),
      report('nova-x', 'Nova Analytics', 'Remote'),
    ];
    // The UK one differs; the other is unknown and nothing confirms it.
    expect(decideMatch(company('Nova Analytics', { country: 'Germany' }), candidates).status).toBe(
      'needs_review',
    );
    // An industry that agrees does not confirm it (issue 12): only the record's own place does.
    const withIndustry = [candidates[0]!, { ...candidates[1]!, industry: 'Software' }];
    expect(
      decideMatch(
        company('Nova Analytics', { country: 'Germany', industry: 'COMPUTER_SOFTWARE' }),
        withIndustry,
      ).status,
    ).toBe('needs_review');
  });

  it('tells namesakes in one country apart by city, only when every other city is known', () => {
    const vertex = [
      report('vertex-muc', 'Vertex Robotics GmbH', 'Munich, Germany'),
      report('vertex-ham', 'Vertex Robotics GmbH', 'Hamburg, Germany'),
    ];
    expect(decideMatch(company('Vertex Robotics', { country: 'DE', city: 'Hamburg' }), vertex)).toMatchObject(
      {
        status: 'matched',
        slug: 'vertex-ham',
      },
    );
    expect(decideMatch(company('Vertex Robotics', { country: 'DE', city: 'Stuttgart' }), vertex).status).toBe(
      'needs_review',
    );
    const oneUnknown = [vertex[0]!, report('vertex-de', 'Vertex Robotics', 'Germany')];
    expect(
      decideMatch(company('Vertex Robotics', { country: 'DE', city: 'Munich' }), oneUnknown).status,
    ).toBe('needs_review');
  });

  it('lists the same-name candidates before close ones', () => {
    const decision = decideMatch(company('Nova Analytics'), [
      report('close', 'Nova Analytica', 'Porto, Portugal'),
      ...novas,
    ]);
    const slugs = reviewSlugs(decision);
    expect(slugs.slice(0, 2).sort()).toEqual(['nova-de', 'nova-uk']);
    expect(slugs[2]).toBe('close');
  });
});

describe('decideMatch: no exact-name candidate', () => {
  it.each([
    ['words added', 'Acme Robotics', 'Acme Robotic Systems', 'words added'],
    ['a typo', 'Halycon Biosciences', 'Halcyon Biosciences plc', 'spelling'],
    ['spacing', 'Blue Wave Energy', 'Bluewave Energy Ltd', 'spacing'],
    ['word order', 'Berg & Hansen', 'Hansen & Berg', 'order'],
    ['initials', 'IFE', 'International Freight Exchange Corp.', 'initials'],
    ['a plural', 'Greenvale Dairies', 'Greenvale Dairy', 'spelling'],
  ])('keeps a candidate differing by %s for review, never links it', (_what, name, candidateName, why) => {
    const decision = decideMatch(company(name, { country: 'US' }), [
      report('r', candidateName, 'Boston, MA'),
    ]);
    expect(decision.status).toBe('needs_review');
    if (decision.status === 'needs_review') expect(decision.candidates[0]?.why).toContain(why);
  });

  it('drops candidates that share only common words or a different name', () => {
    const decision = decideMatch(company('Summit Logistics'), [
      report('a', 'Harbor Health', 'Phoenix, AZ'),
      report('b', 'Peak Logistics Ltd', 'Leicester, UK'),
      report('c', 'Global Logistics Partners', 'Felixstowe, UK'),
    ]);
    expect(decision).toMatchObject({ status: 'no_match' });
    expect(decision.reason).toContain('3 reports');
  });

  it('keeps a candidate sharing the distinctive word with one other word changed', () => {
    const decision = decideMatch(company('Summit Logistics'), [report('a', 'Summit Health', 'Phoenix, AZ')]);
    expect(reviewSlugs(decision)).toEqual(['a']);
  });

  it('says so when the search found nothing', () => {
    expect(decideMatch(company('Wobbleworth Toys'), [])).toEqual({
      status: 'no_match',
      reason: 'the search found no reports',
    });
  });

  it('mentions a domain that spells a candidate', () => {
    const decision = decideMatch(company('Acme Robotic Systems', { domain: 'www.acme-robotics.com' }), [
      report('r', 'Acme Robotics', 'Cleveland, OH'),
    ]);
    expect(decision.status).toBe('needs_review');
    if (decision.status === 'needs_review') expect(decision.candidates[0]?.why).toContain('domain');
  });

  it('caps the review list and says how many were left out', () => {
    const candidates = Array.from({ length: MAX_REVIEW_CANDIDATES + 3 }, (_, i) =>
      report(`acme-${i}`, `Acme ${['Foods', 'Bank', 'Mining', 'Labs', 'Air'][i % 5]} ${i}`),
    );
    const decision = decideMatch(company('Acme'), candidates);
    expect(reviewSlugs(decision)).toHaveLength(MAX_REVIEW_CANDIDATES);
    expect(decision.reason).toContain('3 more not shown');
  });
});

describe('decideMatch: records that cannot be matched', () => {
  const candidates = [report('inc', 'Inc Magazine'), report('na', 'NA Holdings')];
  it.each([
    [null, 'no name'],
    ['', 'no name'],
    ['   ', 'no name'],
    ['!!!', 'no letters or digits'],
    ['N/A', 'placeholder'],
    ['Unknown', 'placeholder'],
    ['Test Company Ltd', 'placeholder'],
  ])('%j -> no_match (%s)', (name, reason) => {
    const decision = decideMatch({ name }, candidates);
    expect(decision.status).toBe('no_match');
    expect(decision.reason).toContain(reason);
  });

  it('counts a report listed twice once', () => {
    const twice = [report('acme', 'Acme Robotics'), report('acme', 'Acme Robotics')];
    expect(decideMatch(company('Acme Robotics'), twice)).toMatchObject({ status: 'matched', slug: 'acme' });
  });
});

describe('decideMatch: properties', () => {
  const names = fc.constantFrom(
    'Nova Analytics',
    'Nova Analytics GmbH',
    'Nova Analytica',
    'Nova',
    'Acme Robotics',
    'Acme Robotic Systems',
    'Global Solutions',
    'N/A',
    '',
    '株式会社ノヴァ',
  );
  const places = fc.constantFrom(
    null,
    'Berlin, Germany',
    'London, UK',
    'Austin, TX',
    'Remote',
    'Germany',
    'Berlin, DE',
  );
  const industries = fc.constantFrom(null, 'Software', 'Fintech', 'Food & Beverage', 'COMPUTER_SOFTWARE');
  const candidate = fc.record({
    slug: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
    name: fc.oneof(names, fc.string()),
    geography: places,
    industry: industries,
    stage: fc.constant(null),
  });
  const record = fc.record({
    name: fc.oneof(names, fc.string()),
    domain: fc.constantFrom(null, 'nova.de', 'nova.com', 'acme.co.uk'),
    industry: industries,
    country: fc.constantFrom(null, 'Germany', 'UK', 'USA', 'Narnia'),
    city: fc.constantFrom(null, 'Berlin', 'London', 'Austin'),
  });

  it('always returns a valid decision, and links only a same-name candidate it was given', () => {
    fc.assert(
      fc.property(record, fc.array(candidate, { maxLength: 8 }), (crm, candidates) => {
        const decision = decideMatch(crm, candidates);
        expect(matchDecisionSchema.safeParse(decision).success).toBe(true);
        if (decision.status === 'matched') {
          const linked = candidates.find((c) => c.slug === decision.slug);
          expect(linked).toBeDefined();
          expect(normalizeCompanyName(linked?.name)).toBe(normalizeCompanyName(crm.name));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('does not depend on the order of the candidates', () => {
    fc.assert(
      fc.property(
        record,
        fc.uniqueArray(candidate, { maxLength: 6, selector: (c) => c.slug }),
        fc.infiniteStream(fc.nat()),
        (crm, candidates, order) => {
          const shuffled = [...candidates].sort(() => (order.next().value % 3) - 1);
          const a = decideMatch(crm, candidates);
          const b = decideMatch(crm, shuffled);
          expect(b.status).toBe(a.status);
          if (a.status === 'matched' && b.status === 'matched') expect(b.slug).toBe(a.slug);
          if (a.status === 'needs_review' && b.status === 'needs_review') {
            expect(b.candidates.map((c) => c.slug).sort()).toEqual(a.candidates.map((c) => c.slug).sort());
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
