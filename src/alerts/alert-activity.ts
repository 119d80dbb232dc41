/**
 * What alert activities need from each CRM. HubSpot notes are engagements; HubSpot's notes API lists the
 * scopes `crm.objects.contacts.read` / `crm.objects.contacts.write` (developers.hubspot.com, "Activities |
 * Notes", 2026-03), so creating one needs the write scope. It is requested as an optional scope, and only when
 * an admin switches activities on and installs again with this query parameter. Salesforce Tasks need no OAuth
 * scope beyond `api`; the integration user needs the permission to create Tasks.
 */
export const HUBSPOT_NOTE_SCOPES = ['crm.objects.contacts.write'] as const;

/** `/oauth/hubspot/install?alert_notes=1` adds the note scope as an optional scope to the consent. */
export const ALERT_NOTES_INSTALL_PARAM = 'alert_notes';
