import type { CrmChange, CrmConnector } from '../../crm/connector.js';
import type { BatchJob } from '../batch-job.js';
import { enrichNow } from '../enrich-now.js';
import type { CrmChangeJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';
import { judgeSlugChange } from '../slug-change-check.js';

type Change<K extends CrmChange['kind']> = Extract<CrmChange, { kind: K }>;

/** `crm-change`: one change in the CRM (from a webhook or a poll), applied to its record. */
export async function crmChange(p: Pipeline, { installationId, change }: CrmChangeJob): Promise<void> {
  const { index } = p.deps;
  const targets = await p.deps.runtime.open(installationId, { urgent: true });
  if (change.kind === 'deleted') {
    await index.forget(installationId, [change.recordId]);
    return;
  }
  const kind = change.kind;
  const single = (recordId: string, slug?: string): BatchJob => ({
    installationId,
    batchId: `change-${kind}`,
    mode: 'full',
    recordIds: [recordId],
    origin: { kind: 'crm-change', change: kind, ...(slug ? { slug } : {}) },
  });
  switch (change.kind) {
    case 'created':
      await enrichNow(p, targets, single(change.recordId));
      return;
    case 'renamed':
    case 'domainChanged':
      // Only our own link is reconsidered; a person's link stays whatever the name says.
      await enrichNow(p, targets, single(change.recordId));
      return;
    case 'slugChanged': {
      // Our own write echoed back, or an event about a value the record no longer holds: nothing to do.
      const verdict = await judgeSlugChange(index, targets.connector, installationId, change);
      if (verdict.kind !== 'person') return;
      const { known } = verdict;
      await index.dropAutoLink(installationId, change.recordId);
      // A slug set by hand is the person's link; a cleared one is told apart in the batch (plan.ts).
      await enrichNow(p, targets, single(change.recordId, change.slug ?? undefined));
      await logPersonChange(p, installationId, change, known);
      return;
    }
    case 'merged': {
      const losers = change.mergedIds.filter((id) => id !== change.mergedInto);
      // Events of the loser's report find the survivor while the link moves (merge-forwarding.ts).
      await p.mergedInto.record(installationId, losers, change.mergedInto);
      const carried = await carryLink(p, installationId, targets.connector, losers, change);
      await enrichNow(p, targets, single(change.mergedInto, carried ?? undefined));
      await index.forget(installationId, losers);
      return;
    }
  }
}

/** A person's own `report_slug` change, as the decision log keeps it: who, when the CRM says so. */
async function logPersonChange(
  p: Pipeline,
  installationId: string,
  change: Change<'slugChanged'>,
  previousSlug: string | null,
): Promise<void> {
  await p.deps.decisions.add(installationId, [
    {
      action: change.slug ? 'set' : 'clear',
      bulk: false,
      recordId: change.recordId,
      slug: change.slug,
      by: change.by ? { kind: 'crm-user', id: change.by } : { kind: 'crm', id: null },
      evidence: { previousSlug },
    },
  ]);
}

/**
 * A merge keeps the survivor's own values; when the survivor has no link and a merged-away record had one,
 * the survivor takes that link (an auto-link stays an auto-link, so undo still finds it). The slug comes
 * from the change (a CRM with a recycle bin shows the loser there) or from the index. Costs one read, and one
 * write when a link moves. Returns the slug carried over, or null.
 */
async function carryLink(
  p: Pipeline,
  installationId: string,
  connector: CrmConnector,
  losers: string[],
  change: Change<'merged'>,
): Promise<string | null> {
  const { index } = p.deps;
  const known = await index.slugsOf(installationId, losers);
  const slug = change.mergedSlug || known.find((s): s is string => Boolean(s)) || null;
  if (!slug) return null;
  const [survivor] = await connector.readCompanies([change.mergedInto]);
  if (!survivor || (typeof survivor.fields.slug === 'string' && survivor.fields.slug.trim() !== ''))
    return null;
  // Stamped as every connector write is: a CRM that echoes writes back as change events knows this one as the
  // connector's own even where the event cannot name the client that made it.
  const values = { slug, syncedAt: new Date().toISOString() };
  const [written] = await connector.writeCompanies([{ id: change.mergedInto, values }]);
  if (!written?.ok) return null;
  const autoLinked = (await index.autoLinksOf(installationId, losers)).includes(slug);
  if (autoLinked) await index.markAutoLink(installationId, change.mergedInto, slug);
  return slug;
}
