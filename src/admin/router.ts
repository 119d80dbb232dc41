import { Router } from 'express';
import type { AppContext } from '../app/context.js';
import type { InstallationService } from '../app/installation-service.js';

/** Placeholder until the admin page lands: answers 503 so nobody mistakes it for a working page. */
export function createAdminRouter(_ctx: AppContext, _service: InstallationService): Router {
  const router = Router();
  router.use('/admin', (_req, res) => {
    res.status(503).send('The admin page is not built yet.');
  });
  return router;
}
