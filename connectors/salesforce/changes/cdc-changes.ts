import type { CrmChange } from '../../../src/crm/connector.js';
import { salesforceField } from '../fields/field-names.js';
import { CALL_OPTIONS_CLIENT } from '../provider.js';
import type { ChangeEvent } from './pubsub/change-events.js';

/**
 * Account change events to the pipeline's changes, as the poll would have found them: a create or an undelete
 * is a new record to match; an update matters only for the fields the pipeline watches (the name, the website,
 * the slug field), and the connector's own writes are dropped here (`isOwnWrite`); a delete is a merge when the
 * record went into a survivor (its `MasterRecordId`, read by `survivorsOf`). Gap events carry no values and an
 * overflow event no ids: both ask for a catch-up by the poll, which reads what changed.
 */

export interface EventChanges {
  changes: CrmChange[];
  /** Why the poll must run now, when an event could not say everything. */
  catchUp: string | null;
}

const NAME = 'Name';
const WEBSITE = 'Website';

/** The record ids deleted by these events, for the one `survivorsOf` read a batch makes. */
export function deletedIds(events: readonly ChangeEvent[]): string[] {
  return events
    .filter((e) => e.entityName === 'Account' && e.changeType === 'DELETE')
    .flatMap((e) => e.recordIds);
}

export function changesOfEvents(
  events: readonly ChangeEvent[],
  survivors: ReadonlyMap<string, string>,
): EventChanges {
  const slugField = salesforceField('slug').salesforce;
  const changes: CrmChange[] = [];
  let catchUp: string | null = null;
  for (const event of events) {
    if (event.entityName !== 'Account') continue;
    const ids = event.recordIds;
    switch (event.changeType) {
      case 'CREATE':
      case 'UNDELETE':
      case 'GAP_CREATE':
      case 'GAP_UNDELETE':
        for (const recordId of ids) changes.push({ kind: 'created', recordId });
        break;
      case 'DELETE':
      case 'GAP_DELETE':
        for (const recordId of ids) changes.push(removal(recordId, survivors));
        break;
      case 'UPDATE':
        changes.push(...updates(event, slugField));
        break;
      default:
        // GAP_UPDATE (which fields changed is unknown), GAP_OVERFLOW (no ids), or a type of a later API version.
        break;
    }
    if (event.changeType.startsWith('GAP_') || !KNOWN.has(event.changeType)) {
      catchUp ??= `${event.changeType} event`;
    }
  }
  return { changes, catchUp };
}

const KNOWN = new Set(['CREATE', 'UPDATE', 'DELETE', 'UNDELETE']);

function removal(recordId: string, survivors: ReadonlyMap<string, string>): CrmChange {
  const survivor = survivors.get(recordId);
  return survivor
    ? { kind: 'merged', recordId, mergedInto: survivor, mergedIds: [recordId] }
    : { kind: 'deleted', recordId };
}

/**
 * Whether `changeOrigin` names the connector as the client of the call that made the change
 * (`com/salesforce/api/rest/68.0;client=report-connector`). Salesforce adds `;client=<id>` only when the call
 * set a client id in its call options, which every connector call does (api-client.ts); a person's edit has no
 * origin, or another client's.
 */
export function isOwnWrite(changeOrigin: string): boolean {
  const [, ...options] = changeOrigin.split(';');
  return options.some((option) => option.trim() === `client=${CALL_OPTIONS_CLIENT}`);
}

/**
 * Only updates are judged by their origin: the connector never creates, deletes or undeletes an Account, so
 * such an event is news for the index whoever made it.
 */
function updates(event: ChangeEvent, slugField: string): CrmChange[] {
  // The connector's own write echoed back, whatever it changed: its slug write after a merge, say, must not
  // come back as a person's slug change.
  if (isOwnWrite(event.changeOrigin)) return [];
  const changed = new Set(event.changedFields.map((f) => f.split('.')[0]));
  // An echo can come without the client part: a write by a deployment of an earlier release, whose calls name no
  // client (the bus keeps events 72 hours, across an upgrade), or by a tool that does not set the header. The
  // pipeline stamps each record it writes in a batch, so an update that carries the stamp is the connector's.
  if (changed.has(salesforceField('syncedAt').salesforce)) return [];
  const out: CrmChange[] = [];
  for (const recordId of event.recordIds) {
    if (changed.has(slugField)) {
      const value = event.values[slugField];
      out.push({
        kind: 'slugChanged',
        recordId,
        slug: typeof value === 'string' && value !== '' ? value : null,
        ...(event.commitUser ? { by: event.commitUser } : {}),
      });
    }
    if (changed.has(NAME)) out.push({ kind: 'renamed', recordId });
    if (changed.has(WEBSITE)) out.push({ kind: 'domainChanged', recordId });
  }
  return out;
}
