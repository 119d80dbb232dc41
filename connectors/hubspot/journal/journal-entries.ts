import type { CrmChange } from '../../../src/crm/connector.js';
import { HUBSPOT_COMPANY_OBJECT_TYPE_ID } from '../provider.js';
import { hubspotEventSchema, toCrmChanges } from '../webhooks/webhook-events.js';

/** What a pass over the journal found for one portal. */
export interface JournalFindings {
  /** Entries shaped like webhook events: read as the webhook receiver reads them. */
  changes: CrmChange[];
  /** Companies named by entries of any other shape: re-read and compared with what was last seen. */
  reread: string[];
}

const idOf = (v: unknown): string | null =>
  (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^\d+$/.test(v))
    ? String(v)
    : null;

/**
 * Journal entries as company changes. HubSpot's spec does not show the entries inside a journal file, so an
 * entry is taken as a webhook event when it has that shape (subscription type, object id, portal); any other
 * entry that names a company (`objectId`, with no `objectTypeId` or the company's) only says "look again".
 * Entries of other portals and other object types are left out.
 */
export function journalFindings(entries: readonly unknown[], portalId: string): JournalFindings {
  const events = [];
  const reread = new Set<string>();
  for (const entry of entries) {
    const event = hubspotEventSchema.safeParse(entry);
    if (event.success) {
      if (event.data.portalId === portalId) events.push(event.data);
      continue;
    }
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const portal = idOf(e.portalId);
    if (portal !== null && portal !== portalId) continue;
    if (e.objectTypeId !== undefined && e.objectTypeId !== HUBSPOT_COMPANY_OBJECT_TYPE_ID) continue;
    const id = idOf(e.objectId);
    if (id !== null) reread.add(id);
  }
  return { changes: toCrmChanges(events).get(portalId) ?? [], reread: [...reread] };
}
