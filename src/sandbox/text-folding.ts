/**
 * Accent- and case-insensitive word splitting for the sandbox's free-text search, so that "Muller" finds
 * "Müller" and "strasse" finds "Straße". Letters without a decomposition get an explicit plain spelling.
 */

const PLAIN_SPELLING: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ł: 'l',
  þ: 'th',
  ı: 'i',
};

export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[ßæœøđłþı]/g, (c) => PLAIN_SPELLING[c] ?? c);
}

/** Folded words: runs of letters and digits; everything else separates words. */
export function foldedWords(text: string): string[] {
  return foldText(text).match(/[\p{L}\p{N}]+/gu) ?? [];
}
