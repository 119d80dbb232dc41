import { hubspot } from '@hubspot/ui-extensions';
import { APP_URL } from './app-url.js';
import { ReportCard } from './ReportCard.js';

/**
 * The card's entry point in the HubSpot project (company record tab and sidebar). HubSpot signs each
 * `hubspot.fetch` request, URL included; the card names its portal and user in that URL, and the connector
 * answers only such requests.
 */
hubspot.extend<'crm.record.tab'>(({ context }) => (
  <ReportCard
    companyId={String(context.crm.objectId)}
    appUrl={APP_URL}
    fetcher={hubspot.fetch}
    portalId={context.portal.id}
    userId={context.user.id}
  />
));
