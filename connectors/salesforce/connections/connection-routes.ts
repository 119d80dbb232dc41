import { type Request, type Response, Router } from 'express';
import type { HostConfig } from '../../../src/crm/provider.js';
import type { SalesforceSettings } from '../config.js';
import { hostPolicyOf, salesforceHostProblem } from '../hosts.js';
import { SALESFORCE_OAUTH_ROUTES } from '../oauth/oauth-routes.js';
import {
  CONNECTION_ID_PATTERN,
  newConnectionSchema,
  type SalesforceConnection,
  type SalesforceConnectionStore,
} from './connections.js';

/**
 * The admin API's Salesforce connections, mounted under /admin/api behind its authentication and CSRF check:
 *
 * GET    /admin/api/salesforce/connections      -> {connections: [{id, label, consumerKey, loginUrl, createdAt,
 *                                                   installLink}]} (never a secret)
 * POST   /admin/api/salesforce/connections      body {label, consumerKey, consumerSecret, loginUrl}
 *        -> 201 {connection, installLink}: the secret stored sealed; the link is what the org's admin opens.
 *        400 SALESFORCE_HOST_NOT_ALLOWED when the login URL is not a Salesforce host (hosts.ts).
 * DELETE /admin/api/salesforce/connections/:id  -> {removed: true}; 404 SALESFORCE_CONNECTION_NOT_FOUND.
 *        Installations made through it can no longer refresh: they turn disconnected at their next refresh.
 */

export const CONNECTION_ROUTES = {
  list: '/salesforce/connections',
  one: '/salesforce/connections/:id',
} as const;

/** The admin API's error shape (`{error, code, ...}`), answered here: this module imports nothing of src/admin. */
function refuse(res: Response, status: number, code: string, error: string, details = {}): void {
  res.status(status).json({ error, code, ...details });
}

export function salesforceConnectionRoutes(
  config: HostConfig & SalesforceSettings,
  connections: SalesforceConnectionStore,
): Router {
  const router = Router();
  const installLink = (c: SalesforceConnection) =>
    `${config.appUrl}${SALESFORCE_OAUTH_ROUTES.install}?connection=${encodeURIComponent(c.id)}`;

  router.get(CONNECTION_ROUTES.list, async (_req: Request, res: Response) => {
    const all = await connections.list();
    res.json({ connections: all.map((c) => ({ ...c, installLink: installLink(c) })) });
  });

  router.post(CONNECTION_ROUTES.list, async (req: Request, res: Response) => {
    const parsed = newConnectionSchema.safeParse(req.body);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) =>
        i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message,
      );
      return refuse(res, 400, 'BAD_REQUEST', `The Salesforce connection is not valid: ${issues.join('; ')}`, {
        issues,
      });
    }
    const refused = salesforceHostProblem(parsed.data.loginUrl, hostPolicyOf(config));
    if (refused) {
      return refuse(
        res,
        400,
        'SALESFORCE_HOST_NOT_ALLOWED',
        `The Salesforce connection is not valid: its login URL is refused: ${refused}.`,
        { issues: [`loginUrl: ${refused}`] },
      );
    }
    const connection = await connections.create(parsed.data);
    res.status(201).json({ connection, installLink: installLink(connection) });
  });

  router.delete(CONNECTION_ROUTES.one, async (req: Request, res: Response) => {
    const id = String(req.params.id);
    if (!CONNECTION_ID_PATTERN.test(id) || !(await connections.remove(id))) {
      return refuse(res, 404, 'SALESFORCE_CONNECTION_NOT_FOUND', `There is no Salesforce connection ${id}.`);
    }
    res.json({ removed: true });
  });

  return router;
}
