import { z } from 'zod';
import type { CrmChange } from '../../../src/crm/connector.js';
import { HubSpotPayloadError } from '../errors.js';
import { hubspotField } from '../fields/field-names.js';
import { HUBSPOT_COMPANY_OBJECT_TYPE_ID, HUBSPOT_WEBHOOK } from '../provider.js';

/**
 * HubSpot webhook bodies: a JSON array of at most 100 events. Companies arrive either in the per-object format
 * (`company.propertyChange`) or, for subscriptions declared as `object.*` in the project's webhooks component,
 * in the generic format (`object.propertyChange` with `objectTypeId` "0-2"); both mean the same here.
 * Duplicates and reordering are normal: a repeated event id is dropped within the signature window
 * (freshEvents, with the application's marks), and the pipeline compares a slug event with the record's
 * current value before it acts on it (src/pipeline/slug-change-check.ts).
 */

const id = z.union([z.number(), z.string().min(1)]).transform(String);

export const hubspotEventSchema = z.looseObject({
  eventId: z.union([z.number(), z.string()]).optional(),
  subscriptionId: z.union([z.number(), z.string()]).optional(),
  portalId: id,
  appId: z.union([z.number(), z.string()]).optional(),
  occurredAt: z.number().optional(),
  subscriptionType: z.string(),
  attemptNumber: z.number().optional(),
  objectId: id,
  objectTypeId: z.string().optional(),
  propertyName: z.string().optional(),
  propertyValue: z.string().nullable().optional(),
  changeSource: z.string().optional(),
  /** Who made the change, e.g. `userId:123` for a person in the CRM (the decision log shows it). */
  sourceId: z.string().optional(),
  primaryObjectId: id.optional(),
  mergedObjectIds: z.array(id).optional(),
  newObjectId: id.optional(),
});
export type HubSpotEvent = z.infer<typeof hubspotEventSchema>;
const hubspotEventsSchema = z.array(hubspotEventSchema);

export function parseHubSpotEvents(rawBody: Buffer | string): HubSpotEvent[] {
  let json: unknown;
  try {
    json = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
  } catch {
    throw new HubSpotPayloadError('malformed_json', 'the webhook body is not JSON');
  }
  if (!Array.isArray(json))
    throw new HubSpotPayloadError('not_an_event_list', 'the webhook body is not a list of events');
  if (json.length > HUBSPOT_WEBHOOK.maxEventsPerRequest) {
    throw new HubSpotPayloadError(
      'too_many_events',
      `the webhook body holds ${json.length} events; HubSpot sends at most ${HUBSPOT_WEBHOOK.maxEventsPerRequest}`,
    );
  }
  const parsed = hubspotEventsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HubSpotPayloadError(
      'not_an_event_list',
      `event ${String(issue?.path[0] ?? '?')} is not a HubSpot event: ${issue?.path.slice(1).join('.') || 'value'} ${issue?.message ?? ''}`.trim(),
    );
  }
  return parsed.data;
}

/** `creation`, `propertyChange`, ... for a company event in either format; null for anything else. */
function companyAction(event: HubSpotEvent): string | null {
  const [scope, action] = event.subscriptionType.split('.', 2);
  if (!action) return null;
  if (scope === 'company') return action;
  if (scope === 'object' && event.objectTypeId === HUBSPOT_COMPANY_OBJECT_TYPE_ID) return action;
  return null;
}

const SLUG_PROPERTY = hubspotField('slug').hubspot;

function toChange(event: HubSpotEvent): CrmChange | null {
  const recordId = event.objectId;
  switch (companyAction(event)) {
    case 'creation':
    // A company back from the recycling bin is new to the index: handled exactly like a creation.
    case 'restore':
      return { kind: 'created', recordId };
    case 'deletion':
      return { kind: 'deleted', recordId };
    case 'propertyChange':
      if (event.propertyName === 'name') return { kind: 'renamed', recordId };
      if (event.propertyName === 'domain') return { kind: 'domainChanged', recordId };
      if (event.propertyName === SLUG_PROPERTY) {
        const value = event.propertyValue ?? '';
        return {
          kind: 'slugChanged',
          recordId,
          slug: value === '' ? null : value,
          ...(event.sourceId ? { by: event.sourceId } : {}),
        };
      }
      return null;
    case 'merge': {
      // `newObjectId` differs from `primaryObjectId` when the merge created a new record; the survivor is
      // then the new one and the primary is gone too.
      const survivor = event.newObjectId ?? event.primaryObjectId ?? recordId;
      const gone = new Set(event.mergedObjectIds ?? []);
      if (event.primaryObjectId && event.primaryObjectId !== survivor) gone.add(event.primaryObjectId);
      gone.delete(survivor);
      return { kind: 'merged', recordId, mergedInto: survivor, mergedIds: [...gone] };
    }
    default:
      return null;
  }
}

/** The id a delivery's repeat is known by (portal and event id); null for an event without an id. */
export function eventMarkId(event: HubSpotEvent): string | null {
  return event.eventId === undefined ? null : `${event.portalId}:${String(event.eventId)}`;
}

/**
 * The events of a delivery not taken in before: those whose id `unseen` names, those without an id, and each
 * id once. Returns them with the ids to mark once their changes are queued.
 */
export async function freshEvents(
  events: readonly HubSpotEvent[],
  unseen: (ids: string[]) => Promise<Set<string>>,
): Promise<{ events: HubSpotEvent[]; ids: string[] }> {
  const ids = [...new Set(events.flatMap((e) => eventMarkId(e) ?? []))];
  const fresh = await unseen(ids);
  const taken = new Set<string>();
  const out = events.filter((event) => {
    const id = eventMarkId(event);
    if (id === null) return true;
    if (!fresh.has(id) || taken.has(id)) return false;
    taken.add(id);
    return true;
  });
  return { events: out, ids: [...taken] };
}

/** The company changes in a batch of events, grouped by portal; other events are left out. */
export function toCrmChanges(events: readonly HubSpotEvent[]): Map<string, CrmChange[]> {
  const byPortal = new Map<string, CrmChange[]>();
  for (const event of events) {
    const change = toChange(event);
    if (!change) continue;
    const list = byPortal.get(event.portalId) ?? [];
    list.push(change);
    byPortal.set(event.portalId, list);
  }
  return byPortal;
}
