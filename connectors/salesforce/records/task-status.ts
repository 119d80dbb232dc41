import { z } from 'zod';
import { CrmBadRequestError } from '../../../src/crm/errors.js';
import type { TimedMemo } from '../../../src/util/timed-memo.js';
import type { Priority, SalesforceApi } from '../api/api-client.js';
import { describeFailure } from '../errors.js';
import { SALESFORCE_PROVIDER } from '../provider.js';

/**
 * The Task status that means "closed" in one org. Orgs rename and replace Task's Status values, so the value is
 * read from the TaskStatus object (`IsClosed = true`, lowest SortOrder first) rather than assumed to be
 * `Completed`. The picklist value a Task takes is the status's ApiName (its MasterLabel where ApiName is
 * empty). Kept per installation for an hour (the org's memory, org-memory.ts); dropped when Salesforce refuses
 * it (renamed since).
 */

const CLOSED_STATUS_SOQL =
  'SELECT ApiName, MasterLabel, SortOrder FROM TaskStatus WHERE IsClosed = true ORDER BY SortOrder';

const taskStatusRowsSchema = z.object({
  records: z.array(z.object({ ApiName: z.string().nullish(), MasterLabel: z.string().nullish() })),
});

/** A restricted picklist refused the value: the status was renamed or removed since it was read. */
export const REFUSED_PICKLIST_VALUE = 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST';

export function closedTaskStatus(
  api: SalesforceApi,
  priority: Priority,
  closedStatuses: TimedMemo<string>,
  installationKey: string,
): Promise<string> {
  return closedStatuses.get(installationKey, () => readClosedTaskStatus(api, priority));
}

function readClosedTaskStatus(api: SalesforceApi, priority: Priority): Promise<string> {
  return api
    .rest<unknown>(priority, { method: 'GET', url: `/query?q=${encodeURIComponent(CLOSED_STATUS_SOQL)}` })
    .then((raw) => {
      const parsed = taskStatusRowsSchema.safeParse(raw);
      const first = parsed.success
        ? parsed.data.records.map((r) => r.ApiName || r.MasterLabel).find((v): v is string => Boolean(v))
        : undefined;
      if (!first) {
        throw new CrmBadRequestError(
          'Salesforce has no closed Task status (TaskStatus with IsClosed = true)',
          SALESFORCE_PROVIDER,
          200,
          parsed.success ? {} : { cause: parsed.error },
        );
      }
      return first;
    });
}

export function isRefusedPicklistValue(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  return (
    describeFailure(cause ?? err)?.code === REFUSED_PICKLIST_VALUE ||
    describeFailure(err)?.code === REFUSED_PICKLIST_VALUE
  );
}
