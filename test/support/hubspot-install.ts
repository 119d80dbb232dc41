import type { LocalSystem } from '../../local/system.js';
import { CookieJar } from './cookie-jar.js';

/**
 * Installs the app through the real OAuth routes against the local HubSpot, as an admin would: the app's
 * install redirect, HubSpot's consent (approved at once by the stand-in), the app's callback. The installation
 * then holds an access token and a refresh token (token mode has no refresh token).
 */
export async function installThroughOAuth(system: LocalSystem): Promise<string> {
  const browser = new CookieJar();
  const install = await browser.fetch(`${system.appUrl}/oauth/hubspot/install`);
  const consentUrl = install.headers.get('location');
  if (install.status !== 302 || !consentUrl) throw new Error(`install answered ${install.status}`);
  const consent = await browser.fetch(consentUrl);
  const callbackUrl = consent.headers.get('location');
  if (consent.status !== 302 || !callbackUrl)
    throw new Error(`the consent screen answered ${consent.status}`);
  const done = await browser.fetch(callbackUrl);
  const landing = done.headers.get('location') ?? '';
  if (done.status !== 302 || !landing.startsWith('/admin?installed=')) {
    throw new Error(`the callback answered ${done.status}: ${await done.text()}`);
  }
  // The landing may say more (`&reconnected=1`): the installation is the one named by `installed`.
  const installed = new URL(landing, 'http://admin.invalid').searchParams.get('installed');
  if (!installed) throw new Error(`the callback's landing names no installation: ${landing}`);
  return installed;
}
