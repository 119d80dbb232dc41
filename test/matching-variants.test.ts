import { describe, expect, it } from 'vitest';
import { HUBSPOT_INDUSTRY_OPTIONS } from '../connectors/hubspot/industry-options.js';
import { SALESFORCE_INDUSTRY_PICKLIST } from '../connectors/salesforce/records/industry-picklist.js';
import { reviewCsv } from '../src/admin/csv.js';
import { reviewItemView } from '../src/admin/views/parts.js';
import { decideMatch } from '../src/matching/decide.js';
import { formerNamesIn } from '../src/matching/former-names.js';
import { ABBREVIATIONS } from '../src/matching/legal-forms.js';
import {
  junkNameKind,
  latinSpelling,
  normalizeCompanyName,
  normalizeIndustry,
} from '../src/matching/normalize.js';
import { searchPlanFor } from '../src/matching/query.js';
import { findMatch, reportMayConcern } from '../src/matching/retrieve.js';
import type { MatchCandidate, MatchCompany, MatchDecision } from '../src/matching/schemas.js';
import type { ReviewItem } from '../src/storage/review-codec.js';
import { packWhy, readWhy } from '../src/storage/review-text.js';

/*
 * The names people really keep: umlauts written either way, abbreviated common words, names in Cyrillic or
 * Greek letters, former names, and namesakes elsewhere. Every name here is invented for these tests.
 */

function report(slug: string, name: string, more: Partial<MatchCandidate> = {}): MatchCandidate {
  return { slug, name, geography: null, industry: null, stage: null, ...more };
}

function company(name: string, more: Partial<MatchCompany> = {}): MatchCompany {
  return { name, domain: null, industry: null, country: null, city: null, ...more };
}

const folded = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .match(/[a-z0-9]+/g) ?? [];

/**
 * A search as the sandbox's: every query word begins a word of the name or the description, accents folded,
 * the name's own matches first. It counts what it is asked.
 */
function service(reports: MatchCandidate[]) {
  const sent: string[] = [];
  const search = async (q: string, limit: number) => {
    expect(q).toMatch(/^[A-Za-z0-9 -]{1,120}$/);
    sent.push(q);
    const wanted = folded(q);
    return reports
      .filter((r) => {
        const words = [...folded(r.name), ...folded(r.description ?? '')];
        return wanted.every((w) => words.some((word) => word.startsWith(w)));
      })
      .slice(0, limit);
  };
  return { search, sent };
}

function whyOf(decision: MatchDecision, slug: string): string {
  if (decision.status !== 'needs_review') throw new Error(`expected needs_review, got ${decision.status}`);
  const found = decision.candidates.find((candidate) => candidate.slug === slug);
  if (found === undefined) throw new Error(`${slug} is not among the candidates`);
  return found.why;
}

describe('umlauts written either way', () => {
  it.each([
    ['Grünfelder Köhlwerk', 'Gruenfelder Koehlwerk'],
    ['Grünfelder Köhlwerk', 'Grunfelder Kohlwerk'],
    ['Mäßlinger Bau', 'Maesslinger Bau'],
    ['Brösel Lüttkamp', 'BROESEL LUETTKAMP'],
  ])('%j and %j are one name', (a, b) => {
    expect(normalizeCompanyName(a)).toBe(normalizeCompanyName(b));
  });

  it('links a record written with ae/oe/ue to the report written with umlauts, and the other way round', async () => {
    const reports = [
      report('gruenfelder', 'Grünfelder Köhlwerk GmbH', { geography: 'Kassel, Germany' }),
      report('traelmo', 'Traelmo Instruments', { geography: 'Graz, Austria' }),
    ];
    const { search } = service(reports);
    const one = await findMatch(company('Gruenfelder Koehlwerk'), search, 10);
    expect(one.decision).toMatchObject({ status: 'matched', slug: 'gruenfelder' });
    const other = await findMatch(company('Trälmo Instruments'), search, 10);
    expect(other.decision).toMatchObject({ status: 'matched', slug: 'traelmo' });
  });

  it('keeps "ae" and "oe" at the start of a word, where they are seldom umlauts', () => {
    expect(normalizeCompanyName('Aeroviq Systems')).toBe('aeroviq systems');
  });

  it('is idempotent on forms joined initials make', () => {
    for (const name of ['o e', 'A. E. Holm', 'Kuehl u e Partner']) {
      const once = normalizeCompanyName(name);
      expect(normalizeCompanyName(once)).toBe(once);
    }
  });

  it('a kept name of an earlier version still finds its report when it completes', () => {
    // Earlier versions kept "Grünfelder" as "grunfelder" and "Gruenfelder" as "gruenfelder".
    expect(reportMayConcern('gruenfelder kohlwerk', 'Grünfelder Köhlwerk')).toBe(true);
  });
});

describe('abbreviations of common words, both directions', () => {
  it.each([
    ['Vandrel Tech', 'Vandrel Technologies'],
    ['Vandrel Technology', 'Vandrel Tech.'],
    ['Ostrava Svcs.', 'Ostrava Services'],
    ['Ostrava Svc', 'Ostrava Service'],
    ['Pellwick Assoc.', 'Pellwick Associates'],
    ['Pellwick Labs', 'Pellwick Laboratory'],
    ["Corvane Int'l", 'Corvane International'],
    ['Corvane Mfg', 'Corvane Manufacturing'],
    ['Corvane Grp', 'Corvane Group'],
  ])('%j and %j are one name', (a, b) => {
    expect(normalizeCompanyName(a)).toBe(normalizeCompanyName(b));
  });

  it('maps every abbreviation to a word no other entry abbreviates further', () => {
    for (const full of Object.values(ABBREVIATIONS)) expect(ABBREVIATIONS[full]).toBeUndefined();
  });

  it('finds the report that abbreviates a word the record spells out', async () => {
    const { search, sent } = service([report('halvik', 'Halvik Payments Svcs.')]);
    const found = await findMatch(company('Halvik Payments Services'), search, 10);
    expect(found.decision).toMatchObject({ status: 'matched', slug: 'halvik' });
    expect(sent).toHaveLength(2);
  });
});

describe('names in Cyrillic or Greek letters', () => {
  it('reads them as Latin letters and leaves other scripts alone', () => {
    expect(latinSpelling('Бравол Системс')).toBe('Bravol Sistems');
    expect(latinSpelling('Ζεφυρίνα')).toBe('Zefyrina');
    expect(latinSpelling('Quillon Ltd')).toBeNull();
    expect(latinSpelling('北方科技')).toBeNull();
  });

  it('searches the Latin reading and leaves the match for review, saying why', async () => {
    const { search, sent } = service([report('bravol', 'Bravol Sistems', { geography: 'Sofia, Bulgaria' })]);
    const { decision } = await findMatch(company('Бравол Системс'), search, 10);
    expect(sent[0]).toBe('Bravol Sistems');
    expect(decision.status).toBe('needs_review');
    expect(decision.reason).toMatch(/transliterated/);
    expect(whyOf(decision, 'bravol')).toMatch(/same name after transliteration to Latin letters/);
  });

  it('links a reading only with evidence of its own: a domain that spells it and the same country', () => {
    const candidates = [report('zefyrina', 'Zefyrina', { geography: 'Athens, Greece' })];
    const strong = decideMatch(company('Ζεφυρίνα', { domain: 'zefyrina.gr', country: 'Greece' }), candidates);
    expect(strong).toMatchObject({ status: 'matched', slug: 'zefyrina' });
    const weak = decideMatch(company('Ζεφυρίνα', { country: 'Greece' }), candidates);
    expect(weak.status).toBe('needs_review');
  });

  it("has a record kept under its Cyrillic name looked at again when its report's name completes", () => {
    expect(reportMayConcern(normalizeCompanyName('Бравол Системс'), 'Bravol Sistems')).toBe(true);
    expect(reportMayConcern(normalizeCompanyName('Бравол Системс'), 'Quorwell Mining')).toBe(false);
  });

  it('costs no search for a name in a script it does not read', async () => {
    const { search, sent } = service([report('x', 'Anything')]);
    const { decision } = await findMatch(company('北方科技'), search, 10);
    expect(decision.status).toBe('no_match');
    expect(sent).toEqual([]);
  });
});

describe('former names in a report description', () => {
  it.each([
    ['Novaterm Labs is a Series B company. It was renamed from Kelbright Foods in 2019.', 'kelbright foods'],
    ['Novaterm Labs (formerly Kelbright & Sons) builds pumps.', 'kelbright and sons'],
    ['Previously operating as Kelbright Foods Ltd., Novaterm is based in Leeds.', 'kelbright foods'],
    ['Novaterm, formerly known as Kelbright Foods, is based in Leeds.', 'kelbright foods'],
  ])('reads %j', (description, former) => {
    expect(formerNamesIn(description)).toContain(former);
  });

  it('reads nothing from a description that only mentions a company', () => {
    expect(formerNamesIn('Novaterm Labs supplies Kelbright Foods and others.')).toEqual([]);
    expect(formerNamesIn(null)).toEqual([]);
  });

  it('puts the renamed report in review with that reason, after one search', async () => {
    const renamed = report('novaterm', 'Novaterm Labs', {
      description:
        'Novaterm Labs is a Series B company based in France. It was renamed from Kelbright Foods in 2019.',
    });
    const mention = report('ostwind', 'Ostwind Retail', {
      description: 'Ostwind Retail sells what Kelbright Foods makes.',
    });
    const { search, sent } = service([renamed, mention]);
    const { decision } = await findMatch(company('Kelbright Foods'), search, 10);
    expect(decision.status).toBe('needs_review');
    expect(decision.reason).toMatch(/former name/);
    expect(whyOf(decision, 'novaterm')).toMatch(/former name/);
    if (decision.status === 'needs_review') {
      expect(decision.candidates.map((c) => c.slug)).not.toContain('ostwind');
    }
    expect(sent).toHaveLength(1);
  });
});

describe('two contradictions never link', () => {
  it('leaves a namesake in another country and another industry for review, even when its place is "City, IN"', () => {
    // "Pune, IN" names no single country (India, or Indiana in the US); a Swiss record is in neither.
    const decision = decideMatch(
      company('Quellmark Foods', { country: 'Switzerland', industry: 'INSURANCE' }),
      [report('quellmark', 'Quellmark Foods', { geography: 'Pune, IN', industry: 'Logistics' })],
    );
    expect(decision.status).toBe('needs_review');
    expect(whyOf(decision, 'quellmark')).toMatch(
      /a namesake in another country: in IN\/US, the record says CH/,
    );
    expect(whyOf(decision, 'quellmark')).toMatch(/in another industry/);
  });

  it('still links the record in one of the places the geography may name', () => {
    const decision = decideMatch(company('Quellmark Foods', { country: 'India' }), [
      report('quellmark', 'Quellmark Foods', { geography: 'Pune, IN', industry: 'Logistics' }),
    ]);
    expect(decision).toMatchObject({ status: 'matched', slug: 'quellmark' });
  });
});

describe("the CRMs' industry values against the service's industry words", () => {
  it('maps every HubSpot option and every Salesforce picklist value but Other to a sector', () => {
    for (const value of HUBSPOT_INDUSTRY_OPTIONS) expect(normalizeIndustry(value), value).not.toEqual([]);
    for (const value of SALESFORCE_INDUSTRY_PICKLIST) {
      if (value !== 'Other') expect(normalizeIndustry(value), value).not.toEqual([]);
    }
  });

  const agrees = (a: string, b: string) => normalizeIndustry(a).some((s) => normalizeIndustry(b).includes(s));

  it.each([
    ['COMPUTER_SOFTWARE', 'Enterprise Software', 'Biotech'],
    ['COMPUTER_NETWORK_SECURITY', 'Cybersecurity', 'Food & Agriculture'],
    ['FINANCIAL_SERVICES', 'Fintech', 'Robotics'],
    ['BANKING', 'Fintech', 'Media'],
    ['HOSPITAL_HEALTH_CARE', 'Healthtech', 'Logistics'],
    ['PHARMACEUTICALS', 'Biotech', 'Consumer'],
    ['BIOTECHNOLOGY', 'Biotech', 'Climate'],
    ['AUTOMOTIVE', 'Mobility', 'Fintech'],
    ['LOGISTICS_AND_SUPPLY_CHAIN', 'Logistics', 'Healthtech'],
    ['INDUSTRIAL_AUTOMATION', 'Robotics', 'Media'],
    ['RENEWABLES_ENVIRONMENT', 'Climate', 'Fintech'],
    ['FARMING', 'Food & Agriculture', 'Cybersecurity'],
    ['APPAREL_FASHION', 'Consumer', 'Robotics'],
    ['ONLINE_MEDIA', 'Media', 'Biotech'],
    ['Banking', 'Fintech', 'Robotics'],
    ['Healthcare', 'Healthtech', 'Logistics'],
    ['Transportation', 'Logistics', 'Biotech'],
  ])('%s agrees with %s and differs from %s', (crm, same, other) => {
    expect(agrees(crm, same)).toBe(true);
    expect(agrees(crm, other)).toBe(false);
  });
});

describe('searches stay bounded', () => {
  const reports = [
    report('brannock', 'Brannock Harbour Freight', { geography: 'Cork, Ireland' }),
    report('selvik', 'Selvik Robotics'),
  ];

  it('makes one search when the first finds the name', async () => {
    const { search, sent } = service(reports);
    await findMatch(company('Brannock Harbour Freight Ltd'), search, 10);
    expect(sent).toHaveLength(1);
  });

  it('makes one more, and no further, when the first finds nothing acceptable', async () => {
    const { search, sent } = service(reports);
    const { decision } = await findMatch(company('Brannock Harbuor Freight'), search, 10);
    expect(sent).toHaveLength(2);
    expect(decision.status).toBe('needs_review');
    const none = service(reports);
    await findMatch(company('Wexmoor Quarrying'), none.search, 10);
    expect(none.sent).toHaveLength(2);
  });

  it.each([
    ['ops@brannockfreight.ie', 'an email address'],
    ['https://www.brannockfreight.ie/about', 'a web address'],
    ['www.brannockfreight.ie', 'a web address'],
    ['Mrs Ilse Brannock', "a person's name"],
    ['N/A', 'a placeholder'],
    [
      'Called on Monday, no answer. left a message with the office and will try again next week, see notes',
      'notes, not a name',
    ],
  ])('costs no search for %j (%s)', async (name, kind) => {
    expect(junkNameKind(name)).toBe(kind);
    const { search, sent } = service(reports);
    const { decision } = await findMatch(company(name), search, 10);
    expect(decision.status).toBe('no_match');
    expect(sent).toEqual([]);
  });

  it.each(['Mr Brannock Foods', 'Dr. Harlow Kitchens', 'MS Quellmark'])(
    'takes %j, which could be a company, for a name',
    (name) => {
      expect(junkNameKind(name)).toBeNull();
    },
  );

  it('plans at most two searches for any name', () => {
    for (const name of ["O'Harrow & Finch", 'Grünfelder Köhlwerk', 'Бравол', 'Selvik Robotics Intl']) {
      const plan = searchPlanFor(name);
      expect(plan).not.toBeNull();
      expect(plan?.fallback).not.toBe(plan?.first);
    }
  });

  it('links nothing found only by a full page of word beginnings: a namesake may be cut off', async () => {
    const target = report('gruenwald', 'Grünwald Logistics', { geography: 'Hof, Germany' });
    const many = Array.from({ length: 30 }, (_, i) => report(`gru-${i}`, `Grubach Mill ${i}`));
    const { search, sent } = service([target, ...many]);
    const { decision } = await findMatch(company('Gruenwald Logistics', { country: 'Germany' }), search, 10);
    expect(sent).toEqual(['Gruenwald Logistics', 'Gru']);
    expect(decision.status).toBe('needs_review');
    expect(decision.reason).toMatch(/came back full/);
    // The same search coming back short shows all there is: the one report of the name links.
    const few = service([target, ...many.slice(0, 5)]);
    const alone = await findMatch(company('Gruenwald Logistics', { country: 'Germany' }), few.search, 10);
    expect(alone.decision).toMatchObject({ status: 'matched', slug: 'gruenwald' });
  });
});

describe('reasons as kept for the review queue', () => {
  it('keeps the new phrases short and reads them back', () => {
    for (const why of [
      'same name after transliteration to Latin letters',
      "the report's description gives this as the company's former name",
      'same name; a namesake in another country: in DE, the record says FR',
    ]) {
      const packed = packWhy(why);
      expect(packed.length).toBeLessThan(why.length);
      expect(readWhy(packed)).toBe(why);
    }
  });
});

describe('evidence on the admin page and in the CSV', () => {
  it("shows each candidate's reason from the matcher, and nothing for an item kept without one", () => {
    const decision = decideMatch(company('Kelbright Foods', { country: 'France' }), [
      report('novaterm', 'Novaterm Labs', {
        geography: 'Lyon, France',
        description: 'Novaterm Labs (formerly Kelbright Foods) makes sensors.',
      }),
      report('kelbright-de', 'Kelbright Foods', { geography: 'Bremen, Germany' }),
    ]);
    if (decision.status !== 'needs_review') throw new Error(`expected review, got ${decision.status}`);
    const item: ReviewItem = {
      recordId: '7',
      name: 'Kelbright Foods',
      country: 'France',
      industry: null,
      at: new Date(0).toISOString(),
      candidates: decision.candidates,
    };
    const page = reviewItemView('hubspot-1', item, 'csrf').value;
    expect(page).toContain('the report&#39;s description gives this as the company&#39;s former name');
    expect(page).toContain('a namesake in another country: in DE, the record says FR');
    const csv = reviewCsv([item]);
    expect(csv).toContain("the report's description gives this as the company's former name");
    expect(csv).toContain('a namesake in another country: in DE, the record says FR');
    const older: ReviewItem = { ...item, candidates: [{ slug: 'novaterm', name: 'Novaterm Labs' }] };
    expect(reviewItemView('hubspot-1', older, 'csrf').value).toContain('Novaterm Labs');
    expect(reviewCsv([older])).toContain('novaterm');
  });
});
