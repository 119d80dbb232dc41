import { hubspot } from '@hubspot/ui-extensions';
import { APP_URL } from './app-url.js';
import { ReportCard } from './ReportCard.js';

/**
 * The card's entry point in the HubSpot project (company record tab and sidebar). It reads the record's own
 * properties through HubSpot and sends the seller to the connector's page (HubSpot's iframe modal) to act,
 * where HubSpot's sign-in says who they are; it makes no `hubspot.fetch` call.
 */
hubspot.extend<'crm.record.tab'>(({ context, actions }) => (
  <ReportCard
    companyId={String(context.crm.objectId)}
    portalId={String(context.portal.id)}
    appUrl={APP_URL}
    readProperties={actions.fetchCrmObjectProperties}
    openModal={actions.openIframeModal}
  />
));
