import type { LocalSystem } from '../../local/system.js';
import { waitFor } from './wait.js';

/**
 * Resolves once the system's change stream is healthy (a worker holds it and it says it streams) and the
 * catch-up poll its start at the tip asked for has run, so that no poll lands in the tests that follow. The
 * workers pick a new installation up at their next read of the installations (ChangeStreams' `refreshMs`), so
 * this may come after the first sync's writes: the stream then holds a position from the first change it
 * delivers.
 */
export async function streaming(s: LocalSystem): Promise<void> {
  await waitFor(
    'the change stream to be healthy',
    async () => ((await s.ctx.stores.streamStates.healthy(s.installationId)) ? true : undefined),
    20_000,
    50,
  );
  await waitFor(
    'the schedule queue to hold nothing but what is scheduled',
    async () => {
      const { schedule } = await s.ctx.queues.counts();
      return schedule.waiting + schedule.active === 0 ? true : undefined;
    },
    20_000,
    50,
  );
}

/** The system's CRM records as they are now. */
export function recordsOf(s: LocalSystem) {
  return s.recordIds.map((id) => s.crm.record(id)).filter((r) => r !== undefined);
}

/**
 * A person types a linked report's slug on an Account that has none (in the local Salesforce's UI, so with no
 * client in its change event). Returns that Account's id; `linked` waits for the connector to link it.
 */
export function slugTypedByHand(s: LocalSystem): string {
  const records = recordsOf(s);
  const unmatched = records.find((r) => r.status === 'no_match' && !r.slug)!;
  const linked = records.find((r) => r.status === 'matched' && r.slug)!;
  s.salesforce!.updateAccountAsPerson(unmatched.id, { Report_Slug__c: linked.slug });
  return unmatched.id;
}

export async function linked(
  s: LocalSystem,
  recordId: string,
  what = 'the slug to link the Account',
): Promise<void> {
  await waitFor(what, () => (s.crm.record(recordId)?.status === 'matched' ? true : undefined), 10_000, 20);
}
