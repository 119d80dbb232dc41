import { z } from 'zod';
import { slugDigest } from './slug-digest.js';

/**
 * Scripts that move a record off a slug (link-apply.lua, link-forget.lua) must name that slug's digest, which
 * only TypeScript computes (slug-digest.ts), while the slug itself is in Redis. So the caller says which stored
 * slug it believes each record has; the script leaves a record whose stored slug is another untouched and
 * lists it with its stored slug, and the caller sends it again knowing that slug. The first call knows none:
 * records on no slug, or staying on theirs, are written at once; a record leaving a slug takes a second call.
 */

/** How many calls a record may take before the write gives up (its slug changes under every call). */
const CALLS = 5;

/** A script's reply: its code, then record id / stored slug pairs of the records it left untouched. */
export function knownSlugsReply<const C extends readonly [string, ...string[]]>(codes: C) {
  return z.tuple([z.enum(codes)], z.string());
}

export class RecordSlugChangingError extends Error {
  readonly code = 'RECORD_SLUG_CHANGING';
  constructor(readonly recordIds: readonly string[]) {
    super(`the stored slug of ${recordIds.length} record(s) changed under ${CALLS} writes in a row`);
    this.name = 'RecordSlugChangingError';
  }
}

/** The stored slug a record is believed to have ('' for none) and its digest, as the scripts take them. */
export function knownSlugArgs(known: ReadonlyMap<string, string>, recordId: string): [string, string] {
  const slug = known.get(recordId) ?? '';
  return [slug, slug ? slugDigest(slug) : ''];
}

/**
 * Calls `run` with the entries still to write and the stored slugs learnt so far, until the script leaves none
 * untouched. Returns the script's code of the last call (`stop` codes, such as an installation gone, end at once).
 */
export async function withKnownSlugs<T extends { recordId: string }, C extends string>(
  entries: readonly T[],
  stop: readonly C[],
  run: (entries: readonly T[], known: ReadonlyMap<string, string>) => Promise<readonly [C, ...string[]]>,
): Promise<C> {
  const known = new Map<string, string>();
  let pending = entries;
  for (let call = 0; call < CALLS; call += 1) {
    const [code, ...untouched] = await run(pending, known);
    if (stop.includes(code) || untouched.length === 0) return code;
    const again = new Set<string>();
    for (let i = 0; i + 1 < untouched.length; i += 2) {
      known.set(untouched[i]!, untouched[i + 1]!);
      again.add(untouched[i]!);
    }
    pending = pending.filter((e) => again.has(e.recordId));
  }
  throw new RecordSlugChangingError([...new Set(pending.map((e) => e.recordId))]);
}
