import type { LocalSystem } from '../../src/app/local-system.js';

/** Records whose CRM state differs from what the seed says it should be, described for the failure message. */
export function wrongRecords(system: LocalSystem): string[] {
  const wrong: string[] = [];
  system.seed.forEach((company, i) => {
    const r = system.crm.record(system.recordIds[i]!);
    const e = company.expected;
    const ok =
      r !== undefined &&
      ((e.status === 'matched' && r.status === 'matched' && r.slug === e.slug && r.score !== null) ||
        (e.status === 'not_published' &&
          r.status === 'not_published' &&
          r.slug === e.slug &&
          r.score === null) ||
        (e.status === 'needs_review' && r.status === 'needs_review' && r.slug === null) ||
        (e.status === 'no_match' && r.status === 'no_match' && r.slug === null));
    if (!ok) wrong.push(`${company.name}: expected ${JSON.stringify(e)}, got ${JSON.stringify(r)}`);
  });
  return wrong;
}
