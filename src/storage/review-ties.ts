import type { ReviewCandidate } from './review-codec.js';

/**
 * Whether a review item's first candidate is ahead of the second on the matcher's evidence, or the two are
 * tied: then nothing but a person may choose (no bulk "accept the first", no pre-selected candidate on a card).
 *
 * The evidence is what the matcher wrote as each candidate's reason (matching/decide.ts): how alike the names
 * are, then what the record's own facts say (same country, city or industry, a domain it spells, or another
 * country or city). A candidate's `score` is its report's overall score, not how well it fits the record:
 * it never tells two candidates apart. Two namesakes the record has nothing to tell apart (both "same name",
 * no country, no industry) are tied; so is a first candidate whose evidence is weaker than the second's.
 */

/** The matcher's name similarities, closest first (matching/similarity.ts's SIMILARITY_WHY, in its order). */
const SIMILARITY_PHRASES = [
  'same name',
  'same name written with different spacing',
  'same words in a different order',
  'name differs by a small spelling difference',
  'one name is the other with words added or changed',
  'one name is the initials of the other',
] as const;

/** A report published for the record's own request: the strongest fact a candidate can carry. */
const REQUESTED_PREFIX = 'published for this record';

type Tied = Pick<ReviewCandidate, 'name' | 'why'>;

function parts(why: string | undefined): string[] {
  return (why ?? '')
    .split('; ')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** How close the names are (0 = same name), or null when the reason does not say. */
function nameRank(why: string | undefined): number | null {
  for (const part of parts(why)) {
    const i = (SIMILARITY_PHRASES as readonly string[]).indexOf(part);
    if (i >= 0) return i;
  }
  return null;
}

/** The record's facts for (+) and against (-) the candidate, as its reason lists them. */
function tally(why: string | undefined): number {
  let n = 0;
  for (const part of parts(why)) {
    if (part.startsWith(REQUESTED_PREFIX)) n += 10;
    else if ((SIMILARITY_PHRASES as readonly string[]).includes(part)) continue;
    else if (part.startsWith('same ')) n += part.slice(5).split(',').length;
    else if (part === "spells the record's domain") n += 1;
    else if (part.endsWith(", where the record's domain ends")) n += 1;
    else if (part.endsWith(", where the record's legal form is used")) n += 1;
    else if (part.startsWith('in another ')) n -= 1;
    else if (part.includes(', the record says ') || part.includes(", the record's domain ends in ")) n -= 1;
  }
  return n;
}

function folded(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** True when the first candidate is not ahead of the second (see above); false with fewer than two. */
export function topTied(item: { candidates: readonly Tied[] }): boolean {
  const [a, b] = item.candidates;
  if (a === undefined || b === undefined) return false;
  const sameName = folded(a.name) === folded(b.name);
  const ra = nameRank(a.why) ?? (sameName ? nameRank(b.why) : null);
  const rb = nameRank(b.why) ?? (sameName ? nameRank(a.why) : null);
  if (ra === null || rb === null) {
    // A reason that does not say how alike the names are (kept from before reasons were written): only the
    // same name written twice is known to be a tie.
    return sameName && tally(a.why) <= tally(b.why);
  }
  if (ra !== rb) return ra > rb;
  return tally(a.why) <= tally(b.why);
}
