import { isAsExpected, type LocalSystem } from '../../src/app/local-system.js';

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
