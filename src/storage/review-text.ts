/**
 * Text inside a stored review item (review-codec.ts): escaping, so that the item's separators never appear in
 * a value, and the phrase dictionary that keeps a matcher's reason short.
 */

/** Text in a review item: undefined is empty, null `~`, the empty string `%`; `%|,;~` and control characters escaped. */
export function reviewText(value: string | null | undefined): string {
  if (value === undefined) return '';
  if (value === null) return '~';
  if (value === '') return '%';
  return value.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are escaped so that they can stand for phrases
    /[%|,;~\x00-\x1f]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

export function readReviewText(part: string): string | null | undefined {
  if (part === '') return undefined;
  if (part === '~') return null;
  if (part === '%') return '';
  return part.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * What the matcher's reasons are made of (matching/decide.ts, matching/similarity.ts). A stored reason keeps
 * each as one control character, the phrase's place in this list plus one: append only, never reorder, or
 * stored items would read as other words. A reason without any of these phrases is merely stored longer.
 */
const WHY_PHRASES = [
  'same name written with different spacing',
  'same words in a different order',
  'name differs by a small spelling difference',
  'one name is the other with words added or changed',
  'one name is the initials of the other',
  'same name',
  'same ',
  'country',
  'city',
  'industry',
  'in another city',
  'in another industry',
  ', the record says ',
  ", where the record's domain ends",
  ", the record's domain ends in ",
  ", where the record's legal form is used",
  "spells the record's domain",
  '; ',
  'in ',
  'same name after transliteration to Latin letters',
  "the report's description gives this as the company's former name",
  'a namesake in another country: ',
] as const;
/** The phrases as they read in escaped text, longest first so that the longer one wins where both start. */
const ESCAPED_PHRASES = WHY_PHRASES.map((phrase, i) => ({
  text: reviewText(phrase),
  code: String.fromCharCode(i + 1),
}));
const PHRASE_PATTERN = new RegExp(
  [...ESCAPED_PHRASES]
    .sort((a, b) => b.text.length - a.text.length)
    .map((p) => p.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|'),
  'g',
);
const CODE_OF = new Map(ESCAPED_PHRASES.map((p) => [p.text, p.code]));
const PHRASE_OF = new Map(ESCAPED_PHRASES.map((p) => [p.code, p.text]));

/** A reason as stored: escaped, each phrase of the dictionary one character. */
export function packWhy(why: string | undefined): string {
  const text = reviewText(why);
  return text === '%' ? text : text.replace(PHRASE_PATTERN, (m) => CODE_OF.get(m) ?? m);
}

export function readWhy(part: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a phrase's code
  const text = part.replace(/[\x01-\x1f]/g, (c) => PHRASE_OF.get(c) ?? c);
  return readReviewText(text) ?? undefined;
}
