import type { LocalSystem } from '../../src/app/local-system.js';

/** Records whose CRM state differs from what the seed says it should be, described for the failure message. */
export function wrongRecords(system: LocalSystem): string[] {
  const wrong: string[] = [];
  system.seed.forEach((company, i) => {
    const record = system.hubspot.getCompany(system.recordIds[i]!);
    const p = record?.properties ?? {};
    const status = p.report_match_status ?? '';
    const slug = p.report_slug ?? '';
    const e = company.expected;
    const ok =
      (e.status === 'matched' && status === 'matched' && slug === e.slug && p.report_score !== undefined && p.report_score !== '') ||
      (e.status === 'not_published' && status === 'not_published' && slug === e.slug && !p.report_score) ||
      (e.status === 'needs_review' && status === 'needs_review' && !slug) ||
      (e.status === 'no_match' && status === 'no_match' && !slug);
    if (!ok) wrong.push(`${company.name}: expected ${JSON.stringify(e)}, got status=${status} slug=${slug}`);
  });
  return wrong;
}
