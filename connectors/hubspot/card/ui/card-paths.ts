/**
 * Where the card sends a seller to act: a page of the connector, opened in HubSpot's iframe modal, where the
 * seller signs in with HubSpot before anything is changed. The card's own folder imports nothing from the rest
 * of the repository, so the connector's routes take these paths from here.
 */

export const HUBSPOT_CARD_OAUTH_PREFIX = '/oauth/hubspot-card';
export const HUBSPOT_CARD_ACT_PATH = `${HUBSPOT_CARD_OAUTH_PREFIX}/act`;
export const HUBSPOT_CARD_SIGN_IN_PATH = `${HUBSPOT_CARD_OAUTH_PREFIX}/sign-in`;
export const HUBSPOT_CARD_CALLBACK_PATH = `${HUBSPOT_CARD_OAUTH_PREFIX}/callback`;

/** The page the card opens for a company: the portal named only so that a sign-in elsewhere is refused. */
export function cardActUrl(appUrl: string, portalId: string, companyId: string): string {
  const query = new URLSearchParams({ portalId, companyId }).toString();
  return `${appUrl.replace(/\/+$/, '')}${HUBSPOT_CARD_ACT_PATH}?${query}`;
}
