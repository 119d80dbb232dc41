import { html, type SafeHtml } from '../html.js';
import { layout, notice, problem } from './layout.js';

export function loginPage(o: { next: string; error?: string | null; notice?: string | null }): SafeHtml {
  return layout(
    { title: 'Log in' },
    html`<div class="login">
      <h1>Log in</h1>
      <p>Enter the admin token: the value of <code>ADMIN_TOKEN</code> in the connector's configuration.</p>
      ${notice(o.notice)}
      ${problem(o.error, 'login-error')}
      <form method="post" action="/admin/login" class="stack">
        <input type="hidden" name="next" value="${o.next}">
        <div class="field">
          <label for="token">Admin token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required
            ${o.error ? html`aria-invalid="true" aria-describedby="login-error"` : ''} autofocus>
        </div>
        <button type="submit">Log in</button>
      </form>
    </div>`,
  );
}

/** The longest installation id the login page looks up; anything longer is no installation of ours. */
const INSTALLATION_ID_MAX = 200;
const INSTALLATION_ID = /^[a-z]+-[A-Za-z0-9_-]+$/;

/**
 * Why a person who just installed or reconnected the app through OAuth sees this login: the callback sends
 * everyone to the admin, and a CRM admin usually does not hold the connector's token. The page is public, so
 * it shows fixed text only, and only when `installed=` names an installation that exists (`isKnown`): nothing
 * from the URL reaches it, so a link cannot put its own words on the product's page. Null for any other visit.
 */
export async function installedNotice(
  next: string,
  isKnown: (installationId: string) => Promise<boolean>,
): Promise<string | null> {
  const query = next.split('?')[1];
  if (!query) return null;
  const params = new URLSearchParams(query);
  const id = params.get('installed');
  if (!id || id.length > INSTALLATION_ID_MAX || !INSTALLATION_ID.test(id) || !(await isKnown(id)))
    return null;
  const what = params.get('reconnected') === '1' ? 'reconnected' : 'installed and connected';
  return (
    `The app is ${what}: nothing more is needed in the CRM, and report scores appear on its records as the sync runs. ` +
    "This page is the connector's own admin, for whoever runs the connector: it asks for their admin token (ADMIN_TOKEN). " +
    'Without it you can close this page.'
  );
}
