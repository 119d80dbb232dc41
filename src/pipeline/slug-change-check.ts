import type { CrmChange, CrmConnector } from '../crm/connector.js';
import type { LinkIndex } from '../storage/link-index.js';
import { cleanSlug } from './batch/plan.js';

/**
 * What a `report_slug` change event means, decided before anything about the record's link changes. A CRM
 * delivers change events late, more than once and out of order (CRMs document it), and the connector's own
 * writes come back as events too; only a change that is still the record's value and is not what the
 * connector last wrote is a person's. So the event is compared with the CRM's current value (one read) and
 * with the connector's own last write (the index) first:
 *
 * - `ours`: the value is the connector's own write (its auto link, or what it last wrote), echoed back;
 * - `stale`: the record holds another value now, whose own event says what happened (a reordered or
 *   repeated event about an earlier value);
 * - `gone`: the record no longer exists (its deletion event handles it);
 * - `person`: a person's change, with the slug the connector last knew.
 */
export type SlugChangeVerdict =
  | { kind: 'ours' }
  | { kind: 'stale'; current: string | null }
  | { kind: 'gone' }
  | { kind: 'person'; known: string | null };

export async function judgeSlugChange(
  index: LinkIndex,
  connector: CrmConnector,
  installationId: string,
  change: Extract<CrmChange, { kind: 'slugChanged' }>,
): Promise<SlugChangeVerdict> {
  // Our own auto link coming back: known without asking the CRM.
  const ours = await index.autoLinkOf(installationId, change.recordId);
  if (ours !== null && ours === change.slug) return { kind: 'ours' };
  const [record] = await connector.readCompanies([change.recordId]);
  if (!record) return { kind: 'gone' };
  // Compared as the batch reads a slug (trimmed; blank is none): the event carries the value as typed.
  const current = cleanSlug(record.fields.slug);
  if (current !== cleanSlug(change.slug)) return { kind: 'stale', current };
  const [known = null] = await index.slugsOf(installationId, [change.recordId]);
  // The CRM holds what the connector last wrote there (a request's or an admin's link, or a person's change
  // already taken in): nothing new.
  if (known === current) return { kind: 'ours' };
  return { kind: 'person', known };
}
