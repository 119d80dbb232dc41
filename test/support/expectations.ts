import type { ExpectedOutcome } from '../../local/demo-seed.js';
import type { LocalCrmRecord, LocalSystem } from '../../local/system.js';

/** Records whose CRM state differs from what the seed says it should be, described for the failure message. */
export function wrongRecords(system: LocalSystem): string[] {
  const wrong: string[] = [];
  system.seed.forEach((company, i) => {
    const r = system.crm.record(system.recordIds[i]!);
    if (!isAsExpected(company.expected, r)) {
      wrong.push(`${company.name}: expected ${JSON.stringify(company.expected)}, got ${JSON.stringify(r)}`);
    }
  });
  return wrong;
}

/** The test oracle: whether a CRM record is in the state its seed company expects. */
export function isAsExpected(expected: ExpectedOutcome, r: LocalCrmRecord | undefined): boolean {
  if (r === undefined) return false;
  switch (expected.status) {
    case 'matched':
      return r.status === 'matched' && r.slug === expected.slug && r.score !== null;
    case 'not_published':
      return r.status === 'not_published' && r.slug === expected.slug && r.score === null;
    case 'needs_review':
    case 'no_match':
      return r.status === expected.status && r.slug === null;
  }
}
