/**
 * How close two normalised company names are, as a named kind rather than a score: the decision rules and the
 * admin page both need to say why a candidate is plausible, and a kind says that in words.
 */

export type NameSimilarity =
  /** Equal after normalisation. */
  | 'exact'
  /** Equal once spaces are ignored ("blue harbor" / "blueharbor"). */
  | 'spacing'
  /** The same words in another order. */
  | 'reordered'
  /** A small spelling difference ("robitcs" / "robotics"). */
  | 'spelling'
  /**
   * Every distinctive word of the record's name is in the candidate's, with words added or changed around
   * them ("acme robotics" / "acme robotic systems"). Not the other way round: a candidate whose one
   * distinctive word the record also has ("sao health media" for "sao stiwoundklo payments") is another
   * company that shares a word, not a spelling of this one.
   */
  | 'extends'
  /** One is the initials of the other ("ibm" / "international business machines"). */
  | 'initials'
  /**
   * The same name once the record's Cyrillic or Greek letters are read as Latin ones. Never linked on its own
   * (decide.ts): a reading letter by letter is not always how the company writes itself.
   */
  | 'transliterated'
  /** The report's description says the company was formerly called by the record's name. Never linked. */
  | 'former_name';

/** Strongest first; the order review candidates are listed in. */
export const SIMILARITY_ORDER: readonly NameSimilarity[] = [
  'exact',
  'transliterated',
  'former_name',
  'spacing',
  'reordered',
  'spelling',
  'extends',
  'initials',
];

export const SIMILARITY_WHY: Readonly<Record<NameSimilarity, string>> = {
  exact: 'same name',
  spacing: 'same name written with different spacing',
  reordered: 'same words in a different order',
  spelling: 'name differs by a small spelling difference',
  extends: 'one name is the other with words added or changed',
  initials: 'one name is the initials of the other',
  transliterated: 'same name after transliteration to Latin letters',
  former_name: "the report's description gives this as the company's former name",
};

/**
 * Words too common in company names to tell two companies apart on their own: connectives, corporate words
 * and the words that name a sector. "Acme Systems" and "Acme Solutions" share the distinctive word "acme";
 * "Global Solutions" and "Global Logistics" share nothing distinctive.
 */
export const GENERIC_WORDS: ReadonlySet<string> = new Set([
  'and',
  'of',
  'for',
  'de',
  'del',
  'des',
  'du',
  'la',
  'le',
  'les',
  'der',
  'die',
  'das',
  'und',
  'et',
  'group',
  'holding',
  'holdings',
  'international',
  'global',
  'worldwide',
  'technologies',
  'technology',
  'tech',
  'systems',
  'system',
  'solutions',
  'services',
  'service',
  'partners',
  'capital',
  'ventures',
  'laboratories',
  'industries',
  'enterprises',
  'consulting',
  'software',
  'digital',
  'networks',
  'management',
  'trading',
  'products',
  'brands',
  'studio',
  'studios',
  'media',
  'ai',
  'io',
  'analytics',
  'data',
  'health',
  'healthcare',
  'medical',
  'bio',
  'biosciences',
  'therapeutics',
  'pharma',
  'energy',
  'power',
  'solar',
  'logistics',
  'freight',
  'shipping',
  'transport',
  'foods',
  'food',
  'finance',
  'financial',
  'payments',
  'insurance',
  'bank',
  'robotics',
  'security',
  'games',
  'learning',
  'education',
  'travel',
  'retail',
  'properties',
  'property',
  'construction',
  'engineering',
  'manufacturing',
  'consultants',
  'design',
  'marketing',
  // Words companies in any country put after their name; they tell no company apart.
  'labs',
  'lab',
  'cloud',
  'dynamics',
  'mobility',
  'materials',
  'instruments',
  'genomics',
  'diagnostics',
  'aerospace',
  'agritech',
  'fintech',
  'innovation',
  'innovations',
  'research',
  'network',
  'applied',
]);

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), stopping past `limit`. */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  const x = [...a];
  const y = [...b];
  if (Math.abs(x.length - y.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i += 1) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= y.length; j += 1) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        value = Math.min(value, before[j - 2]! + 1);
      }
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[y.length]!;
}

/** Spelling slack allowed for a word or name of this many characters: none below 5, then 1, then 2 from 10. */
export function spellingSlack(length: number): number {
  if (length < 5) return 0;
  return length < 10 ? 1 : 2;
}

/** Two words that are the same word give or take a plural or a typo. */
export function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  if (`${a}s` === b || `${b}s` === a || `${a}es` === b || `${b}es` === a) return true;
  if (`${a.slice(0, -1)}ies` === b && a.endsWith('y')) return true;
  if (`${b.slice(0, -1)}ies` === a && b.endsWith('y')) return true;
  const slack = spellingSlack(Math.min([...a].length, [...b].length));
  return slack > 0 && editDistance(a, b, slack) <= slack;
}

function distinctive(tokens: readonly string[]): string[] {
  return tokens.filter((token) => !GENERIC_WORDS.has(token));
}

function coveredBy(words: readonly string[], other: readonly string[]): boolean {
  return words.every((word) => other.some((candidate) => sameWord(word, candidate)));
}

function initials(tokens: readonly string[]): string {
  return tokens
    .filter((token) => token !== 'and' && token !== 'of' && token !== 'the')
    .map((token) => [...token][0] ?? '')
    .join('');
}

/**
 * The strongest way a candidate's normalised name `b` resembles the record's normalised name `a`, or null
 * when it does not resemble it closely enough to show an admin. Not symmetric: see `extends`.
 */
export function compareNames(a: string, b: string): NameSimilarity | null {
  if (a === '' || b === '') return null;
  if (a === b) return 'exact';
  const aTokens = a.split(' ');
  const bTokens = b.split(' ');
  if (a.replace(/ /g, '') === b.replace(/ /g, '')) return 'spacing';
  if (aTokens.length === bTokens.length && [...aTokens].sort().join(' ') === [...bTokens].sort().join(' ')) {
    return 'reordered';
  }
  const slack = spellingSlack(Math.min([...a].length, [...b].length));
  if (slack > 0 && editDistance(a, b, slack) <= slack) return 'spelling';
  if (
    aTokens.length === bTokens.length &&
    aTokens.every((token, i) => sameWord(token, bTokens[i]!)) &&
    distinctive(aTokens).length > 0
  ) {
    return 'spelling';
  }
  const aDistinctive = distinctive(aTokens);
  const bDistinctive = distinctive(bTokens);
  // The record's distinctive words may sit among the candidate's common ones ("robotic" in "acme robotics").
  if (aDistinctive.length > 0 && bDistinctive.length > 0 && coveredBy(aDistinctive, bTokens)) {
    return 'extends';
  }
  const [short, long] = aTokens.length <= bTokens.length ? [aTokens, bTokens] : [bTokens, aTokens];
  if (short.length === 1 && long.length >= 2 && [...short[0]!].length >= 2 && short[0] === initials(long)) {
    return 'initials';
  }
  return null;
}
