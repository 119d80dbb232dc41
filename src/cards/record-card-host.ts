import type { AdminActions } from '../admin/admin-actions.js';
import { AdminRequestError } from '../admin/errors.js';
import type { AppContext } from '../app/context.js';
import { RecordCardError, type RecordCardHost } from '../crm/record-card.js';
import { installationId } from '../installations/store.js';

/**
 * The record card's view of the application: reads go to the installation's CRM (so a record of another
 * portal or org is never found) and to the link index and request store; decisions and requests are the
 * admin page's own (AdminActions), so both check, write and log them the same way.
 */
export function createRecordCardHost(ctx: AppContext, actions: AdminActions): RecordCardHost {
  const refused = (err: unknown): never => {
    if (err instanceof AdminRequestError) throw new RecordCardError(err.status, err.code, err.message);
    throw err;
  };
  return {
    async installationOf(crm, externalId) {
      return ctx.installations.get(installationId(crm, externalId));
    },
    async read(installationId, recordId) {
      const installation = await ctx.installations.get(installationId);
      if (!installation) return null;
      // Urgent: a person is waiting for the card, as for a webhook.
      const [record] = await ctx.runtime.connectorFor(installation, true).readCompanies([recordId]);
      if (!record) return null;
      const [review, request] = await Promise.all([
        ctx.index.reviews.item(installationId, recordId),
        ctx.requests.get(installationId, recordId),
      ]);
      return { record, review, request };
    },
    async decide(installationId, recordId, decision, by) {
      await actions.resolveReview(installationId, recordId, decision, by).catch(refused);
    },
    async request(installationId, recordId, by) {
      const outcome = await actions.requestReport(installationId, recordId, null).catch(refused);
      // A request already pending is answered as it stands: only a new one is a person's decision.
      if (!outcome.existing) {
        await ctx.decisions.add(installationId, [
          { action: 'request', bulk: false, recordId, slug: null, by, evidence: {} },
        ]);
      }
    },
  };
}
