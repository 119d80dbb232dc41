import type { Express } from 'express';
import { AdminActions } from '../admin/admin-actions.js';
import { oauthResultPage } from '../admin/views/oauth-result.js';
import type { AppContext } from '../app/context.js';
import type { InstallationService } from '../app/installation-service.js';
import { createRecordCardHost } from '../cards/record-card-host.js';
import { installationId } from '../installations/store.js';
import { kindOf, providers } from '../providers.js';
import { WEBHOOK_DEADLINE_MS } from './webhook-deadline.js';

/** Each CRM's OAuth install and callback, its record card and its inbound webhooks, as far as they are configured. */
export function mountCrmRoutes(app: Express, ctx: AppContext, service: InstallationService): void {
  for (const provider of providers) {
    const routers = provider.routes(ctx.config, {
      storage: ctx.stores.provider,
      states: ctx.states,
      installations: ctx.installations,
      logger: ctx.logger,
      cards: createRecordCardHost(ctx, new AdminActions(ctx, service)),
      installed: async (installation) => {
        await service.admit(installation);
      },
      crmChanged: async (externalId, changes) => {
        const id = installationId(kindOf(provider), externalId);
        const installation = await ctx.installations.get(id);
        ctx.metrics.webhookEvents.inc(
          { source: provider.kind, outcome: installation ? 'accepted' : 'unknown_portal' },
          changes.length,
        );
        if (installation?.status !== 'connected') return;
        await ctx.pipeline.enqueueCrmChanges(id, changes);
      },
      eventMarks: ctx.stores.eventMarks(kindOf(provider)),
      webhookDeadlineMs: WEBHOOK_DEADLINE_MS,
      oauthPage: (page) => oauthResultPage(page).value,
    });
    for (const router of routers) app.use(router);
  }
}
