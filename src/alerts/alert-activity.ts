/**
 * Alert activities (a HubSpot note, a Salesforce Task) are off by default. HubSpot notes need an optional
 * scope (connectors/hubspot/provider.ts, HUBSPOT_NOTE_SCOPES), asked for only when an admin switches activities
 * on and installs the app again through `/oauth/hubspot/install?alert_notes=1`; Salesforce Tasks need no OAuth
 * scope beyond `api`.
 */
export const ALERT_NOTES_INSTALL_PARAM = 'alert_notes';
