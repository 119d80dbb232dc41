/**
 * Turns any company name into a `q` the service accepts: only letters, numbers, spaces and hyphens, at most
 * 120 characters. "Letters" is not defined further by the interface, so the output keeps to ASCII letters,
 * which pass under any reading. Legal suffixes are kept: whether to drop them is the matcher's decision.
 */

export const MAX_QUERY_LENGTH = 120;
export const QUERY_RULE = /^[A-Za-z0-9 -]*$/;

const LIGATURES: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  đ: 'd',
  Đ: 'D',
  ł: 'l',
  Ł: 'L',
  þ: 'th',
  Þ: 'Th',
  ı: 'i',
};

/** Folds accents and ligatures to ASCII where a plain equivalent exists. */
export function foldToAscii(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[ßæÆœŒøØđĐłŁþÞı]/g, (c) => LIGATURES[c] ?? c);
}

export function nameToQuery(name: string, maxLength = MAX_QUERY_LENGTH): string {
  const cleaned = foldToAscii(name)
    .replace(/&/g, ' and ')
    // Apostrophes join ("O'Brien" -> "OBrien") rather than split, which keeps the word searchable.
    .replace(/['\u2019`]/g, '')
    .replace(/[^A-Za-z0-9-]+/g, ' ')
    // A hyphen only means something between word characters.
    .replace(/(^|\s)-+|-+(?=\s|$)/g, ' ')
    .replace(/-{2,}/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
  if (cleaned.length <= maxLength) return cleaned;
  const cut = cleaned.slice(0, maxLength + 1);
  const lastSpace = cut.lastIndexOf(' ');
  // A single word longer than the limit has no boundary to cut at: cut it hard.
  const head = lastSpace > 0 ? cut.slice(0, lastSpace) : cleaned.slice(0, maxLength);
  return head.replace(/-+$/, '').trim();
}
