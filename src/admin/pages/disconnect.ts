import type { Router } from 'express';
import { disconnectPage, messagePage } from '../views/misc-pages.js';
import { csrf, installationId, type PageKit, send } from './kit.js';

/** Disconnecting an installation: the confirmation page and the change. */
export function addDisconnectPages(pages: Router, kit: PageKit): void {
  const { actions, overview } = kit;
  pages.get('/installations/:id/disconnect', async (req, res) => {
    const installation = await actions.installation(installationId(req));
    send(res, disconnectPage({ view: await overview.view(installation), csrfToken: csrf(res) }));
  });

  pages.post('/installations/:id/disconnect', async (req, res) => {
    const { revocation } = await actions.remove(installationId(req));
    if (revocation.outcome !== 'failed') {
      res.redirect(
        303,
        `/admin?done=${revocation.outcome === 'revoked' ? 'disconnected-revoked' : 'disconnected'}`,
      );
      return;
    }
    // Removed here but still authorised in the CRM: the admin must finish there, so say how.
    send(
      res,
      messagePage({
        title: 'Disconnected here, still authorised in the CRM',
        message: `${revocation.message} ${revocation.whatToDo}`,
        signedIn: true,
        csrfToken: csrf(res),
      }),
    );
  });
}
