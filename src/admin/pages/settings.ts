import type { Router } from 'express';
import { badRequest } from '../errors.js';
import { reportKeyBodySchema } from '../schemas.js';
import { installationPath } from '../views/format.js';
import { changeOf, installationId, type PageKit } from './kit.js';

/** An installation's settings forms: its report key, a sync, alert activities, a preview, fixture writes, approval. */
export function addSettingsForms(pages: Router, kit: PageKit): void {
  const { actions } = kit;
  const change = changeOf(kit.installationPages);
  pages.post(
    '/installations/:id/key',
    change('key', async (req, id) => {
      const parsed = reportKeyBodySchema.safeParse(req.body ?? {});
      if (!parsed.success) throw badRequest(parsed.error, 'The key');
      const result = await actions.setReportKey(id, parsed.data.apiKey);
      return installationPath(id, `?done=${result.resumedRunId ? 'key-saved-resumed' : 'key-saved'}#key`);
    }),
  );

  pages.post(
    '/installations/:id/key/server',
    change('key', async (_req, id) => {
      const result = await actions.useServerKey(id);
      return installationPath(id, `?done=${result.resumedRunId ? 'key-server-resumed' : 'key-server'}#key`);
    }),
  );

  pages.post(
    '/installations/:id/sync',
    change('sync', async (req, id) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const { joined } = await actions.startSync(id, body.full === 'true');
      return installationPath(id, `?done=${joined ? 'sync-joined' : 'sync-started'}#runs`);
    }),
  );

  pages.post(
    '/installations/:id/alert-activity',
    change('alerts', async (req, id) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const on = body.on === 'true';
      await actions.setAlertActivity(id, on);
      return installationPath(id, `?done=${on ? 'alert-activity-on' : 'alert-activity-off'}#alerts`);
    }),
  );
  pages.post(
    '/installations/:id/preview',
    change('preview', async (_req, id) => {
      await actions.startPreview(id);
      return installationPath(id, '?done=preview-started#preview');
    }),
  );

  pages.post(
    '/installations/:id/fixture-writes',
    change('fixtures', async (req, id) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const allow = body.allow === 'true';
      await actions.setAllowFixtureWrites(id, allow);
      return installationPath(id, `?done=${allow ? 'fixture-writes-allowed' : 'fixture-writes-refused'}`);
    }),
  );

  pages.post('/installations/:id/approve', async (req, res) => {
    const id = installationId(req);
    await actions.approve(id);
    res.redirect(303, installationPath(id, '?done=approved#runs'));
  });
}
