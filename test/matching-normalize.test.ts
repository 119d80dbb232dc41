import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LEGAL_PREFIXES, LEGAL_SUFFIXES } from '../src/matching/legal-forms.js';
import {
  cityOfGeography,
  countryFromDomain,
  domainLabel,
  isPlaceholderName,
  normalizeCity,
  normalizeCompanyName,
  normalizeCountry,
  normalizeIndustry,
  stripLegalForms,
} from '../src/matching/normalize.js';

/** Names built from the pieces the normaliser treats specially, so properties reach its branches. */
const namePieces = fc.oneof(
  fc.constantFrom(
    ...LEGAL_SUFFIXES,
    ...LEGAL_PREFIXES,
    'The',
    'the',
    '&',
    '+',
    'and',
    'Intl',
    'Centre',
    'A.',
    'B.',
    'a',
    "O'Brien",
    'Müller',
    'İstanbul',
    'ℌ',
    'ß',
    'ﬁ',
    '株式会社',
    'トヨタ',
    '주식회사',
    'ООО',
    '-',
    ',',
    '(',
    ')',
    '/',
    '.',
  ),
  fc.stringMatching(/^[A-Za-z]{1,8}$/),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
);
const nameLike = fc
  .tuple(fc.array(namePieces, { maxLength: 10 }), fc.constantFrom(' ', '', ', '))
  .map(([pieces, separator]) => pieces.join(separator));
const anyText = fc.oneof(nameLike, fc.string({ unit: 'binary', maxLength: 80 }));

describe('normalizeCompanyName', () => {
  it.each([
    // Legal forms across jurisdictions, with and without dots and spaces.
    ['Nordlicht Analytics GmbH', 'nordlicht analytics'],
    ['Nordlicht Analytics G.m.b.H.', 'nordlicht analytics'],
    ['Müller & Söhne GmbH & Co. KG', 'muller and sohne'],
    ['Müller und Söhne GmbH und Co. KG', 'muller und sohne'],
    ['Koala Kitchens Pty. Ltd.', 'koala kitchens'],
    ['Karoo Solar (Pty) Ltd', 'karoo solar'],
    ['Société Lumière S.A.S.', 'societe lumiere'],
    ['Société Lumière S. A.', 'societe lumiere'],
    ['Tulpenveld B.V.', 'tulpenveld'],
    ['Hanbit Semiconductor Co., Ltd.', 'hanbit semiconductor'],
    ['Aurora Pagos, S.A. de C.V.', 'aurora pagos'],
    ['Łódź Tekstylia Sp. z o.o.', 'lodz tekstylia'],
    ['Ørsted A/S', 'orsted'],
    ['Quillstack, Inc.', 'quillstack'],
    ['Stratos Aerospace Corporation', 'stratos aerospace'],
    ['Bengaluru Ledger Pvt. Ltd.', 'bengaluru ledger'],
    ['Selangor Digital Labs Sdn. Bhd.', 'selangor digital laboratories'],
    ['PT Nusantara Logistik Tbk', 'nusantara logistik'],
    ['ООО Ромашка', 'ромашка'],
    ['トヨタ自動車株式会社', 'トヨタ自動車'],
    ['(株)サクラ', 'サクラ'],
    ['주식회사 카카오', normalizeCompanyName('카카오')],
    // Articles, ampersands, abbreviations, initials, punctuation and case.
    ['The Lantern Group', 'lantern group'],
    ['Lantern Group, The', 'lantern group'],
    ['Smith & Rowe', 'smith and rowe'],
    ['Smith + Rowe', 'smith and rowe'],
    ['Halvorsen Intl', 'halvorsen international'],
    ["Halvorsen Int'l", 'halvorsen international'],
    ['Bexley Mfg. Co.', 'bexley manufacturing'],
    ['Riverside Data Centre', 'riverside data center'],
    ['A.K. Datawerk', 'ak datawerk'],
    ['A. K. Datawerk', 'ak datawerk'],
    ["O'Malley Cloud", 'omalley cloud'],
    ['O\u2019Malley Cloud', 'omalley cloud'],
    ['Coca-Cola', 'coca cola'],
    ['  QUILLSTACK\tINC  ', 'quillstack'],
    ['Straße Werke', 'strasse werke'],
    ['ＦＵＬＬＷＩＤＴＨ Ｃｏ', 'fullwidth'],
    ['İstanbul Yazılım A.Ş.', 'istanbul yazilim'],
  ])('%j -> %j', (name, expected) => {
    expect(normalizeCompanyName(name)).toBe(expected);
  });

  it.each([
    ['Inc.', 'inc'],
    ['The Limited', 'limited'],
    ['The', 'the'],
    ['Company', 'company'],
  ])('keeps the last word even when it is a legal form or article: %j -> %j', (name, expected) => {
    expect(normalizeCompanyName(name)).toBe(expected);
  });

  it.each([
    ['Acme Holdings', 'acme holdings'],
    ['Acme Group', 'acme group'],
    ['Acme Capital', 'acme capital'],
    ['Acme Tech', 'acme technology'],
  ])('keeps words that are part of the name, not a legal form: %j', (name, expected) => {
    expect(normalizeCompanyName(name)).toBe(expected);
  });

  it.each([
    ['Jeju Air in Hangul, which ends like the short Korean form', '제주항공'],
    ['a Japanese word ending in the one-character form', '大株'],
    ['a Russian word starting like TOV', 'Товары'],
  ])('does not cut legal forms out of words: %s', (_what, name) => {
    expect(normalizeCompanyName(name)).toBe(name.normalize('NFKD').toLowerCase().replace(/\p{M}/gu, ''));
  });

  it('is empty exactly when the name has no letters or digits', () => {
    for (const name of ['', '   ', '!!!', '-', '🚀🚀', null, undefined])
      expect(normalizeCompanyName(name)).toBe('');
    expect(normalizeCompanyName('x')).toBe('x');
    expect(normalizeCompanyName('1234')).toBe('1234');
  });

  it.each([
    ['an attached form leaving initials behind', '주식회사I/S'],
    ['an attached form at the end, leaving initials', 'A/B株式会社'],
  ])('is idempotent where a cut leaves a new word: %s', (_what, name) => {
    const once = normalizeCompanyName(name);
    expect(normalizeCompanyName(once)).toBe(once);
  });

  it('is idempotent and never throws', () => {
    fc.assert(
      fc.property(anyText, (name) => {
        const once = normalizeCompanyName(name);
        expect(normalizeCompanyName(once)).toBe(once);
        expect(once).toBe(once.trim());
        expect(once).not.toMatch(/\s{2}|[A-Z]/);
      }),
      { numRuns: 3000 },
    );
  });

  it('ignores legal forms appended to any name', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[A-Z][a-z]{3,9}$/), { minLength: 2, maxLength: 4 }),
        fc.constantFrom(
          'Inc.',
          'GmbH',
          'Pty Ltd',
          'S.A.S.',
          'B.V.',
          'Co., Ltd.',
          'GmbH & Co. KG',
          'LLC',
          'AB',
        ),
        (words, form) => {
          const name = words.join(' ');
          // Words that are themselves legal forms or articles would be stripped from the bare name too.
          fc.pre(normalizeCompanyName(name) === name.toLowerCase());
          expect(normalizeCompanyName(`${name} ${form}`)).toBe(name.toLowerCase());
        },
      ),
    );
  });
});

describe('isPlaceholderName', () => {
  it.each(['N/A', 'Unknown', 'TBD', 'Test Company', 'test', 'none'])('%j is a placeholder', (name) => {
    expect(isPlaceholderName(normalizeCompanyName(name))).toBe(true);
  });
  it.each(['Nova', 'Test Kitchen Robotics', 'Unknown Worlds Entertainment'])('%j is not', (name) => {
    expect(isPlaceholderName(normalizeCompanyName(name))).toBe(false);
  });
});

describe('stripLegalForms', () => {
  it.each([
    ['Ørsted A/S', 'Orsted'],
    ['Acme Robotics GmbH & Co. KG', 'Acme Robotics'],
    ['The Coca-Cola Company', 'Coca Cola'],
    ['Halvorsen Intl AS', 'Halvorsen Intl'],
    ['PT Astra International Tbk', 'Astra International'],
    ['Smith & Rowe LLP', 'Smith & Rowe'],
    ['Inc.', 'Inc'],
    ['', ''],
  ])('%j -> %j', (name, expected) => {
    expect(stripLegalForms(name)).toBe(expected);
  });

  it('always normalises to the same name as the original', () => {
    fc.assert(
      fc.property(nameLike, (name) => {
        expect(normalizeCompanyName(stripLegalForms(name))).toBe(normalizeCompanyName(name));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('normalizeCountry', () => {
  it.each([
    ['Germany', 'de'],
    ['DE', 'de'],
    ['Deutschland', 'de'],
    ['DEU', 'de'],
    ['Berlin, Germany', 'de'],
    ['Germany (Berlin)', 'de'],
    ['Lyon - France', 'fr'],
    ['United States', 'us'],
    ['U.S.A.', 'us'],
    ['Austin, TX', 'us'],
    ['Austin, TX, USA', 'us'],
    ['San Francisco, California', 'us'],
    ['California', 'us'],
    ['Toronto, ON', 'ca'],
    ['CA', 'ca'],
    ['Sydney, NSW', 'au'],
    ['UK', 'gb'],
    ['Belfast, Northern Ireland', 'gb'],
    ['Korea, Republic of', 'kr'],
    ['Türkiye', 'tr'],
    ['São Paulo, Brasil', 'br'],
    ['Georgia', 'ge'],
  ])('%j -> %j', (value, expected) => {
    expect(normalizeCountry(value)).toBe(expected);
  });

  it.each([
    ['Berlin, DE', 'DE is Germany or Delaware'],
    ['San Francisco, CA', 'CA is Canada or California'],
    ['Atlanta, Georgia', 'Georgia is a country or a state'],
    ['Perth, WA', 'WA is Washington or Western Australia'],
    ['Holland, Michigan', 'Holland names the Netherlands, Michigan a US state'],
    ['Remote', 'not a place'],
    ['EMEA', 'not a country'],
    ['London', 'a city alone'],
    ['', 'empty'],
  ])('%j -> null (%s)', (value) => {
    expect(normalizeCountry(value)).toBeNull();
  });

  it('never throws and returns a two-letter code or null', () => {
    fc.assert(
      fc.property(anyText, (value) => {
        const code = normalizeCountry(value);
        if (code !== null) expect(code).toMatch(/^[a-z]{2}$/);
      }),
    );
  });
});

describe('cities and domains', () => {
  it('reads the city of "City, Country" geographies only', () => {
    expect(cityOfGeography('Berlin, Germany')).toBe('berlin');
    expect(cityOfGeography('Zürich, Switzerland')).toBe('zurich');
    expect(cityOfGeography('Germany')).toBeNull();
    expect(cityOfGeography('California, USA')).toBeNull();
    expect(normalizeCity('  Zürich ')).toBe('zurich');
    expect(normalizeCity('')).toBeNull();
  });

  it.each([
    ['acme.de', 'de'],
    ['https://www.acme.co.uk/about', 'gb'],
    ['ACME.FR.', 'fr'],
    ['acme.com', null],
    ['acme.io', null],
    ['acme.co', null],
    ['localhost', null],
    ['', null],
  ])('country of domain %j -> %j', (domain, expected) => {
    expect(countryFromDomain(domain)).toBe(expected);
  });

  it('reads the first label of a domain', () => {
    expect(domainLabel('https://www.acme-robotics.com/x')).toBe('acme-robotics');
    expect(domainLabel('acme')).toBeNull();
  });
});

describe('normalizeIndustry', () => {
  it.each([
    ['COMPUTER_SOFTWARE', ['software']],
    ['Computer Hardware', ['hardware']],
    ['Fintech', ['finance', 'software']],
    ['FINANCIAL_SERVICES', ['finance']],
    ['HOSPITAL_HEALTH_CARE', ['health']],
    ['Food & Beverage', ['food']],
    ['LOGISTICS_AND_SUPPLY_CHAIN', ['logistics']],
    ['Biotech', ['biotech', 'health']],
    ['Basket weaving', []],
    ['', []],
  ])('%j -> %j', (value, expected) => {
    expect(normalizeIndustry(value)).toEqual(expected);
  });

  it('puts the vocabularies of CRMs and reports in shared sectors', () => {
    const shares = (a: string, b: string) =>
      normalizeIndustry(a).some((s) => normalizeIndustry(b).includes(s));
    expect(shares('COMPUTER_SOFTWARE', 'SaaS')).toBe(true);
    expect(shares('Finance', 'Payments')).toBe(true);
    expect(shares('MEDICAL_DEVICES', 'Healthtech')).toBe(true);
    expect(shares('FOOD_BEVERAGES', 'Agritech')).toBe(true);
    expect(shares('FOOD_BEVERAGES', 'SaaS')).toBe(false);
    expect(shares('INSURANCE', 'Logistics')).toBe(false);
  });
});

describe('names that are names of object members', () => {
  it('"Constructor" and "toString" are words like any other', () => {
    expect(normalizeCompanyName('Constructor')).toBe('constructor');
    expect(normalizeCompanyName('toString GmbH')).toBe('tostring');
  });
});
