import type { CompanyRecord } from '../crm/connector.js';
import type { MatchStatus } from '../fields.js';
import type { InstallationRuntime } from '../pipeline/runtime.js';

/**
 * The Links page's search by name. The connector keeps no names of linked records, so the CRM is asked for
 * records whose name holds the query (at most NAME_SEARCH_LIMIT) and the answer is cut to those the index has in
 * the list's status. The CRM's order is kept; paging is the caller's.
 */

/** Names asked of the CRM per search: one search page on either CRM, and a bound on the admin's wait. */
export const NAME_SEARCH_LIMIT = 100;

export type NameSearch =
  | { kind: 'found'; records: { recordId: string; name: string | null }[]; capped: boolean }
  | { kind: 'unavailable'; sentence: string };

export interface NameSearchDeps {
  runtime: Pick<InstallationRuntime, 'open'>;
  index: {
    statusesOf(installationId: string, recordIds: readonly string[]): Promise<(MatchStatus | null)[]>;
  };
}

export async function searchByName(
  deps: NameSearchDeps,
  installationId: string,
  status: MatchStatus,
  query: string,
): Promise<NameSearch> {
  let connector: Awaited<ReturnType<InstallationRuntime['open']>>['connector'];
  try {
    // A preview handle opens a pending installation too, and can never write.
    ({ connector } = await deps.runtime.open(installationId, { urgent: true, preview: true }));
  } catch {
    return {
      kind: 'unavailable',
      sentence: 'Names cannot be searched now: the installation is not connected to its CRM.',
    };
  }
  if (!connector.findByName) {
    return {
      kind: 'unavailable',
      sentence: 'This CRM offers no search by name: search by record id or slug.',
    };
  }
  let found: CompanyRecord[];
  try {
    found = await connector.findByName(query, NAME_SEARCH_LIMIT);
  } catch {
    return { kind: 'unavailable', sentence: 'The CRM did not answer the search by name: try again later.' };
  }
  const statuses = await deps.index.statusesOf(
    installationId,
    found.map((r) => r.id),
  );
  const seen = new Set<string>();
  const records = found.flatMap((r, i) => {
    if (statuses[i] !== status || seen.has(r.id)) return [];
    seen.add(r.id);
    return [{ recordId: r.id, name: r.name }];
  });
  return { kind: 'found', records, capped: found.length >= NAME_SEARCH_LIMIT };
}
