/**
 * The public pages a CRM marketplace listing links to (served by src/server/public-pages.ts): the setup guide
 * and the support page. Here so that the listing generators (connectors/) and the server name the same paths.
 */
export const PUBLIC_PAGE_PATHS = { setup: '/docs/setup', support: '/support' } as const;

/** The listing's support address: `support@` the APP_URL's host, on the listing and on the support page. */
export function supportEmailFor(appUrl: string): string {
  return `support@${new URL(appUrl).hostname}`;
}
