import type { LocalSystem } from '../../local/system.js';

/**
 * Installs the app through the real OAuth routes against the local HubSpot, as an admin would: the app's
 * install redirect, HubSpot's consent (approved at once by the stand-in), the app's callback. The installation
 * then holds an access token and a refresh token (token mode has no refresh token).
 */
export async function installThroughOAuth(system: LocalSystem): Promise<string> {
  const install = await fetch(`${system.appUrl}/oauth/hubspot/install`, { redirect: 'manual' });
  const consentUrl = install.headers.get('location');
  if (install.status !== 302 || !consentUrl) throw new Error(`install answered ${install.status}`);
  const consent = await fetch(consentUrl, { redirect: 'manual' });
  const callbackUrl = consent.headers.get('location');
  if (consent.status !== 302 || !callbackUrl)
    throw new Error(`the consent screen answered ${consent.status}`);
  const done = await fetch(callbackUrl, { redirect: 'manual' });
  const landing = done.headers.get('location') ?? '';
  if (done.status !== 302 || !landing.startsWith('/admin?installed=')) {
    throw new Error(`the callback answered ${done.status}: ${await done.text()}`);
  }
  return decodeURIComponent(landing.slice('/admin?installed='.length));
}
